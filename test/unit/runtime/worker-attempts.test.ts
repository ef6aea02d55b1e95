/** The worker's attempt count: crash loops end failed, clean hand-overs and runs that made progress do not count against it. */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as z from 'zod';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { defineTool } from '../../../shared/runtime/tool.ts';
import { processTaskMessage } from '../../../shared/runtime/worker.ts';
import { sleep } from '../../support/wait.ts';
import { create, deps, freshWorld, LEASE_MS, OWNER, tools, world } from '../../support/worker-world.ts';

beforeEach(freshWorld);

describe('crash loops', () => {
  it('fails a task whose runs keep dying without an outcome, without running it again', async () => {
    const taskId = await create('counted');
    let now = Date.now();
    // Each claim whose worker then vanishes: the lease simply expires.
    for (let run = 1; run <= DEFAULT_SETTINGS.maxAttempts; run++) {
      assert.ok(await world.store.claim(taskId, `crashed-${run}`, now));
      now += LEASE_MS + 1;
    }
    await processTaskMessage({ taskId, reason: 'sweep' }, { ...deps(), now: () => now });
    const task = await world.store.get(taskId, OWNER, now);
    assert.equal(task?.status, 'failed');
    assert.match(task?.statusMessage ?? '', /started 5 times without finishing/);
    assert.equal(world.executions, 0);
  });

  it('does not count clean hand-overs (continuations, wake-ups) as attempts', async () => {
    const taskId = await create('counted');
    let now = Date.now();
    for (let run = 1; run <= DEFAULT_SETTINGS.maxAttempts + 2; run++) {
      assert.ok(await world.store.claim(taskId, `w-${run}`, now));
      await world.store.release(taskId, `w-${run}`, now, { handedOver: true });
      now += 1;
    }
    await processTaskMessage({ taskId, reason: 'continue' }, { ...deps(), now: () => now });
    assert.equal((await world.store.get(taskId, OWNER, now))?.status, 'completed');
    assert.equal(world.executions, 1);
  });
});

