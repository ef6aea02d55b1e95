/**
 * The package's surface is what `docs/api.md` says (`bin/scripts/api-report.ts`):
 * an export added, removed or changed in an entry of `package.json` `exports`
 * fails here until the report is regenerated, and so announced.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { API_REPORT, apiReport, entryModules } from '../../../bin/scripts/api-report.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A project with one entry, `a.ts`, to plant exports in. */
const planted = mkdtempSync(join(tmpdir(), 'mcp-tasks-api-'));
after(() => rmSync(planted, { recursive: true, force: true }));
writeFileSync(join(planted, 'package.json'), JSON.stringify({ exports: { '.': { types: './dist/a.d.ts', default: './dist/a.js' } } }));
writeFileSync(join(planted, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', noEmit: true } }));
writeFileSync(join(planted, 'a.ts'), 'export function greet(name: string): string {\n  return name;\n}\n');

describe('the API report', () => {
  it('is the surface of every entry of package.json exports', () => {
    assert.deepEqual(
      entryModules(ROOT).map(({ entry }) => entry),
      ['.', './testing', './testing/stack', './cdk'],
    );
    const committed = readFileSync(join(ROOT, API_REPORT), 'utf8');
    assert.ok(
      apiReport(ROOT) === committed,
      `The package's surface changed: run \`npx tsx bin/scripts/api-report.ts\`, check ${API_REPORT}'s diff and say it in CHANGELOG.md`,
    );
  });

  it('changes with a planted export, and with a changed signature', () => {
    const before = apiReport(planted);
    assert.match(before, /- function `greet\(name: string\): string`/);
    const withExport = apiReport(planted, new Map([['a.ts', `${readFileSync(join(planted, 'a.ts'), 'utf8')}export const planted = 1;\n`]]));
    assert.notEqual(withExport, before);
    assert.match(withExport, /- const `planted: 1`/);
    const changed = apiReport(
      planted,
      new Map([['a.ts', 'export function greet(name: string, loud?: boolean): string {\n  return name;\n}\n']]),
    );
    assert.match(changed, /- function `greet\(name: string, loud\?: boolean\): string`/);
  });
});
