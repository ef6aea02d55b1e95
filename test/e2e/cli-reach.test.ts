/**
 * The `mcp-tasks` CLI when the endpoint is away: nothing listening (the exit
 * code of its own and the URL with the cause, after `--retry-for`), the
 * local stack (`npm start`, default settings) down when `call` starts and
 * up within the retry window, and restarting while `call` follows a task,
 * as `npm run dev` restarts it on every edit: the call completes.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TasksClient } from '../../bin/cli/client.ts';
import { type CliRun, runCli, startCli } from '../support/cli-process.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { waitFor } from '../support/wait.ts';

/** A port on 127.0.0.1 that nothing listens on (taken from the system, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function explain(run: CliRun, stack?: LocalStackProcess): string {
  const log = stack ? `\nstack log (tail):\n${stack.output().split('\n').slice(-20).join('\n')}` : '';
  return `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}${log}`;
}

describe('mcp-tasks CLI, endpoint down', () => {
  it('exits 4 with the URL and the cause once --retry-for is spent, having said it retries', { timeout: 60_000 }, async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const run = await runCli(url, ['--retry-for', '1', 'call', 'long_computation', '{"seconds":1}']);
    assert.equal(run.code, 4, explain(run));
    assert.match(run.stderr, new RegExp(`^Cannot reach ${url} \\(.*ECONNREFUSED.*\\); trying again for up to 1 s$`, 'm'));
    assert.match(run.stderr, new RegExp(`^Error: could not reach ${url}: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+$`, 'm'));
    assert.equal(run.stdout, '');
  });

  it('--retry-for 0 gives up at the first failure; a malformed --retry-for is a usage error', { timeout: 60_000 }, async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const run = await runCli(url, ['--retry-for', '0', 'get', '00000000-0000-4000-8000-000000000000']);
    assert.equal(run.code, 4, explain(run));
    assert.doesNotMatch(run.stderr, /trying again/);
    assert.match(run.stderr, /could not reach .*ECONNREFUSED/);
    const usage = await runCli(url, ['--retry-for', 'soon', 'tools']);
    assert.equal(usage.code, 2, explain(usage));
  });
});

describe('mcp-tasks CLI, local stack restarting', () => {
  let dataDir: string;
  let stack: LocalStackProcess | undefined;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-cli-reach-'));
  });
  after(async () => {
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The stack (`npm start`'s defaults) on `port` and the shared data directory, as a restart of the same stack. */
  async function startOn(port: number): Promise<LocalStackProcess> {
    stack = await startLocalStackProcess({ dataDir, env: { PORT: String(port) } });
    return stack;
  }

  it('a call made while the stack is down goes through once it is up (the first request retried)', { timeout: 240_000 }, async () => {
    const port = await closedPort();
    // A generous window: the stack may take a while to start on a busy machine.
    const call = startCli(
      `http://127.0.0.1:${port}/mcp`,
      ['--retry-for', '120', 'call', 'long_computation', '{"seconds":1,"label":"late"}'],
      {
        timeoutMs: 180_000,
      },
    );
    await waitFor('the CLI to retry', () => /trying again/.test(call.stderr()), 30_000, 50);
    const up = await startOn(port);
    const run = await call.done;
    assert.equal(run.code, 0, explain(run, up));
    assert.match(run.stdout, /^Computed late in 1 s: [0-9a-f]{16}\n$/);
    await up.stop();
  });

  it('a call following a task completes across a restart of the stack under it', { timeout: 240_000 }, async () => {
    const port = await closedPort();
    const first = await startOn(port);
    const call = startCli(first.url, ['--retry-for', '120', 'call', 'long_computation', '{"seconds":4,"label":"restart"}'], {
      timeoutMs: 180_000,
    });
    const taskId = await waitFor(
      'the task to be running',
      () => /^Task ([0-9a-f-]{36}) .*\n[\s\S]*\] working/m.exec(call.stderr())?.[1],
      30_000,
      50,
    );
    await first.stop();
    const second = await startOn(port);
    const run = await call.done;
    assert.equal(run.code, 0, explain(run, second));
    assert.match(run.stdout, /^Computed restart in 4 s: [0-9a-f]{16}\n$/);
    assert.match(run.stderr, /Cannot reach .*; trying again for up to 120 s/, 'the stack was away while the task was followed');
    assert.equal((await new TasksClient({ url: second.url }).getTask(taskId)).status, 'completed');
  });
});
