/** The worker's message processing: runs, redeliveries, cancellation, input, durable execution, the heartbeat. */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as z from 'zod';
import { DeploymentLinks } from '../../../shared/links.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { defineTool, RetryableError } from '../../../shared/runtime/tool.ts';
import { processTaskMessage, type WorkerDeps } from '../../../shared/runtime/worker.ts';
import { ANSWERED_MESSAGE } from '../../../shared/tasks/decisions.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { statusMessageOf } from '../../../shared/tasks/status-message.ts';
import type { HeartbeatOptions } from '../../../shared/tasks/store-types.ts';
import { newTask } from '../../support/factories.ts';
import { sleep } from '../../support/wait.ts';
import { create, deps, freshWorld, LEASE_MS, OWNER, POLICY, settled, status, until, world } from '../../support/worker-world.ts';

// Every test starts from an empty store and queue (file-level hook: runs before each test).
beforeEach(freshWorld);

describe('processTaskMessage', () => {
  it("names the task's page in the status of a wait on a person, and no more once they answered", async () => {
    const links = new DeploymentLinks('https://tasks.example.com/');
    const taskId = await create('asks_person');
    await processTaskMessage({ taskId, reason: 'start' }, { ...deps(), links });
    const waiting = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(waiting?.status, 'input_required');
    assert.equal(
      waiting?.statusMessage,
      `Waiting for a person to answer on the task's page: https://tasks.example.com/console/tasks/${taskId}`,
    );
    const request = waiting?.status === 'input_required' ? waiting.inputRequests['ok'] : undefined;
    assert.doesNotMatch(JSON.stringify(request), /https?:/, 'no link inside the question itself');
    await world.store.answer(taskId, OWNER, { ok: { action: 'accept', content: {} } }, Date.now());
    assert.equal((await world.store.get(taskId, OWNER, Date.now()))?.statusMessage, ANSWERED_MESSAGE);

    // A question anyone may answer, or no known URL: the status is left as the tool wrote it.
    const plain = await create('asks');
    await processTaskMessage({ taskId: plain, reason: 'start' }, { ...deps(), links });
    assert.equal((await world.store.get(plain, OWNER, Date.now()))?.statusMessage, undefined);
    const unknown = await create('asks_person');
    await processTaskMessage({ taskId: unknown, reason: 'start' }, { ...deps(), links: new DeploymentLinks(undefined) });
    assert.equal((await world.store.get(unknown, OWNER, Date.now()))?.statusMessage, 'checking');
  });

  it('runs a task to completed and records the result with resultType complete', async () => {
    const taskId = await create('counted');
    assert.equal(await processTaskMessage({ taskId, reason: 'start' }, deps()), 'done');
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'completed');
    assert.deepEqual(task?.status === 'completed' && task.result, { content: [{ type: 'text', text: 'ok' }], resultType: 'complete' });
    assert.equal(task?.lease, undefined);
  });

  it("writes a tool's final message with its end, off the result; a progress message never outlives the end", async () => {
    const finishing = (final?: string) =>
      defineTool({
        name: final ? 'deploys' : 'quiet',
        description: '',
        inputSchema: z.object({}),
        execution: 'task',
        handler: async (_a, ctx) => {
          await ctx.progress('Approved; carrying out: deploy web');
          return final ? { content: [{ type: 'text', text: 'ok' }], statusMessage: final } : 'ok';
        },
      });
    const tools = new Map([finishing('Deployed to 3 regions'), finishing()].map((t) => [t.name, t]));
    const deployed = await create('deploys');
    const quiet = await create('quiet');
    for (const taskId of [deployed, quiet]) await processTaskMessage({ taskId, reason: 'start' }, { ...deps(), tools });
    const withFinal = await world.store.get(deployed, OWNER, Date.now());
    assert.equal(withFinal && statusMessageOf(withFinal), 'Deployed to 3 regions');
    assert.deepEqual(withFinal?.status === 'completed' && withFinal.result, {
      content: [{ type: 'text', text: 'ok' }],
      resultType: 'complete',
    });
    const without = await world.store.get(quiet, OWNER, Date.now());
    assert.equal(without?.statusMessage, 'Approved; carrying out: deploy web', 'the row keeps the last progress written');
    assert.equal(without && statusMessageOf(without), 'Completed', 'but an ended task no longer says it');
  });

  it('runs a job once when the same message is delivered twice at the same time', async () => {
    const taskId = await create('counted');
    const results = await Promise.all([
      processTaskMessage({ taskId, reason: 'start' }, deps()),
      processTaskMessage({ taskId, reason: 'start' }, deps()),
    ]);
    assert.deepEqual(results, ['done', 'done']);
    assert.equal(world.executions, 1);
    assert.equal(await status(taskId), 'completed');
  });

  it('ignores a redelivery after the task has ended', async () => {
    const taskId = await create('counted');
    await processTaskMessage({ taskId, reason: 'start' }, deps());
    assert.equal(await processTaskMessage({ taskId, reason: 'retry' }, deps()), 'done');
    assert.equal(world.executions, 1);
  });

  it('asks for redelivery on an unexpected error and releases the lease', async () => {
    const taskId = await create('flaky');
    assert.equal(await processTaskMessage({ taskId, reason: 'start' }, deps()), 'retry');
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'working');
    assert.equal(task?.lease, undefined);
    assert.equal(task?.attempts, 1);
  });

  it('fails a task whose tool no longer exists', async () => {
    const taskId = await create('removed');
    await processTaskMessage({ taskId, reason: 'start' }, deps());
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'failed');
    assert.equal(task?.status === 'failed' && task.error.code, -32602);
  });

  it('stops a quiet running handler at its next cancellation check', async () => {
    const taskId = await create('waits');
    const run = processTaskMessage({ taskId, reason: 'start' }, deps());
    await sleep(20);
    assert.equal((await world.store.cancel(taskId, OWNER, Date.now())).result, 'requested');
    assert.equal(await run, 'done');
    assert.equal(await status(taskId), 'cancelled');
  });

  it('stops a running handler whose task was cancelled at once, writing and logging no second end', async () => {
    const taskId = await create('waits');
    const events: Array<Record<string, unknown>> = [];
    const run = processTaskMessage({ taskId, reason: 'start' }, { ...deps(), log: (event) => events.push(event) });
    await sleep(20);
    assert.equal((await world.store.cancel(taskId, OWNER, Date.now(), { atOnce: true })).result, 'cancelled');
    const cancelled = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(await run, 'done');
    assert.deepEqual(await world.store.get(taskId, OWNER, Date.now()), cancelled, 'the worker wrote nothing after the cancel');
    assert.ok(events.some((event) => event['event'] === 'lease-lost'));
    assert.equal(events.filter((event) => event['event'] === 'task-ended').length, 0, 'the canceller logs the end, not the worker');
  });

  it('carries cancellation through progress writes', async () => {
    const taskId = await create('progress');
    const run = processTaskMessage({ taskId, reason: 'start' }, deps({ cancelCheckMs: 60_000 }));
    await sleep(20);
    assert.equal((await world.store.get(taskId, OWNER, Date.now()))?.statusMessage?.startsWith('step '), true);
    await world.store.cancel(taskId, OWNER, Date.now());
    await run;
    assert.equal(await status(taskId), 'cancelled');
  });

  it('suspends for input, then resumes with the answer', async () => {
    const taskId = await create('asks');
    await processTaskMessage({ taskId, reason: 'start' }, deps());
    const waiting = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(waiting?.status, 'input_required');
    assert.deepEqual(waiting?.status === 'input_required' && Object.keys(waiting.inputRequests), ['ok']);
    const { resumed } = await world.store.answer(taskId, OWNER, { ok: { action: 'accept', content: {} } }, Date.now());
    assert.equal(resumed, true);
    await processTaskMessage({ taskId, reason: 'resume' }, deps());
    const done = await world.store.get(taskId, OWNER, Date.now());
    assert.deepEqual(done?.status === 'completed' && done.result['content'], [{ type: 'text', text: 'answered accept' }]);
  });
});

