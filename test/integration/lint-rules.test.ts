/**
 * The linter has teeth: `npm run lint` (Biome with `--error-on-warnings` and
 * the project's `biome.json`) fails on code it must never let through, planted
 * here in a scratch copy, and passes the same file without the plant.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIOME = join(ROOT, 'node_modules/.bin/biome');

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcp-tasks-lint-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Lints one file as `npm run lint` lints the tree; resolves with the exit code and the output. */
async function lint(name: string, text: string): Promise<{ code: number; output: string }> {
  const file = join(dir, name);
  await writeFile(file, text);
  return new Promise((resolve) => {
    execFile(
      BIOME,
      ['lint', '--error-on-warnings', '--vcs-enabled=false', `--config-path=${join(ROOT, 'biome.json')}`, file],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

const CLEAN = `import assert from 'node:assert/strict';
import { it } from 'node:test';

it('adds', () => {
  assert.equal(1 + 1, 2);
});
`;

describe('lint rules', () => {
  it('a clean file passes', async () => {
    const { code, output } = await lint('clean.test.ts', CLEAN);
    assert.equal(code, 0, output);
  });

  for (const [what, planted, rule] of [
    ['an unused import', `import { join } from 'node:path';\n${CLEAN}`, /noUnusedImports/],
    ['a skipped test', CLEAN.replace("it('adds'", `it.${'skip'}('adds'`), /noSkippedTests/],
    ['a focused test', CLEAN.replace("it('adds'", `it.${'only'}('adds'`), /noFocusedTests/],
    ['an unused variable', CLEAN.replace("it('adds', () => {", "it('adds', () => {\n  const unused = 1;"), /noUnusedVariables/],
  ] as const) {
    it(`${what} fails the lint`, async () => {
      const { code, output } = await lint(`planted-${what.replaceAll(' ', '-')}.test.ts`, planted);
      assert.notEqual(code, 0, `${what} passed the lint`);
      assert.match(output, rule);
    });
  }
});