describe('attempts and progress', () => {
  const steps = defineTool({
    name: 'steps',
    description: '',
    inputSchema: z.object({}),
    execution: 'task',
    handler: async (_a, ctx) => {
      for (let i = 1; i <= 3; i++) await ctx.step(`s${i}`, async () => i);
      world.executions += 1;
      return 'all steps';
    },
  });
  const withSteps = new Map([...tools, [steps.name, steps]]);

  it('restarts the attempt count of a task that recorded new steps since it was last counted, and finishes it', async () => {
    const taskId = await create('steps');
    let now = Date.now();
    // Runs that each died after recording a step: more of them than the cap allows.
    for (let run = 1; run <= DEFAULT_SETTINGS.maxAttempts; run++) {
      assert.ok(await world.store.claim(taskId, `crashed-${run}`, now));
      if (run <= 2) await world.store.saveStep(taskId, { name: `s${run}`, value: run, now: now, position: run });
      now += LEASE_MS + 1;
    }
    await processTaskMessage({ taskId, reason: 'sweep' }, { ...deps(), tools: withSteps, now: () => now });
    const task = await world.store.get(taskId, OWNER, now);
    assert.equal(task?.status, 'completed', task?.statusMessage);
    assert.equal(world.executions, 1);
  });

  /** Records one new step per run, then fails unexpectedly, until it has `total` steps. */
  const failsAfterEachStep = (total: number) =>
    defineTool({
      name: 'fails_after_each_step',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_a, ctx) => {
        for (let i = 1; i <= total; i++) {
          let ran = false;
          await ctx.step(`s${i}`, async () => {
            world.executions += 1;
            ran = true;
            return i;
          });
          if (ran && i < total) throw new Error('connection reset');
        }
        return `${total} steps`;
      },
    });

  it('hands a run that recorded new steps before an unexpected error over with a fresh message, its attempts starting again', async () => {
    const tool = failsAfterEachStep(3);
    const taskId = await create(tool.name);
    const workerDeps = { ...deps(), tools: new Map([[tool.name, tool]]) };
    assert.equal(
      await processTaskMessage({ taskId, reason: 'start' }, workerDeps),
      'done',
      'the message is deleted: a fresh one replaces it',
    );
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'working');
    assert.equal(task?.lease, undefined);
    assert.equal(task?.attempts, 0);
    assert.equal(task?.progressMark, 1);
    assert.deepEqual(
      world.queue.sent.map((m) => m.reason),
      ['retry'],
    );
  });

  it('finishes a job whose runs each fail after a new step, more of them than the attempt cap', async () => {
    const total = DEFAULT_SETTINGS.maxAttempts * 2;
    const tool = failsAfterEachStep(total);
    const taskId = await create(tool.name);
    const workerDeps = { ...deps({ retryBaseDelayMs: 1 }), tools: new Map([[tool.name, tool]]) };
    let message: { taskId: string; reason: 'start' | 'retry' } = { taskId, reason: 'start' };
    for (let run = 1; run <= total; run++) {
      assert.equal(await processTaskMessage(message, workerDeps), 'done', `run ${run}`);
      message = { taskId, reason: 'retry' };
      await sleep(2);
    }
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'completed', task?.statusMessage);
    assert.equal(world.executions, total, 'each step ran once');
  });

  it('still leaves a run that failed without a new step to redelivery, its attempts counting', async () => {
    const replaysThenFails = defineTool({
      name: 'replays_then_fails',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_a, ctx) => {
        await ctx.step('s1', async () => 1);
        throw new Error('connection reset');
      },
    });
    const taskId = await create(replaysThenFails.name);
    const now = Date.now();
    // An earlier run recorded s1 and handed over cleanly: the mark is 1.
    assert.ok(await world.store.claim(taskId, 'earlier', now));
    await world.store.saveStep(taskId, { name: 's1', value: 1, now: now, position: 1 });
    await world.store.release(taskId, 'earlier', now, { handedOver: true, progressMark: 1 });
    const workerDeps = { ...deps(), tools: new Map([[replaysThenFails.name, replaysThenFails]]) };
    assert.equal(await processTaskMessage({ taskId, reason: 'continue' }, workerDeps), 'retry');
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.attempts, 1);
    assert.equal(task?.progressMark, 1);
    assert.deepEqual(world.queue.sent, []);
  });

  it('still fails a crash loop that records nothing new after its count restarted', async () => {
    const taskId = await create('steps');
    let now = Date.now();
    await world.store.saveStep(taskId, { name: 's1', value: 1, now: now, position: 1 });
    for (let run = 1; run <= DEFAULT_SETTINGS.maxAttempts; run++) {
      assert.ok(await world.store.claim(taskId, `crashed-${run}`, now));
      now += LEASE_MS + 1;
    }
    // Past the cap with one new step: the count restarts at this run (which dies too)...
    const leased = await world.store.claim(taskId, 'progress', now);
    assert.ok(leased);
    await world.store.heartbeat(taskId, 'progress', now, { progressMark: 1 });
    assert.equal((await world.store.get(taskId, OWNER, now))?.attempts, 1);
    now += LEASE_MS + 1;
    // ...then runs that record nothing.
    for (let run = 1; run < DEFAULT_SETTINGS.maxAttempts; run++) {
      assert.ok(await world.store.claim(taskId, `again-${run}`, now));
      now += LEASE_MS + 1;
    }
    await processTaskMessage({ taskId, reason: 'sweep' }, { ...deps(), tools: withSteps, now: () => now });
    const task = await world.store.get(taskId, OWNER, now);
    assert.equal(task?.status, 'failed');
    assert.match(task?.statusMessage ?? '', /without finishing, handing over or recording a new step/);
    assert.equal(world.executions, 0);
  });
});
