/**
 * The "Calling it" snippets: each one is a file under `examples/` that
 * `docs/clients.md` includes verbatim (after a `<!-- snippet: path -->` line),
 * as does the README for the ones it shows, and each runs to a completed
 * task against the local stack (`npm start` defaults). The TypeScript ones are
 * also type-checked by `npm run typecheck` (`examples/tsconfig.json`: a
 * reader's project, with the DOM's `fetch` types).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every snippet docs/clients.md must include, how to run it, and what its output must show. */
const SNIPPETS: Array<{ path: string; command: (path: string) => [string, string[]]; expect: RegExp }> = [
  { path: 'examples/cli.sh', command: (path) => ['bash', [path]], expect: /^Approved and done: deploy web@1\.4\.2$/m },
  {
    path: 'examples/sdk-v2-ext-tasks.ts',
    command: (path) => [process.execPath, ['--import', 'tsx', path]],
    expect: /asked: Approve: deploy web@1\.4\.2\?\ncompleted .*Approved and done: deploy web@1\.4\.2/s,
  },
  {
    path: 'examples/ext-tasks.ts',
    command: (path) => [process.execPath, ['--import', 'tsx', path]],
    expect: /^completed .*Approved and done: deploy web@1\.4\.2/s,
  },
  {
    path: 'examples/sdk-v1.ts',
    command: (path) => [process.execPath, ['--import', 'tsx', path]],
    expect: /working\n(working\n)*completed\n\[\s*\{\s*type: 'text',\s*text: 'Computed the result in 2 s: [0-9a-f]{16}'\s*\}\s*\]/,
  },
  {
    path: 'examples/curl.sh',
    command: (path) => ['bash', [path]],
    expect: /^\{"status":"completed","result":\{"content":\[\{"type":"text","text":"Computed the result in 2 s: [0-9a-f]{16}"\}\]/m,
  },
];

let stack: LocalStackProcess;

before(async () => {
  stack = await startLocalStackProcess();
});

after(async () => {
  await stack?.stop();
});

/** The snippets a page includes: each marker's path and the code block after it. */
function snippetsOf(page: string): Array<readonly [string, string]> {
  const text = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');
  const markers = text.match(/<!-- snippet: /g)?.length ?? 0;
  const included = [...text.matchAll(/<!-- snippet: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g)].map((match) => [match[1]!, match[2]!] as const);
  assert.equal(included.length, markers, `${page}: every snippet marker is followed by a code block`);
  return included;
}

function assertVerbatim(page: string, included: ReadonlyArray<readonly [string, string]>): void {
  for (const [path, text] of included)
    assert.equal(text, readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'), `${page} copy of ${path} differs from the file`);
}

describe('"Calling it" snippets', () => {
  it('docs/clients.md includes every examples/ snippet verbatim, and nothing else under a snippet marker', () => {
    const included = snippetsOf('docs/clients.md');
    assert.deepEqual(included.map(([path]) => path).sort(), SNIPPETS.map((snippet) => snippet.path).sort());
    assertVerbatim('docs/clients.md', included);
  });

  it('the README shows examples/ snippets only, verbatim', () => {
    const included = snippetsOf('README.md');
    assert.ok(included.length > 0, 'the README shows at least one snippet');
    const known = new Set(SNIPPETS.map((snippet) => snippet.path));
    for (const [path] of included) assert.ok(known.has(path), `README snippet ${path} is one of the examples/ snippets`);
    assertVerbatim('README.md', included);
  });

  for (const snippet of SNIPPETS) {
    it(`${snippet.path} runs a task to completion`, { timeout: 90_000 }, async () => {
      const [file, args] = snippet.command(snippet.path);
      const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          file,
          args,
          { cwd: ROOT, env: { ...process.env, MCP_URL: stack.url }, timeout: 80_000 },
          (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
        );
        child.stdin?.end();
      });
      assert.equal(run.code, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
      assert.match(run.stdout, snippet.expect, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    });
  }
});
