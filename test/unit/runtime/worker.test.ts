import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as z from 'zod';
import { processTaskMessage, type WorkerDeps } from '../../../shared/runtime/worker.ts';
import { defineTool, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory-store.ts';

const OWNER = 'alice';
let store: InMemoryTaskStore;
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
  return { store, tools, settings: { leaseMs: 60_000, cancelCheckMs: 50, progressIntervalMs: 0, ...overrides } };
}

async function create(tool: string) {
  const task = await store.create({
    taskId: `task-${tool}-${Math.random()}`, owner: OWNER, tool, arguments: {}, clientCapabilities: { elicitation: {} },
    inputResponses: {}, now: Date.now(), ttlMs: 3_600_000, pollIntervalMs: 1000,
  });
  return task.taskId;
}

const status = async (taskId: string) => (await store.get(taskId, OWNER, Date.now()))?.status;

describe('processTaskMessage', () => {
  beforeEach(() => {
    store = new InMemoryTaskStore({ retentionMs: 3_600_000 });
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
