/** The example tools, through the tool author's test kit (`test/kit/kit.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approvalGate } from '../../../functions/tools/approval-gate.ts';
import { batchProcess } from '../../../functions/tools/batch-process.ts';
import { externalJob } from '../../../functions/tools/external-job.ts';
import { accept, DEFAULT_START, decline, testTool, textOf } from '../../kit/kit.ts';

describe('approval_gate', () => {
  it('asks once, then carries out the action with the comment', async () => {
    const run = testTool(approvalGate, { action: 'deploy web' });
    assert.equal((await run.once()).kind, 'input');
    assert.deepEqual(Object.keys(run.inputRequests), ['approval']);
    assert.equal((run.inputRequests['approval']!.params as { message: string }).message, 'Approve: deploy web?');
    const result = await run.answer('approval', accept({ approve: true, comment: 'go' })).result();
    assert.equal(textOf(result), 'Approved and done: deploy web (go)');
    assert.deepEqual(result.structuredContent, { approved: true, comment: 'go' });
    assert.deepEqual(run.progress, ['Approved; carrying out: deploy web']);
  });

  for (const [what, answer] of [
    ['a decline', decline()],
    ['a "no"', accept({ approve: false })],
  ] as const) {
    it(`refuses on ${what} with a tool-level error, not a failure`, async () => {
      const result = await testTool(approvalGate, { action: 'drop table' }, { answers: { approval: answer } }).result();
      assert.equal(result.isError, true);
      assert.equal(textOf(result), 'Not approved: drop table');
    });
  }
});

describe('batch_process', () => {
  it('processes every item, reporting progress item by item', async () => {
    const run = testTool(batchProcess, { items: ['a', 'b', 'c'], delayMs: 0 });
    const result = await run.result();
    assert.equal(textOf(result), 'Processed 3 items');
    assert.deepEqual(run.progress, ['Processed 1 of 3 items', 'Processed 2 of 3 items', 'Processed 3 of 3 items']);
    const processed = (result.structuredContent as { processed: Array<{ item: number; fingerprint: string }> }).processed;
    assert.deepEqual(
      processed.map((entry) => entry.item),
      [0, 1, 2],
    );
    assert.match(processed[0]!.fingerprint, /^[0-9a-f]{16}$/);
    assert.notEqual(processed[0]!.fingerprint, processed[1]!.fingerprint);
  });

  it('stops when cancelled', async () => {
    const run = testTool(batchProcess, { items: ['a', 'b'], delayMs: 60_000 });
    const pending = run.once();
    run.cancel();
    assert.deepEqual(await pending, { kind: 'cancelled' });
    assert.deepEqual(run.progress, []);
  });
});

describe('external_job', () => {
  it('submits once, checks, and sleeps durably between checks', async () => {
    const run = testTool(externalJob, { input: 'report', durationSeconds: 3600, pollEverySeconds: 60 });
    assert.deepEqual(await run.once(), { kind: 'sleep', wakeAt: DEFAULT_START + 60_000 });
    assert.deepEqual([...run.checkpoints.keys()], ['submit', 'status#1', 'sleep#1']);
    assert.deepEqual(run.checkpoints.get('status#1'), { state: 'running' });
    const jobId = (run.checkpoints.get('submit') as { jobId: string }).jobId;

    run.clock.advance(60_000);
    assert.deepEqual(await run.once(), { kind: 'sleep', wakeAt: DEFAULT_START + 120_000 });
    assert.deepEqual([...run.checkpoints.keys()], ['submit', 'status#1', 'sleep#1', 'status#2', 'sleep#2']);
    assert.equal((run.checkpoints.get('submit') as { jobId: string }).jobId, jobId, 'the replay did not submit again');
    assert.deepEqual(
      run.progress,
      [`Submitted job ${jobId}`, `Job ${jobId} is running (check 1)`, `Job ${jobId} is running (check 2)`],
      'replayed calls report no progress again',
    );
  });

  it('returns the output once the job is done', async () => {
    const run = testTool(externalJob, { input: 'abc', durationSeconds: 0 });
    const result = await run.result();
    assert.match(textOf(result), /^Job [0-9a-f-]{36} succeeded after 1 status checks: processed 3 characters$/);
    assert.deepEqual([...run.checkpoints.keys()], ['submit', 'status#1']);
  });
});
