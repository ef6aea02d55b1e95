/**
 * The commands `npm start` prints work as printed: the Inspector one (the
 * pinned `@modelcontextprotocol/inspector` 2.x, run by the project's Node 22
 * through `npm run inspector`) on a fresh machine — an empty HOME and npm
 * cache, so nothing is fetched or remembered from before — and the CLI one.
 * The Inspector's `tools/call` of `long_computation` runs as a task (it declares
 * the Tasks extension and polls) to the tool's result.
 */
import assert from 'node:assert/strict';
import { exec } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let stack: LocalStackProcess;
let home: string;

before(async () => {
  stack = await startLocalStackProcess();
  home = await mkdtemp(join(tmpdir(), 'mcp-tasks-fresh-home-'));
});

after(async () => {
  await stack?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

/** The command printed after `prefix` in the stack's start-up text. */
function printed(prefix: string): string {
  const line = stack
    .output()
    .split('\n')
    .find((candidate) => candidate.trimStart().startsWith(prefix));
  assert.ok(line, `npm start printed no "${prefix}" command:\n${stack.output()}`);
  return line.trim();
}

/** Runs a shell command from the repository root with an empty HOME and npm cache. */
function shell(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, HOME: home, npm_config_cache: join(home, 'npm-cache'), npm_config_userconfig: join(home, '.npmrc') };
  return new Promise((resolve) => {
    const child = exec(command, { cwd: ROOT, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe('the commands npm start prints', () => {
  it('the Inspector command runs long_computation as a task to its result with the project Node, on an empty HOME and npm cache', {
    timeout: 150_000,
  }, async () => {
    const command = printed('npm run inspector --');
    assert.ok(command.includes(stack.url), command);
    const run = await shell(command);
    assert.equal(run.code, 0, `${command}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
    // npm prints its `> script` banner first; the Inspector's JSON follows.
    const result = JSON.parse(run.stdout.slice(run.stdout.search(/^\{/m))) as {
      content: Array<{ type: string; text: string }>;
      isError?: boolean;
    };
    assert.match(String(result.content[0]?.text), /^Computed the result in 2 s: [0-9a-f]{16}$/);
    assert.notEqual(result.isError, true);
    // It went through a task, not the synchronous path.
    assert.match(stack.output(), /"event":"task-created"[^\n]*"tool":"long_computation"/);
  });

  it("npm run inspector is the pinned Inspector 2.x on the project's Node 22 devDependency, not the machine node", {
    timeout: 60_000,
  }, async () => {
    const run = await shell('npm run -s inspector -- --version && node_modules/.bin/node --version');
    assert.equal(run.code, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.match(run.stdout, /^2\.\d+\.\d+\nv22\.\d+\.\d+\n$/);
    assert.match(await readScript(), /^node_modules\/\.bin\/node /);
  });

  it('the printed CLI command runs the task to its result', { timeout: 60_000 }, async () => {
    const command = printed('npx mcp-tasks --url');
    const run = await shell(command);
    assert.equal(run.code, 0, `${command}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.match(run.stdout, /^Computed the result in 2 s: [0-9a-f]{16}\n$/);
  });
});

async function readScript(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return pkg.scripts['inspector'] ?? '';
}