describe('durable execution', () => {
  let ran: string[];
  const stepped = defineTool({
    name: 'stepped',
    description: '',
    inputSchema: z.object({ steps: z.number() }),
    execution: 'task',
    handler: async (args, ctx) => {
      let sum = 0;
      for (let i = 1; i <= (args as { steps: number }).steps; i++) {
        sum += await ctx.step(`s${i}`, async () => {
          ran.push(`s${i}`);
          await sleep(5);
          return i;
        });
      }
      return `sum=${sum}`;
    },
  });
  const sleeper = defineTool({
    name: 'sleeper',
    description: '',
    inputSchema: z.object({ ms: z.number() }),
    execution: 'task',
    handler: async (args, ctx) => {
      await ctx.step('before', async () => ran.push('before'));
      await ctx.sleep((args as { ms: number }).ms);
      await ctx.step('after', async () => ran.push('after'));
      return 'woke';
    },
  });
  const retrying = defineTool({
    name: 'retrying',
    description: '',
    inputSchema: z.object({}),
    execution: 'task',
    handler: async () => {
      ran.push('attempt');
      throw new RetryableError('try later', { delayMs: 1000 });
    },
  });
  const allTools = new Map([stepped, sleeper, retrying].map((t) => [t.name, t]));
  const durableDeps = (overrides: Partial<WorkerDeps['config']> = {}, now?: () => number): WorkerDeps => ({
    ...deps(overrides),
    tools: allTools,
    ...(now ? { now } : {}),
  });

  beforeEach(() => {
    ran = [];
  });

  it('hands over to a continuation at a step boundary when the invocation budget runs out, and never repeats a step', async () => {
    const taskId = await create('stepped', { steps: 6 });
    let invocations = 0;
    for (; invocations < 20 && (await status(taskId)) === 'working'; invocations++) {
      assert.equal(await processTaskMessage({ taskId, reason: 'continue' }, durableDeps({ invocationBudgetMs: 12 })), 'done');
    }
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'completed');
    assert.deepEqual(task?.status === 'completed' && task.result['content'], [{ type: 'text', text: 'sum=21' }]);
    assert.deepEqual(ran, ['s1', 's2', 's3', 's4', 's5', 's6']);
    assert.ok(invocations > 1, `expected continuations, got ${invocations} invocation(s)`);
    assert.ok(world.queue.sent.length >= invocations - 1 && world.queue.sent.every((m) => m.reason === 'continue'));
  });

  it('sleeps durably: releases the task and enqueues a delayed wake-up, then finishes once due', async () => {
    let clock = 1_000_000;
    const taskId = await create('sleeper', { ms: 30 * 60 * 1000 });
    assert.equal(
      await processTaskMessage(
        { taskId, reason: 'start' },
        durableDeps({}, () => clock),
      ),
      'done',
    );
    const waiting = await world.store.get(taskId, OWNER, clock);
    assert.equal(waiting?.status, 'working');
    assert.equal(waiting?.lease, undefined);
    assert.deepEqual(world.queue.sent, [{ taskId, reason: 'wake' }]);

    clock += 15 * 60 * 1000; // a 30-minute sleep takes two SQS hops of at most 15 minutes
    await processTaskMessage(
      { taskId, reason: 'wake' },
      durableDeps({}, () => clock),
    );
    assert.equal(await status(taskId), 'working');
    clock += 15 * 60 * 1000;
    await processTaskMessage(
      { taskId, reason: 'wake' },
      durableDeps({}, () => clock),
    );
    assert.equal((await world.store.get(taskId, OWNER, clock))?.status, 'completed');
    assert.deepEqual(ran, ['before', 'after']);
  });

  it('retries a RetryableError with a delayed message, then fails after the attempt limit', async () => {
    const taskId = await create('retrying');
    for (let attempt = 1; attempt <= 3; attempt++) {
      assert.equal(await processTaskMessage({ taskId, reason: 'retry' }, durableDeps({ maxAttempts: 3 })), 'done');
    }
    const task = await world.store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'failed');
    assert.match(task?.statusMessage ?? '', /Gave up after 3 attempts: try later/);
    assert.equal(ran.length, 3);
    assert.deepEqual(
      world.queue.sent.map((m) => m.reason),
      ['retry', 'retry'],
    );
  });
});

