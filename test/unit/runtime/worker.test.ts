import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as z from 'zod';
import { processTaskMessage, type WorkerDeps } from '../../../shared/runtime/worker.ts';
import { defineTool, RetryableError, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory-store.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';

const OWNER = 'alice';
let store: InMemoryTaskStore;
let queue: InMemoryTaskQueue;
let executions: number;

const counted = defineTool({
  name: 'counted', description: '', inputSchema: z.object({}), execution: 'task',
  handler: async () => { executions += 1; return 'ok'; },
});
const flaky = defineTool({
  name: 'flaky', description: '', inputSchema: z.object({}), execution: 'task',
  handler: async () => { throw new Error('connection reset'); },
});
const waitsForCancel = defineTool({
  name: 'waits', description: '', inputSchema: z.object({}), execution: 'task',
  handler: (_a, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
});
const reportsProgress = defineTool({
  name: 'progress', description: '', inputSchema: z.object({}), execution: 'task',
  handler: async (_a, ctx) => {
    for (let i = 0; i < 50 && !ctx.signal.aborted; i++) {
      await ctx.progress(`step ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    ctx.signal.throwIfAborted();
    return 'finished';
  },
});
const asks = defineTool({
  name: 'asks', description: '', inputSchema: z.object({}), execution: 'task',
  handler: async (_a, ctx) => {
    const answer = await ctx.elicit('ok', { message: 'OK?', requestedSchema: { type: 'object', properties: {} } });
    return `answered ${answer.action}`;
  },
});

const tools: ReadonlyMap<string, ToolDefinition> = new Map([counted, flaky, waitsForCancel, reportsProgress, asks].map((t) => [t.name, t]));

function deps(overrides: Partial<WorkerDeps['settings']> = {}): WorkerDeps {
  return { store, queue, tools, settings: { ...DEFAULT_SETTINGS, leaseMs: 60_000, cancelCheckMs: 50, progressIntervalMs: 0, ...overrides } };
}

async function create(tool: string, args: Record<string, unknown> = {}) {
  const { task } = await store.create({
    taskId: `task-${tool}-${Math.random()}`, owner: OWNER, tool, arguments: args, clientCapabilities: { elicitation: {} },
    inputResponses: {}, now: Date.now(), ttlMs: 3_600_000, pollIntervalMs: 1000,
  });
  return task.taskId;
}

const status = async (taskId: string) => (await store.get(taskId, OWNER, Date.now()))?.status;

describe('processTaskMessage', () => {
  beforeEach(() => {
    store = new InMemoryTaskStore({ retentionMs: 3_600_000, sweepGraceMs: 60_000, stepRetentionMs: 86_400_000 });
    queue = new InMemoryTaskQueue();
    executions = 0;
  });

  it('runs a task to completed and records the result with resultType complete', async () => {
    const taskId = await create('counted');
    assert.equal(await processTaskMessage({ taskId, reason: 'start' }, deps()), 'done');
    const task = await store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'completed');
    assert.deepEqual(task?.status === 'completed' && task.result, { content: [{ type: 'text', text: 'ok' }], resultType: 'complete' });
    assert.equal(task?.lease, undefined);
  });

  it('runs a job once when the same message is delivered twice at the same time', async () => {
    const taskId = await create('counted');
    const results = await Promise.all([processTaskMessage({ taskId, reason: 'start' }, deps()), processTaskMessage({ taskId, reason: 'start' }, deps())]);
    assert.deepEqual(results, ['done', 'done']);
    assert.equal(executions, 1);
    assert.equal(await status(taskId), 'completed');
  });

  it('ignores a redelivery after the task has ended', async () => {
    const taskId = await create('counted');
    await processTaskMessage({ taskId, reason: 'start' }, deps());
    assert.equal(await processTaskMessage({ taskId, reason: 'retry' }, deps()), 'done');
    assert.equal(executions, 1);
  });

  it('asks for redelivery on an unexpected error and releases the lease', async () => {
    const taskId = await create('flaky');
    assert.equal(await processTaskMessage({ taskId, reason: 'start' }, deps()), 'retry');
    const task = await store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'working');
    assert.equal(task?.lease, undefined);
    assert.equal(task?.attempts, 1);
  });

  it('fails a task whose tool no longer exists', async () => {
    const taskId = await create('removed');
    await processTaskMessage({ taskId, reason: 'start' }, deps());
    const task = await store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'failed');
    assert.equal(task?.status === 'failed' && task.error.code, -32602);
  });

  it('stops a quiet running handler at its next cancellation check', async () => {
    const taskId = await create('waits');
    const run = processTaskMessage({ taskId, reason: 'start' }, deps());
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await store.cancel(taskId, OWNER, Date.now()), 'requested');
    assert.equal(await run, 'done');
    assert.equal(await status(taskId), 'cancelled');
  });

  it('carries cancellation through progress writes', async () => {
    const taskId = await create('progress');
    const run = processTaskMessage({ taskId, reason: 'start' }, deps({ cancelCheckMs: 60_000 }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal((await store.get(taskId, OWNER, Date.now()))?.statusMessage?.startsWith('step '), true);
    await store.cancel(taskId, OWNER, Date.now());
    await run;
    assert.equal(await status(taskId), 'cancelled');
  });

  it('suspends for input, then resumes with the answer', async () => {
    const taskId = await create('asks');
    await processTaskMessage({ taskId, reason: 'start' }, deps());
    const waiting = await store.get(taskId, OWNER, Date.now());
    assert.equal(waiting?.status, 'input_required');
    assert.deepEqual(waiting?.status === 'input_required' && Object.keys(waiting.inputRequests), ['ok']);
    const { resumed } = await store.answer(taskId, OWNER, { ok: { action: 'accept', content: {} } }, Date.now());
    assert.equal(resumed, true);
    await processTaskMessage({ taskId, reason: 'resume' }, deps());
    const done = await store.get(taskId, OWNER, Date.now());
    assert.deepEqual(done?.status === 'completed' && done.result['content'], [{ type: 'text', text: 'answered accept' }]);
  });
});

describe('durable execution', () => {
  let ran: string[];
  const stepped = defineTool({
    name: 'stepped', description: '', inputSchema: z.object({ steps: z.number() }), execution: 'task',
    handler: async (args, ctx) => {
      let sum = 0;
      for (let i = 1; i <= (args as { steps: number }).steps; i++) {
        sum += await ctx.step(`s${i}`, async () => {
          ran.push(`s${i}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
          return i;
        });
      }
      return `sum=${sum}`;
    },
  });
  const sleeper = defineTool({
    name: 'sleeper', description: '', inputSchema: z.object({ ms: z.number() }), execution: 'task',
    handler: async (args, ctx) => {
      await ctx.step('before', async () => ran.push('before'));
      await ctx.sleep((args as { ms: number }).ms);
      await ctx.step('after', async () => ran.push('after'));
      return 'woke';
    },
  });
  const retrying = defineTool({
    name: 'retrying', description: '', inputSchema: z.object({}), execution: 'task',
    handler: async () => {
      ran.push('attempt');
      throw new RetryableError('try later', { delayMs: 1000 });
    },
  });
  const allTools = new Map([stepped, sleeper, retrying].map((t) => [t.name, t]));
  const durableDeps = (overrides: Partial<WorkerDeps['settings']> = {}, now?: () => number): WorkerDeps => ({
    ...deps(overrides), tools: allTools, ...(now ? { now } : {}),
  });

  beforeEach(() => {
    store = new InMemoryTaskStore({ retentionMs: 3_600_000, sweepGraceMs: 60_000, stepRetentionMs: 86_400_000 });
    queue = new InMemoryTaskQueue();
    ran = [];
  });

  it('hands over to a continuation at a step boundary when the invocation budget runs out, and never repeats a step', async () => {
    const taskId = await create('stepped', { steps: 6 });
    let invocations = 0;
    for (; invocations < 20 && (await status(taskId)) === 'working'; invocations++) {
      assert.equal(await processTaskMessage({ taskId, reason: 'continue' }, durableDeps({ invocationBudgetMs: 12 })), 'done');
    }
    const task = await store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'completed');
    assert.deepEqual(task?.status === 'completed' && task.result['content'], [{ type: 'text', text: 'sum=21' }]);
    assert.deepEqual(ran, ['s1', 's2', 's3', 's4', 's5', 's6']);
    assert.ok(invocations > 1, `expected continuations, got ${invocations} invocation(s)`);
    assert.ok(queue.sent.length >= invocations - 1 && queue.sent.every((m) => m.reason === 'continue'));
  });

  it('sleeps durably: releases the task and enqueues a delayed wake-up, then finishes once due', async () => {
    let clock = 1_000_000;
    const taskId = await create('sleeper', { ms: 30 * 60 * 1000 });
    assert.equal(await processTaskMessage({ taskId, reason: 'start' }, durableDeps({}, () => clock)), 'done');
    const waiting = await store.get(taskId, OWNER, clock);
    assert.equal(waiting?.status, 'working');
    assert.equal(waiting?.lease, undefined);
    assert.deepEqual(queue.sent, [{ taskId, reason: 'wake' }]);

    clock += 15 * 60 * 1000; // a 30-minute sleep takes two SQS hops of at most 15 minutes
    await processTaskMessage({ taskId, reason: 'wake' }, durableDeps({}, () => clock));
    assert.equal(await status(taskId), 'working');
    clock += 15 * 60 * 1000;
    await processTaskMessage({ taskId, reason: 'wake' }, durableDeps({}, () => clock));
    assert.equal((await store.get(taskId, OWNER, clock))?.status, 'completed');
    assert.deepEqual(ran, ['before', 'after']);
  });

  it('retries a RetryableError with a delayed message, then fails after the attempt limit', async () => {
    const taskId = await create('retrying');
    for (let attempt = 1; attempt <= 3; attempt++) {
      assert.equal(await processTaskMessage({ taskId, reason: 'retry' }, durableDeps({ maxAttempts: 3 })), 'done');
    }
    const task = await store.get(taskId, OWNER, Date.now());
    assert.equal(task?.status, 'failed');
    assert.match(task?.statusMessage ?? '', /Gave up after 3 attempts: try later/);
    assert.equal(ran.length, 3);
    assert.deepEqual(queue.sent.map((m) => m.reason), ['retry', 'retry']);
  });
});

describe('cancellation and hand-over', () => {
  beforeEach(() => {
    store = new InMemoryTaskStore({ retentionMs: 3_600_000, sweepGraceMs: 60_000, stepRetentionMs: 86_400_000 });
    queue = new InMemoryTaskQueue();
  });

  it('a cancel that arrives just before the handler goes to sleep ends the task cancelled, not asleep', async () => {
    const sleepsAfterCancel = defineTool({
      name: 'sleeps-after-cancel', description: '', inputSchema: z.object({}), execution: 'task',
      handler: async (_a, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, 150)); // the heartbeat sees the cancel meanwhile
        await ctx.sleep(60 * 60 * 1000);
        return 'woke';
      },
    });
    const taskId = await create('sleeps-after-cancel');
    const run = processTaskMessage({ taskId, reason: 'start' }, { ...deps({ cancelCheckMs: 20 }), tools: new Map([[sleepsAfterCancel.name, sleepsAfterCancel]]) });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(await store.cancel(taskId, OWNER, Date.now()), 'requested');
    assert.equal(await run, 'done');
    assert.equal(await status(taskId), 'cancelled');
    assert.deepEqual(queue.sent, []);
  });
});
