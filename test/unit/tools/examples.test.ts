/** The example tools, through the tool author's test kit (`test/kit/kit.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approvalGate } from '../../../functions/tools/approval-gate.ts';
import { batchProcess } from '../../../functions/tools/batch-process.ts';
import { externalJob } from '../../../functions/tools/external-job.ts';
import { intakeForm } from '../../../functions/tools/intake-form.ts';
import { longComputation } from '../../../functions/tools/long-computation.ts';
import { accept, DEFAULT_START, decline, testTool, textOf } from '../../kit/kit.ts';

describe('approval_gate', () => {
  it('asks once, then carries out the action with the comment', async () => {
    const run = testTool(approvalGate, { action: 'deploy web' });
    assert.equal((await run.once()).kind, 'input');
    assert.deepEqual(Object.keys(run.inputRequests), ['approval']);
    assert.equal((run.inputRequests['approval']!.params as { message: string }).message, 'Approve: deploy web?');
    const result = await run.answer('approval', accept({ approve: true, comment: 'go' })).result();
    assert.equal(textOf(result), 'Approved and done: deploy web (go)');
    assert.deepEqual(result.structuredContent, {
      approved: true,
      action: 'deploy web',
      comment: 'go',
      message: 'Approved and done: deploy web (go)',
    });
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
      assert.equal(result.structuredContent?.['message'], textOf(result), 'structuredContent says what the text says');
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

  it('checkpoints each item: a run handed over mid-batch resumes at the first unfinished item', async () => {
    const run = testTool(batchProcess, { items: ['a', 'b', 'c', 'd', 'e'], delayMs: 0 }, { stepsPerRun: 2 });
    assert.deepEqual(await run.once(), { kind: 'continue' });
    assert.deepEqual([...run.checkpoints.keys()], ['item#0', 'item#1']);
    const first = (run.checkpoints.get('item#0') as { fingerprint: string }).fingerprint;
    const result = await run.result();
    assert.deepEqual([...run.checkpoints.keys()], ['item#0', 'item#1', 'item#2', 'item#3', 'item#4'], 'each item recorded once');
    const processed = (result.structuredContent as { processed: Array<{ fingerprint: string }> }).processed;
    assert.equal(processed[0]?.fingerprint, first, 'the finished item was replayed, not redone');
    const counts = run.progress.map((message) => Number(/^Processed (\d+) of 5 items$/.exec(message)?.[1]));
    assert.deepEqual(
      [...counts].sort((a, b) => a - b),
      counts,
      'progress never goes backwards on a replay',
    );
    assert.equal(counts.at(-1), 5);
  });

  it('stops when cancelled', async () => {
    const run = testTool(batchProcess, { items: ['a', 'b'], delayMs: 60_000 });
    const pending = run.once();
    run.cancel();
    assert.deepEqual(await pending, { kind: 'cancelled' });
    assert.deepEqual(run.progress, []);
  });
});

describe('long_computation', () => {
  it('reports its progress and answers a result that depends only on its arguments, said in structuredContent too', async () => {
    const first = testTool(longComputation, { seconds: 1, label: 'x' });
    const result = await first.result();
    assert.match(textOf(result), /^Computed x in 1 s: [0-9a-f]{16}$/);
    assert.equal(result.structuredContent?.['message'], textOf(result));
    assert.deepEqual(first.progress, ['Computed 1 of 1 s']);
    const again = await testTool(longComputation, { seconds: 1, label: 'x' }).result();
    assert.equal(again.structuredContent?.['result'], result.structuredContent?.['result']);
  });

  it('stops when cancelled', async () => {
    const run = testTool(longComputation, { seconds: 600 });
    const pending = run.once();
    run.cancel();
    assert.deepEqual(await pending, { kind: 'cancelled' });
  });
});

describe('intake_form', () => {
  it('asks two forms at once, then summarises the answers', async () => {
    const run = testTool(intakeForm, { project: 'apollo' });
    assert.equal((await run.once()).kind, 'input');
    assert.deepEqual(Object.keys(run.inputRequests).sort(), ['contact', 'project']);
    run.answer('contact', accept({ name: 'Ada', email: 'ada@example.com' }));
    run.answer('project', accept({ plan: 'team', languages: ['ts', 'go'], team: 4, remote: false }));
    const result = await run.result();
    assert.equal(textOf(result), 'Intake for apollo: Ada <ada@example.com>, plan team, languages ts, go');
    assert.equal(result.structuredContent?.['message'], textOf(result));
  });

  it('a declined form is a tool-level refusal', async () => {
    const result = await testTool(intakeForm, { project: 'apollo' }, { answers: { contact: decline(), project: decline() } }).result();
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'The intake form for apollo was not filled in');
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
