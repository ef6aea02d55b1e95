/**
 * The example end-to-end test for tool authors: a tool called through the
 * whole local stack (HTTP, DynamoDB and SQS emulators, the worker) with the
 * kit's `startTestStack` and `callTool`. Copy it for your tool.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accept, textOf } from '../../kit/kit.ts';
import { callTool, startTestStack, type TestStack } from '../../kit/local.ts';

let stack: TestStack;
before(async () => {
  stack = await startTestStack({ env: { TASKS_TOOLSET: 'product', TASKS_PROGRESS_INTERVAL_MS: '1' } });
});
after(async () => {
  await stack.close();
});

describe('example tools on the local stack', () => {
  it('approval_gate: asks, is answered through tasks/update, completes', async () => {
    const task = await callTool(stack.url, 'approval_gate', { action: 'deploy web' }, { answers: { approval: accept({ approve: true }) } });
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.equal(textOf(task.result!), 'Approved and done: deploy web');
  });

  it('external_job: checks, sleeps durably between checks, completes', async () => {
    const task = await callTool(stack.url, 'external_job', { input: 'abcd', durationSeconds: 1, pollEverySeconds: 1 });
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.match(textOf(task.result!), /succeeded after [2-9] status checks: processed 4 characters/);
    assert.ok(
      task.statusMessages.some((message) => /is running \(check 1\)/.test(message)),
      task.statusMessages.join(' | '),
    );
  });

  it('fails the call when the tool asks a question the test gave no answer for', async () => {
    await assert.rejects(callTool(stack.url, 'approval_gate', { action: 'x' }), /asks for approval, which were given no answer/);
  });
});
