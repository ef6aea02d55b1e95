/**
 * The package's version, as `serverInfo` names it. A constant rather than an
 * import of `package.json`: a bundle would carry the whole manifest
 * (dependencies and scripts included). `test/unit/layout/version.test.ts`
 * holds it equal to `package.json`'s `version`.
 */
export const PACKAGE_VERSION = '0.1.0';
