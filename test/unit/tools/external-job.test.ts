/** `external_job` through the tool author's test kit (`#tool-kit`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_START, testTool, textOf } from '#tool-kit';
import { externalJob } from '../../../functions/tools/external-job.ts';

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
