/**
 * The README's "Calling it" snippets: each one is a file under `examples/`
 * that the README includes verbatim (after a `<!-- snippet: path -->` line),
 * and each runs to a completed task against the local stack (`npm start`
 * defaults). The TypeScript ones are also type-checked by `npm run typecheck`
 * (`examples/tsconfig.json`: a reader's project, with the DOM's `fetch` types).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every snippet the README must include, how to run it, and what its output must show. */
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
    expect: /working\n(working\n)*completed\n\[ \{ type: 'text', text: 'Computed result after 2s' \} \]/,
  },
  {
    path: 'examples/curl.sh',
    command: (path) => ['bash', [path]],
    expect: /^\{"status":"completed","result":\{"content":\[\{"type":"text","text":"Computed result after 2s"\}\]/m,
  },
];

let stack: LocalStackProcess;

before(async () => {
  stack = await startLocalStackProcess();
});

after(async () => {
  await stack?.stop();
});

describe('README "Calling it" snippets', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('the README includes every examples/ snippet verbatim, and nothing else under a snippet marker', () => {
    const included = [...readme.matchAll(/<!-- snippet: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g)].map(
      (match) => [match[1]!, match[2]!] as const,
    );
    assert.deepEqual(included.map(([path]) => path).sort(), SNIPPETS.map((snippet) => snippet.path).sort());
    for (const [path, text] of included)
      assert.equal(text, readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'), `README copy of ${path} differs from the file`);
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
