/**
 * What an ended task says, where a person reads it: the `mcp-tasks` CLI's
 * last status line after a real `approval_gate` run (the tool's progress was
 * "Approved; carrying out: …"), and `mcp-tasks get` of tasks that ended
 * after a message that no longer holds, against the local stack with its
 * default settings.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { newTask } from '../support/factories.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));
/** The principal the local stack gives every request without an authorizer. */
const OWNER = 'local';

describe('ended tasks in the CLI', () => {
  let stack: LocalStack;
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-ended-'));
    stack = await startLocalStack({ port: 0, dataDir, env: {}, settingsFile: join(dataDir, 'none.json'), log: () => {}, drainMs: 1000 });
  });
  after(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, '--url', stack.url, ...args],
        { cwd: ROOT, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });

  it("an approval_gate run's last status line is the message written with its end, not that it is carrying out", {
    timeout: 90_000,
  }, async () => {
    const run = await cli(['call', 'approval_gate', '{"action":"ship 2.0"}', '--answer', 'approval.approve=true']);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.equal(run.stdout, 'Approved and done: ship 2.0\n');
    const statusLines = run.stderr.split('\n').filter((line) => /^\[[0-9a-f-]{36}\] /.test(line));
    assert.match(statusLines.at(-1) ?? '', /\] completed: Approved and done: ship 2\.0$/, run.stderr);
    assert.doesNotMatch(run.stderr, /completed: Approved; carrying out/);
  });

  it('mcp-tasks get of tasks that ended after a progress, a wait on a person or a resume says the status default', {
    timeout: 60_000,
  }, async () => {
    const now = Date.now();
    const ended: Array<[string, string, string]> = [];
    for (const [message, end] of [
      ['Approved; carrying out: ship 2.0', 'completed'],
      ['Called back; the task goes on', 'completed'],
      ["Waiting for a person to answer on the task's page", 'cancelled'],
    ] as const) {
      const { task } = await stack.store.create(newTask({ owner: OWNER, tool: 'approval_gate', now }));
      const claimed = await stack.store.claim(task.taskId, 'w', now);
      assert.ok(claimed);
      if (end === 'completed') {
        await stack.store.heartbeat(task.taskId, 'w', now + 1, { statusMessage: message });
        await stack.store.finish(claimed, 'w', { status: 'completed', result: { content: [{ type: 'text', text: 'done' }] } }, now + 2);
      } else {
        const question = { method: 'elicitation/create' as const, params: { message: 'OK?', requestedSchema: { type: 'object' } } };
        await stack.store.finish(
          claimed,
          'w',
          { status: 'input_required', inputRequests: { ok: question }, statusMessage: message },
          now + 2,
        );
        await stack.store.cancel(task.taskId, OWNER, now + 3);
      }
      ended.push([task.taskId, end, message]);
    }
    for (const [taskId, end, message] of ended) {
      const run = await cli(['get', taskId]);
      assert.equal(run.stdout.split('\n')[0], `${taskId}  ${end}  ${end === 'completed' ? 'Completed' : 'Cancelled'}`, message);
    }
  });
});
