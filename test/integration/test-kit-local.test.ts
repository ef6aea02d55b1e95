/** The end-to-end half of the test kit (`kit/local.ts`): each outcome `callTool` reports. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { textOf } from '../../kit/kit.ts';
import { callTool, startTestStack, type TestStack } from '../../kit/local.ts';

let stack: TestStack;
before(async () => {
  stack = await startTestStack({ env: { TASKS_TOOLSET: 'all', TASKS_PROGRESS_INTERVAL_MS: '1' } });
});
after(async () => {
  await stack.close();
});

describe('startTestStack and callTool', () => {
  it('serve on 127.0.0.1 and answer a sync tool inside the request, without a task', async () => {
    assert.match(stack.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const called = await callTool(stack.url, 'greet', { name: 'kit' });
    assert.equal(called.taskId, undefined);
    assert.equal(called.status, 'completed');
    assert.equal(textOf(called.result!), 'Hello, kit!');
  });

  it('report a tool error as a completed task with isError, and a protocol error as a failed one', async () => {
    const toolError = await callTool(stack.url, 'failing_job', {});
    assert.equal(toolError.status, 'completed');
    assert.equal(toolError.result!.isError, true);
    const protocolError = await callTool(stack.url, 'protocol_error_job', {});
    assert.equal(protocolError.status, 'failed', JSON.stringify(protocolError));
    assert.equal(typeof protocolError.error!.code, 'number');
  });

  it('collect the status messages seen while polling', async () => {
    const called = await callTool(stack.url, 'batch_process', { items: ['a', 'b', 'c'], delayMs: 200 });
    assert.equal(called.status, 'completed');
    // The progress while it ran, then what the ended task says (its status's default: the tool writes no final message).
    const progress = called.statusMessages.slice(0, -1);
    assert.equal(called.statusMessages.at(-1), 'Completed', called.statusMessages.join(' | '));
    assert.ok(progress.length >= 1, 'at least one progress message seen');
    assert.ok(
      progress.every((message) => /^Processed [1-3] of 3 items$/.test(message)),
      called.statusMessages.join(' | '),
    );
  });

  it('fail a call whose task outlives the timeout', async () => {
    await assert.rejects(
      callTool(stack.url, 'batch_process', { items: ['a', 'b'], delayMs: 5_000 }, { timeoutMs: 300 }),
      /still working after 300 ms/,
    );
  });

  it("close() removes the stack's data", async () => {
    const other = await startTestStack();
    assert.ok(existsSync(other.dataDir));
    await other.close();
    assert.ok(!existsSync(other.dataDir));
    await assert.rejects(fetch(other.url, { method: 'POST', signal: AbortSignal.timeout(2_000) }));
  });
});
