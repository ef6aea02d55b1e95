/** Every export has an importer (`test/support/export-graph.ts`): a value exported and used nowhere else is dead weight, or should be private. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { exportedValues, importedNames, unusedExports } from '../../support/export-graph.ts';
import { readTree } from '../../support/import-graph.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const aliases = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { imports: Record<string, string> }).imports;
/**
 * What outside code calls by name, not an import: each function's Lambda
 * entry, and the compositions the entries generated at synthesis call.
 */
const ENTRY_POINTS = /^functions\/[a-z-]+\/(handler\.ts handler|deployed\.ts deployedHandler)$/;

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
});
