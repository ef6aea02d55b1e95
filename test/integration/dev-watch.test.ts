/**
 * `npm run dev`: the local stack under `tsx watch`, in a copy of the project.
 * An edit to a tool restarts it with the new code, and a task in flight
 * across the restart carries on and completes.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTask } from '../support/durable.ts';
import { makeSandbox, type Sandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';

const READY = /MCP endpoint ready at (http:\/\/\S+)/g;

let sandbox: Sandbox;
let dataDir: string;
let child: ChildProcess;
let output = '';
let exited: Promise<void>;

before(async () => {
  sandbox = await makeSandbox();
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-dev-'));
  const scripts = JSON.parse(await readFile(join(sandbox.root, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const [bin, ...args] = scripts['dev']!.split(' ');
  assert.equal(bin, 'tsx');
  // Its own process group, so that stopping it stops tsx watch and the stack it runs.
  child = spawn(process.execPath, [join(sandbox.root, 'node_modules/tsx/dist/cli.mjs'), ...args], {
    cwd: sandbox.root,
    detached: true,
    env: {
      ...withoutTestContext(process.env),
      PORT: '0',
      LOCAL_DATA_DIR: dataDir,
      TASKS_PROGRESS_INTERVAL_MS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  exited = new Promise((resolve) => child.once('exit', () => resolve()));
});

after(async () => {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    process.kill(-child.pid, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    // The stack itself may outlive tsx by a moment: wait for the group to be gone.
    await waitFor(
      'the process group to exit',
      () => {
        try {
          process.kill(-child.pid!, 0);
          return false;
        } catch {
          return true;
        }
      },
      15_000,
      100,
    ).catch((error: unknown) => {
      process.kill(-child.pid!, 'SIGKILL');
      throw error;
    });
  }
  await sandbox.remove();
  await rm(dataDir, { recursive: true, force: true });
});

/** The environment without the test runner's own context, which would make a child report to it. */
function withoutTestContext(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _parent, ...rest } = env;
  return rest;
}

/** The endpoint of the `n`-th start (1-based). */
const endpoint = (n: number) =>
  waitFor(
    `start ${n} of the local stack`,
    () => {
      if (/Local stack failed to start/.test(output)) throw new Error('The local stack failed to start');
      return [...output.matchAll(READY)][n - 1]?.[1];
    },
    60_000,
    50,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; it printed:\n${output}`);
  });

async function describeTool(url: string, name: string): Promise<string> {
  const { tools } = resultOf(await rpc(url, 'tools/list')) as { tools: Array<{ name: string; description: string }> };
  return tools.find((tool) => tool.name === name)!.description;
}

describe('npm run dev', () => {
  it('restarts on an edit to a tool, serves the new code, and a task in flight carries on', { timeout: 120_000 }, async () => {
    const first = await endpoint(1);
    assert.match(await describeTool(first, 'batch_process'), /^Processes a list of items/);

    // A job that is sleeping durably between status checks while the code changes.
    const taskId = await createTask(first, 'external_job', { input: 'abc', durationSeconds: 2, pollEverySeconds: 1 });
    await pollUntil(first, taskId, (task) => /running \(check 1\)/.test(task.statusMessage ?? ''), 15_000);

    const file = join(sandbox.root, 'functions/tools/batch-process.ts');
    const source = await readFile(file, 'utf8');
    await writeFile(file, source.replace("description: 'Processes a list of items", "description: 'Edited: processes a list of items"));

    const second = await endpoint(2);
    assert.match(await describeTool(second, 'batch_process'), /^Edited: processes a list of items/);
    assert.match(output, /SIGTERM: stopping the local stack/, 'the old stack was stopped gracefully');

    const done = await pollUntil(second, taskId, (task) => task.status === 'completed' || task.status === 'failed', 30_000, 100);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /succeeded after \d+ status checks: processed 3 characters/);
  });
});
