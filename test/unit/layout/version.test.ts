/** The version the server names (`shared/version.ts`) is the package's: a release that bumps one bumps the other. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PACKAGE_VERSION } from '../../../shared/version.ts';

const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('the version', () => {
  it("shared/version.ts names package.json's version", () => {
    assert.equal(PACKAGE_VERSION, manifest.version);
  });
});
