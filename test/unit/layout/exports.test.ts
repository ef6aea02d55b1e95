/** Every export has an importer (`test/support/export-graph.ts`): a value exported and used nowhere else is dead weight, or should be private. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { entryModules } from '../../../bin/scripts/api-report.ts';
import { exportedValues, importedNames, reExports, unusedExports } from '../../support/export-graph.ts';
import { readTree, WINGS } from '../../support/import-graph.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const aliases = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { imports: Record<string, string> }).imports;
/**
 * The modules that gather names for others and may re-export them: the wings' entries, the package's `imports` targets and
 * the sources of its public entries (`exports`).
 */
const ENTRY_MODULES = new Set([
  ...WINGS.map((wing) => `${wing}index.ts`),
  ...Object.values(aliases).map((target) => target.replace(/^\.\//, '')),
  ...entryModules(ROOT).map(({ source }) => source),
]);

/** `file: name from specifier` for each re-export of `tree` outside an entry module. */
function shims(tree: ReadonlyMap<string, string>): string[] {
  return [...tree]
    .filter(([file]) => !ENTRY_MODULES.has(file))
    .flatMap(([file, text]) => reExports(text, file).map((found) => `${file}: ${found}`));
}

/**
 * What outside code calls by name, not an import: each function's Lambda
 * entry, and the compositions (and the worker's Step Functions engine) the entries generated at synthesis call.
 */
const ENTRY_POINTS =
  /^(functions\/([a-z-]+\/(handler\.ts handler|deployed\.ts deployedHandler)|lib\/sfn\.ts sfnWorkflows)|shared\/tracing\/otel\/index\.ts deployedTracing)$/;

describe('exports', () => {
  it("every value exported outside test/ is imported somewhere (the functions' Lambda entries aside)", () => {
    const tree = readTree(ROOT, ['functions', 'shared', 'infra', 'bin', 'kit', 'test', 'examples']);
    const unused = unusedExports(tree, (path) => /^(functions|shared|infra|bin)\//.test(path), aliases).filter(
      (entry) => !ENTRY_POINTS.test(entry),
    );
    assert.deepEqual(unused, []);
  });

  it('finds exported values, and names imported statically, re-exported or destructured from import()', () => {
    assert.deepEqual(
      exportedValues(
        'export const a = 1;\nexport function b() {}\nexport class C {}\nexport type T = 1;\nexport interface I {}\nconst d = 2;',
        'x.ts',
      ),
      ['a', 'b', 'C'],
    );
    const text = "import { a, b as bee } from './m.ts';\nexport { c } from './m.ts';\nconst { d } = await import('./m.ts');";
    assert.deepEqual(
      importedNames(text, 'bin/x.ts', aliases).map((found) => `${found.from} ${found.name}`),
      ['bin/m.ts a', 'bin/m.ts b', 'bin/m.ts c', 'bin/m.ts d'],
    );
  });

  it('a planted export nobody imports is reported', () => {
    const planted = new Map([
      ['shared/m.ts', 'export const used = 1;\nexport const forgotten = 2;'],
      ['shared/n.ts', "import { used } from './m.ts';\nexport const n = used;"],
      ['test/t.ts', "import { n } from '../shared/n.ts';"],
    ]);
    assert.deepEqual(
      unusedExports(planted, (path) => path.startsWith('shared/'), aliases),
      ['shared/m.ts forgotten'],
    );
  });

  it("no re-export shims: only an entry module hands on names of another (a wing's index.ts, #tool, #tool-kit, the package's entries)", () => {
    const tree = readTree(ROOT, ['functions', 'shared', 'infra', 'bin', 'kit', 'test', 'examples']);
    assert.deepEqual(shims(tree), []);
  });

  it('a planted re-export of each kind is reported outside an entry module', () => {
    const planted = new Map([
      ['shared/a.ts', "export { b } from './b.ts';"],
      ['shared/c.ts', "export * from './b.ts';"],
      ['shared/d.ts', "import { KEY, other } from './wire.ts';\nconst own = 1;\nexport { KEY, own };\nexport const e = other;"],
      ['bin/f.ts', "export { type T as U } from './t.ts';"],
      ['shared/tasks/memory/index.ts', "export { InMemoryTaskStore } from './store.ts';"],
      ['shared/runtime/tool.ts', "export { delay } from '../delay.ts';"],
    ]);
    assert.deepEqual(shims(planted), [
      'shared/a.ts: b from ./b.ts',
      'shared/c.ts: * from ./b.ts',
      'shared/d.ts: KEY from ./wire.ts',
      'bin/f.ts: U from ./t.ts',
    ]);
  });
});
