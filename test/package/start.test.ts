/**
 * `npm start` in the project `init` made: the local stack serves the
 * project's sample tool and nothing else, and the package's CLI completes a
 * call of it, answering its question.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { projectDir, projectEnv, run } from './project.ts';

const READY = /MCP endpoint ready at (http:\/\/\S+)/;
let child: ChildProcess;
let output = '';
let url: string;
const dataDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-package-start-'));

before(async () => {
  child = spawn('npm', ['start'], {
    cwd: projectDir(),
    env: projectEnv({ PORT: '0', LOCAL_DATA_DIR: dataDir, LOCAL_EVENTS: 'off' }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const deadline = Date.now() + 90_000;
  while (!READY.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) assert.fail(`npm start did not get ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  url = READY.exec(output)![1]!;
});

after(async () => {
  if (child.pid !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // npm and the stack it runs are one process group.
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start in the project', () => {
  it('serves the sample tool and nothing else', () => {
    const tools = run('mcp-tasks', ['--url', url, 'tools'])
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[0]);
    assert.deepEqual(tools, ['hello']);
  });

  it('completes a call of it with the CLI, answering its question', () => {
    const task = JSON.parse(
      run('mcp-tasks', ['--url', url, 'call', 'hello', '{"name":"Ada"}', '--answer', 'style.formal=true', '--json']),
    ) as {
      status: string;
      result: { content: Array<{ text: string }> };
    };
    assert.equal(task.status, 'completed');
    assert.equal(task.result.content[0]?.text, 'Good day, Ada.');
  });
});
