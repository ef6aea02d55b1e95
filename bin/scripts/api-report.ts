/**
 * The package's public surface, as a report: for each entry of
 * `package.json` `exports`, every name it exports with its declaration as the
 * type checker sees it (functions' signatures, classes' public members,
 * interfaces' members, types, constants). `docs/api.md` is this report,
 * committed; `test/unit/layout/api-report.test.ts` fails while it is stale, so
 * a change to the surface is made on purpose and announced (CHANGELOG.md).
 *
 * `npx tsx bin/scripts/api-report.ts` rewrites `docs/api.md`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The report's file, from the repository root. */
export const API_REPORT = 'docs/api.md';

/** Each `exports` entry with code and the source module it is compiled from (`./dist/x.d.ts` ← `x.ts`). */
export function entryModules(root = ROOT): Array<{ entry: string; source: string }> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { types?: string }> };
  return Object.entries(manifest.exports)
    .filter((pair): pair is [string, { types: string }] => typeof pair[1] === 'object' && typeof pair[1].types === 'string')
    .map(([entry, target]) => ({ entry, source: target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts') }));
}

const FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;

/** One exported name, described as a reader of the surface needs it. */
function describe(checker: ts.TypeChecker, symbol: ts.Symbol): string {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const [declaration] = target.declarations ?? [];
  const name = symbol.getName();
  if (!declaration) return `- \`${name}\``;
  const typeOf = (member: ts.Symbol) => checker.typeToString(checker.getTypeOfSymbolAtLocation(member, declaration), declaration, FORMAT);
  const members = (type: ts.Type) =>
    checker
      .getPropertiesOfType(type)
      .filter((member) => !member.getName().startsWith('#') && !member.getName().startsWith('__'))
      .map((member) => `  - \`${member.getName()}${member.flags & ts.SymbolFlags.Optional ? '?' : ''}: ${typeOf(member)}\``);
  if (ts.isFunctionDeclaration(declaration)) {
    const signatures = checker.getSignaturesOfType(checker.getTypeOfSymbolAtLocation(target, declaration), ts.SignatureKind.Call);
    return signatures.map((signature) => `- function \`${name}${checker.signatureToString(signature, declaration, FORMAT)}\``).join('\n');
  }
  if (ts.isClassDeclaration(declaration)) {
    const type = checker.getDeclaredTypeOfSymbol(target);
    const constructors = checker
      .getSignaturesOfType(checker.getTypeOfSymbolAtLocation(target, declaration), ts.SignatureKind.Construct)
      .map((signature) => `  - \`constructor${checker.signatureToString(signature, declaration, FORMAT).replace(/: \w+(<.*>)?$/, '')}\``);
    const heritage = type.getBaseTypes()?.map((base) => ` extends \`${checker.typeToString(base)}\``) ?? [];
    return [`- class \`${name}\`${heritage.join('')}`, ...constructors, ...members(type)].join('\n');
  }
  if (ts.isInterfaceDeclaration(declaration))
    return [`- interface \`${name}\``, ...members(checker.getDeclaredTypeOfSymbol(target))].join('\n');
  if (ts.isTypeAliasDeclaration(declaration))
    return `- type \`${name} = ${checker.typeToString(checker.getDeclaredTypeOfSymbol(target), declaration, FORMAT | ts.TypeFormatFlags.InTypeAlias)}\``;
  return `- const \`${name}: ${typeOf(target)}\``;
}

/**
 * The report for the tree at `root`; `overrides` replaces files' text (a
 * test's planted export), by path from the root.
 */
export function apiReport(root = ROOT, overrides: ReadonlyMap<string, string> = new Map()): string {
  const entries = entryModules(root);
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error(`No tsconfig.json at ${root}`);
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  const byPath = new Map([...overrides].map(([path, text]) => [join(root, path), text]));
  host.readFile = (path) => byPath.get(path) ?? readFile(path);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (path, language, onError, create) =>
    byPath.has(path) ? ts.createSourceFile(path, byPath.get(path)!, language) : getSourceFile(path, language, onError, create);
  const program = ts.createProgram({ rootNames: entries.map(({ source }) => join(root, source)), options: config.options, host });
  const checker = program.getTypeChecker();
  const sections = entries.map(({ entry, source }) => {
    const file = program.getSourceFile(join(root, source));
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    if (!moduleSymbol) throw new Error(`${source} (export "${entry}") has no module`);
    const exported = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.getName().localeCompare(b.getName()));
    return [
      `## \`mcp-tasks-serverless${entry === '.' ? '' : entry.slice(1)}\``,
      '',
      `From \`${source}\`.`,
      '',
      ...exported.map((symbol) => describe(checker, symbol)),
    ].join('\n');
  });
  return [
    "# The package's public surface",
    '',
    'What a project may import from `mcp-tasks-serverless`, entry by entry: generated by `npx tsx bin/scripts/api-report.ts`',
    "from the sources and checked by `test/unit/layout/api-report.test.ts`. A change here is a change to the package's",
    'surface: say it in CHANGELOG.md (semver: a removal or an incompatible change is a major version).',
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(join(ROOT, API_REPORT), apiReport());
  console.log(`${API_REPORT} rewritten`);
}
