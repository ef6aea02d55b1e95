/**
 * The world the worker's unit tests run in: an in-memory store and queue
 * emptied by {@link freshWorld} (call it in a `beforeEach`), a few tools
 * (one counts its runs in {@link world}), and the worker's deps over them.
 */
import * as z from 'zod';
import { DEFAULT_SETTINGS } from '../../shared/config.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { defineTool, type ToolDefinition } from '../../shared/runtime/tool.ts';
import type { WorkerDeps } from '../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory/index.ts';
import { newTask, storePolicy } from './factories.ts';
import { sleep } from './wait.ts';

export const OWNER = 'alice';
export const LEASE_MS = 60_000;
export const POLICY = storePolicy({ retentionMs: 3_600_000, sweepGraceMs: 60_000, leaseMs: LEASE_MS });
/** The store, the queue and the runs of `counted` the current test sees. */
export const world = { store: new InMemoryTaskStore(POLICY), queue: new InMemoryTaskQueue(), executions: 0 };

/** Empties the world: a new store and queue, no runs. */
export function freshWorld(): void {
  world.store = new InMemoryTaskStore(POLICY);
  world.queue = new InMemoryTaskQueue();
  world.executions = 0;
}

export const counted = defineTool({
  name: 'counted',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async () => {
    world.executions += 1;
    return 'ok';
  },
});
export const flaky = defineTool({
  name: 'flaky',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async () => {
    throw new Error('connection reset');
  },
});
export const waitsForCancel = defineTool({
  name: 'waits',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: (_a, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
});
export const reportsProgress = defineTool({
  name: 'progress',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_a, ctx) => {
    for (let i = 0; i < 50 && !ctx.signal.aborted; i++) {
      await ctx.progress(`step ${i}`);
      await sleep(5);
    }
    ctx.signal.throwIfAborted();
    return 'finished';
  },
});
export const asks = defineTool({
  name: 'asks',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_a, ctx) => {
    const answer = await ctx.elicit('ok', { message: 'OK?', requestedSchema: { type: 'object', properties: {} } });
    return `answered ${answer.action}`;
  },
});

export const asksPerson = defineTool({
  name: 'asks_person',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  answeredBy: 'person',
  handler: async (_a, ctx) => {
    await ctx.progress('checking');
    const answer = await ctx.elicit('ok', { message: 'OK?', requestedSchema: { type: 'object', properties: {} } });
    return `answered ${answer.action}`;
  },
});

export const tools: ReadonlyMap<string, ToolDefinition> = new Map(
  [counted, flaky, waitsForCancel, reportsProgress, asks, asksPerson].map((t) => [t.name, t]),
);

export function deps(overrides: Partial<WorkerDeps['config']> = {}): WorkerDeps {
  return {
    store: world.store,
    queue: world.queue,
    tools,
    log: () => {},
    config: { ...DEFAULT_SETTINGS, leaseMs: LEASE_MS, cancelCheckMs: 50, progressIntervalMs: 0, ...overrides },
  };
}

export async function create(tool: string, args: Record<string, unknown> = {}) {
  const { task } = await world.store.create(
    newTask({
      taskId: `task-${tool}-${Math.random()}`,
      owner: OWNER,
      tool,
      arguments: args,
      clientCapabilities: { elicitation: {} },
      now: Date.now(),
      ttlMs: 3_600_000,
    }),
  );
  return task.taskId;
}

export const status = async (taskId: string) => (await world.store.get(taskId, OWNER, Date.now()))?.status;

/** Resolves once every promise callback queued so far has run (timers are not involved). */
export function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Runs `step` until `check` holds (at most 100 times). */
export async function until(check: () => boolean, step: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await step();
  if (!check()) throw new Error('the condition never held');
}
