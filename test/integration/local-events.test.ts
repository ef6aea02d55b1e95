/**
 * `npm start` and lifecycle events, as a developer runs it (a child process,
 * over HTTP): each event is printed as one compact line; with
 * `LOCAL_EVENTS=off` (what `-c events=off` is to a deployment) nothing is
 * published. The output is read once the stack has stopped: a graceful stop
 * lets running batches finish, so a line that was ever to be printed is there.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startLocalStackProcess } from '../support/local-stack.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';

/** Runs one batch_process task to completion on a fresh `npm start`, stops it, and returns its id and everything printed. */
async function runOnce(env: Record<string, string>): Promise<{ taskId: string; output: string; code: number | null }> {
  const stack = await startLocalStackProcess({ env });
  try {
    const created = resultOf(await rpc(stack.url, 'tools/call', { name: 'batch_process', arguments: { items: ['a'], delayMs: 0 } }));
    const taskId = String(created['taskId']);
    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const code = await stack.stop();
    return { taskId, output: stack.output(), code };
  } finally {
    await stack.stop();
  }
}

describe('npm start and lifecycle events', () => {
  it('prints each event as one line', async () => {
    const { taskId, output, code } = await runOnce({});
    assert.equal(code, 0);
    const printed = output.split('\n').filter((line) => line.startsWith('event: '));
    assert.deepEqual(printed.length, 1, output);
    assert.match(printed[0]!, new RegExp(`^event: Task Completed batch_process ${taskId}: completed after \\d+\\.\\d s$`));
  });

  it('publishes none with LOCAL_EVENTS=off', async () => {
    const { output, code } = await runOnce({ LOCAL_EVENTS: 'off' });
    assert.equal(code, 0);
    assert.deepEqual(
      output.split('\n').filter((line) => line.startsWith('event: ') || line.includes('Task lifecycle events')),
      [],
    );
    assert.ok(!output.includes('events-failed'));
  });
});
