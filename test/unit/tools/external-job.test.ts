/** `external_job` through the tool author's test kit (`#tool-kit`). */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
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

  it("keeps the job's time by the kit's clock, which its durable sleeps move: a two-minute job ends after three checks", async () => {
    const run = testTool(externalJob, { input: 'abc', durationSeconds: 120, pollEverySeconds: 60 });
    assert.match(textOf(await run.result()), /^Job [0-9a-f-]{36} succeeded after 3 status checks: processed 3 characters$/);
    assert.equal(run.clock.now(), DEFAULT_START + 120_000);
  });

  it('returns the output once the job is done', async () => {
    const run = testTool(externalJob, { input: 'abc', durationSeconds: 0 });
    const result = await run.result();
    assert.match(textOf(result), /^Job [0-9a-f-]{36} succeeded after 1 status checks: processed 3 characters$/);
    assert.deepEqual([...run.checkpoints.keys()], ['submit', 'status#1']);
  });

  describe('callback mode', () => {
    let posted: Array<{ url: string; method: string; body?: unknown }>;
    let server: Server;
    let base: string;
    before(async () => {
      server = createServer((req, res) => {
        let text = '';
        req.on('data', (chunk) => (text += String(chunk)));
        req.on('end', () => {
          posted.push({ url: req.url ?? '', method: req.method ?? '', ...(text ? { body: JSON.parse(text) } : {}) });
          res.writeHead(req.method === 'POST' ? 202 : 200).end('{}');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    beforeEach(() => {
      posted = [];
    });

    it('hands the job system the callback URL once, suspends, and returns what it posts', async () => {
      const run = testTool(externalJob, { input: 'abc', mode: 'callback', durationSeconds: 5 }, { settings: { jobSystemUrl: `${base}/` } });
      const outcome = await run.once();
      assert.equal(outcome.kind, 'callbacks');
      const [[id, url]] = Object.entries(run.callbacks) as [[string, string]];
      assert.deepEqual(posted, [{ url: '/jobs', method: 'POST', body: { jobId: id, input: 'abc', durationSeconds: 5, callbackUrl: url } }]);
      assert.equal(outcome.kind === 'callbacks' && outcome.wait.callbacks[id]?.timeoutAt, DEFAULT_START + 605_000);
      run.complete(id, { result: { jobId: id, output: 'processed 3 characters' } });
      assert.equal(textOf(await run.result()), `Job ${id} succeeded (called back): processed 3 characters`);
      assert.equal(posted.length, 1, 'the replay did not submit again');
    });

    it('a completion of another shape is a tool error naming the expected body, never "Job undefined succeeded"', async () => {
      for (const [result, problem] of [
        [{ status: 'done' }, /result\.jobId: .*result\.output: /],
        [{ jobId: 'j', output: 3 }, /result\.output: /],
        ['processed', /result: /],
      ] as const) {
        const run = testTool(externalJob, { input: 'abc', mode: 'callback' }, { settings: { jobSystemUrl: base } });
        await run.once();
        const [id] = Object.keys(run.callbacks);
        run.complete(id!, { result });
        const done = await run.result();
        assert.equal(done.isError, true, JSON.stringify(result));
        assert.match(textOf(done), problem);
        assert.match(textOf(done), /it must post \{"result": \{"jobId": "<the job's id>", "output": "<text>"\}\} to the callback URL$/);
        assert.doesNotMatch(textOf(done), /succeeded|undefined/);
      }
    });

    it('a callback that never comes times out as a tool error', async () => {
      const run = testTool(
        externalJob,
        { input: 'abc', mode: 'callback', timeoutSeconds: 60 },
        {
          settings: { jobSystemUrl: base },
          timeOutCallbacks: true,
        },
      );
      const result = await run.result();
      assert.equal(result.isError, true);
      assert.match(textOf(result), /timed out/);
    });

    it('without a job system, callback mode ends at once with a tool error: no wait for a callback nobody makes', async () => {
      const run = testTool(externalJob, { input: 'abc', mode: 'callback' }, { settings: {} });
      const result = await run.result();
      assert.equal(result.isError, true);
      assert.match(textOf(result), /needs a job system/);
      assert.deepEqual(posted, []);
    });
  });
});