describe('cancellation and hand-over', () => {
  it('a cancel that arrives just before the handler goes to sleep ends the task cancelled, not asleep', async () => {
    const sleepsAfterCancel = defineTool({
      name: 'sleeps-after-cancel',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_a, ctx) => {
        await sleep(150); // the heartbeat sees the cancel meanwhile
        await ctx.sleep(60 * 60 * 1000);
        return 'woke';
      },
    });
    const taskId = await create('sleeps-after-cancel');
    const run = processTaskMessage(
      { taskId, reason: 'start' },
      { ...deps({ cancelCheckMs: 20 }), tools: new Map([[sleepsAfterCancel.name, sleepsAfterCancel]]) },
    );
    await sleep(30);
    assert.equal((await world.store.cancel(taskId, OWNER, Date.now())).result, 'requested');
    assert.equal(await run, 'done');
    assert.equal(await status(taskId), 'cancelled');
    assert.deepEqual(world.queue.sent, []);
  });
});

describe('heartbeat: lease renewal and progress', () => {
  /** Records the options of every heartbeat the worker sends, and counts its reads. */
  class SpyStore extends InMemoryTaskStore {
    readonly heartbeats: Array<{ at: number; options: HeartbeatOptions }> = [];
    reads = 0;
    override async heartbeat(taskId: string, leaseOwner: string, now: number, options: HeartbeatOptions) {
      this.heartbeats.push({ at: now, options });
      return super.heartbeat(taskId, leaseOwner, now, options);
    }
    override async get(taskId: string, owner: string, now: number) {
      this.reads += 1;
      return super.get(taskId, owner, now);
    }
  }
  let spy: SpyStore;
  let clock: number;
  const T0 = 1_000_000;

  /** A task created at the test's clock. */
  const createAt = async (tool: string) => {
    const { task } = await world.store.create(
      newTask({ taskId: `task-${tool}-${Math.random()}`, owner: OWNER, tool, now: clock, ttlMs: 3_600_000 }),
    );
    return task.taskId;
  };

  beforeEach(() => {
    spy = new SpyStore(POLICY);
    world.store = spy;
    world.queue = new InMemoryTaskQueue();
    clock = T0;
  });

  /** A handler that reports progress `steps` times, the clock moving `stepMs` before each report. */
  const progressing = (steps: number, stepMs: number) =>
    defineTool({
      name: 'progressing',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_a, ctx) => {
        for (let i = 1; i <= steps; i++) {
          clock += stepMs;
          await ctx.progress(`step ${i}`);
        }
        return 'done';
      },
    });

  it('writes progress without renewing the lease until a renewal is due, then one write does both', async () => {
    const tool = progressing(6, LEASE_MS / 6);
    const taskId = await createAt('progressing');
    const settings = { cancelCheckMs: 3_600_000, progressIntervalMs: 0 };
    assert.equal(
      await processTaskMessage({ taskId, reason: 'start' }, { ...deps(settings), tools: new Map([[tool.name, tool]]), now: () => clock }),
      'done',
    );

    const step = LEASE_MS / 6;
    assert.deepEqual(spy.heartbeats, [
      { at: T0 + step, options: { statusMessage: 'step 1' } },
      { at: T0 + 2 * step, options: { leaseMs: LEASE_MS, statusMessage: 'step 2' } },
      { at: T0 + 3 * step, options: { statusMessage: 'step 3' } },
      { at: T0 + 4 * step, options: { leaseMs: LEASE_MS, statusMessage: 'step 4' } },
      { at: T0 + 5 * step, options: { statusMessage: 'step 5' } },
      { at: T0 + 6 * step, options: { leaseMs: LEASE_MS, statusMessage: 'step 6' } },
    ]);
    const done = await world.store.get(taskId, OWNER, clock);
    assert.equal(done?.status, 'completed');
    assert.equal(done?.statusMessage, 'step 6');
  });

  it('a renewal due at a progress message moves the lease and sweepAt; progress between renewals does not', async () => {
    const seen: Array<{ lease: unknown; sweepAt: unknown; statusMessage: unknown }> = [];
    let taskId = '';
    const tool = defineTool({
      name: 'observed',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_a, ctx) => {
        for (let i = 1; i <= 3; i++) {
          clock += LEASE_MS / 6;
          await ctx.progress(`step ${i}`);
          const row = await spy.get(taskId, OWNER, clock);
          seen.push({ lease: row?.lease?.until, sweepAt: row?.sweepAt, statusMessage: row?.statusMessage });
        }
        return 'done';
      },
    });
    taskId = await createAt('observed');
    const createdSweepAt = (await world.store.get(taskId, OWNER, clock))?.sweepAt;
    assert.equal(createdSweepAt, T0 + POLICY.leaseMs + POLICY.sweepGraceMs);
    await processTaskMessage(
      { taskId, reason: 'start' },
      { ...deps({ cancelCheckMs: 3_600_000 }), tools: new Map([[tool.name, tool]]), now: () => clock },
    );
    const step = LEASE_MS / 6;
    assert.deepEqual(seen, [
      { lease: T0 + LEASE_MS, sweepAt: createdSweepAt, statusMessage: 'step 1' },
      { lease: T0 + 2 * step + LEASE_MS, sweepAt: T0 + 2 * step + LEASE_MS + POLICY.sweepGraceMs, statusMessage: 'step 2' },
      { lease: T0 + 2 * step + LEASE_MS, sweepAt: T0 + 2 * step + LEASE_MS + POLICY.sweepGraceMs, statusMessage: 'step 3' },
    ]);
  });

  it('the timer reads while no renewal is due and renews (without a message) once one is', async (t) => {
    // The heartbeat timer runs on mocked time: each tick of `cancelCheckMs` is one check, with no waiting.
    t.mock.timers.enable({ apis: ['setInterval'] });
    const CHECK_MS = 10;
    /** Fires the timer `times` times, letting each check's store calls settle. */
    const checks = async (times: number) => {
      for (let i = 0; i < times; i++) {
        t.mock.timers.tick(CHECK_MS);
        await settled();
      }
    };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const tool = defineTool({
      name: 'quiet',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async () => {
        await gate;
        return 'done';
      },
    });
    const taskId = await createAt('quiet');
    const run = processTaskMessage(
      { taskId, reason: 'start' },
      { ...deps({ cancelCheckMs: CHECK_MS }), tools: new Map([[tool.name, tool]]), now: () => clock },
    );
    // Well inside the first third of the lease: only cancellation reads.
    await until(
      () => spy.reads > 0,
      () => checks(1),
    );
    await checks(5);
    assert.deepEqual(spy.heartbeats, []);
    assert.ok(spy.reads > 0, 'the timer reads the task for cancellation');
    // A third of the lease has passed: the next check renews.
    clock += LEASE_MS / 3;
    await checks(1);
    assert.equal(spy.heartbeats.length, 1, 'the first check after a third of the lease renews');
    assert.deepEqual(spy.heartbeats[0], { at: T0 + LEASE_MS / 3, options: { leaseMs: LEASE_MS } });
    const renewed = await world.store.get(taskId, OWNER, clock);
    assert.equal(renewed?.lease?.until, T0 + LEASE_MS / 3 + LEASE_MS);
    assert.equal(renewed?.sweepAt, T0 + LEASE_MS / 3 + LEASE_MS + POLICY.sweepGraceMs);
    // Renewed just now: back to reads until the next third has passed.
    const renewals = spy.heartbeats.length;
    const reads = spy.reads;
    await checks(6);
    assert.equal(spy.heartbeats.length, renewals);
    assert.ok(spy.reads > reads, 'the timer went back to reads');
    release();
    assert.equal(await run, 'done');
    assert.equal((await world.store.get(taskId, OWNER, clock))?.status, 'completed');
  });
});
