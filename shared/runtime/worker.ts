import { randomUUID } from 'node:crypto';
import type { TaskSettings } from '../config.ts';
import type { TaskOutcome, TaskRecord } from '../tasks/model.ts';
import { LeaseLostError, type TaskStore } from '../tasks/store.ts';
import type { TaskMessage } from '../queue/queue.ts';
import { runTool, type RunOutcome } from './run.ts';
import type { ToolDefinition } from './tool.ts';

export interface WorkerDeps {
  store: TaskStore;
  tools: ReadonlyMap<string, ToolDefinition>;
  settings: Pick<TaskSettings, 'leaseMs' | 'cancelCheckMs' | 'progressIntervalMs'>;
  now?: () => number;
  log?: (event: Record<string, unknown>) => void;
}

/**
 * What became of a message: `done` removes it from the queue; `retry` leaves
 * it for redelivery (after the last attempt it reaches the dead-letter queue).
 */
export type Disposition = 'done' | 'retry';

/** The error a task ends with once every delivery attempt failed unexpectedly. */
export const EXHAUSTED_ERROR = { code: -32603, message: 'Internal error' } as const;

/**
 * Runs the task a message points at.
 *
 * 1. Claim the lease (one conditional write). No lease means there is nothing
 *    to do: the task is gone, terminal, waiting for input or already running.
 * 2. Run the handler, replaying recorded answers; progress writes and a
 *    periodic read carry cancellation to `ctx.signal`.
 * 3. Write the outcome under the lease (one conditional write).
 *
 * An unexpected exception releases the lease and asks for redelivery.
 */
export async function processTaskMessage(message: TaskMessage, deps: WorkerDeps): Promise<Disposition> {
  const now = deps.now ?? Date.now;
  const log = deps.log ?? (() => {});
  const leaseOwner = randomUUID();
  const task = await deps.store.claim(message.taskId, leaseOwner, now(), deps.settings.leaseMs);
  if (!task) {
    log({ event: 'skip', taskId: message.taskId, reason: message.reason });
    return 'done';
  }
  const finish = (outcome: TaskOutcome) => finishUnderLease(deps.store, task, leaseOwner, outcome, now());
  if (task.cancelRequested) return finish({ status: 'cancelled' });

  const tool = deps.tools.get(task.tool);
  if (!tool) return finish({ status: 'failed', error: { code: -32602, message: `Unknown tool: ${task.tool}` } });

  const cancel = new AbortController();
  const watcher = watchCancellation(deps, task, cancel, now);
  try {
    const outcome = await runTool(tool, task.arguments, {
      taskId: task.taskId,
      clientCapabilities: task.clientCapabilities,
      answers: task.inputResponses,
      cancel: cancel.signal,
      progress: watcher.progress,
    });
    log({ event: 'ran', taskId: task.taskId, tool: task.tool, outcome: outcome.kind });
    return await finish(toTaskOutcome(outcome));
  } catch (error) {
    if (error instanceof LeaseLostError) return 'done';
    log({ event: 'error', taskId: task.taskId, tool: task.tool, error: error instanceof Error ? error.name : 'unknown' });
    await deps.store.release(task.taskId, leaseOwner);
    return 'retry';
  } finally {
    watcher.stop();
  }
}

async function finishUnderLease(store: TaskStore, task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<Disposition> {
  try {
    await store.finish(task, leaseOwner, outcome, now);
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
  }
  return 'done';
}

/** Maps a run to a task outcome (spec items 50–52: tool errors complete, protocol errors fail). */
export function toTaskOutcome(outcome: RunOutcome): TaskOutcome {
  switch (outcome.kind) {
    case 'result':
      return { status: 'completed', result: { ...outcome.result, resultType: 'complete' } };
    case 'protocol-error':
      return { status: 'failed', error: outcome.error, statusMessage: outcome.error.message };
    case 'input':
      return { status: 'input_required', inputRequests: outcome.inputRequests };
    case 'cancelled':
      return { status: 'cancelled', statusMessage: 'Cancelled at the client\'s request' };
  }
}

/**
 * Carries cancellation to the handler. Progress writes return the
 * `cancelRequested` flag at no extra cost; when the handler is quiet, one
 * consistent read every `cancelCheckMs` does the same.
 */
function watchCancellation(deps: WorkerDeps, task: TaskRecord, cancel: AbortController, now: () => number) {
  let lastProgress = 0;
  let lastCheck = now();
  const seen = (cancelRequested: boolean) => {
    lastCheck = now();
    if (cancelRequested && !cancel.signal.aborted) cancel.abort(new Error('cancelled'));
  };
  const timer = setInterval(() => {
    if (now() - lastCheck < deps.settings.cancelCheckMs) return;
    deps.store.get(task.taskId, task.owner, now()).then(
      (current) => seen(current === undefined || current.cancelRequested || current.status !== 'working'),
      () => {},
    );
  }, Math.max(50, Math.floor(deps.settings.cancelCheckMs / 2)));
  return {
    async progress(message: string) {
      if (now() - lastProgress < deps.settings.progressIntervalMs) return;
      lastProgress = now();
      const { cancelRequested } = await deps.store.progress(task, leaseOwnerOf(task), message, now());
      seen(cancelRequested);
    },
    stop: () => clearInterval(timer),
  };
}

function leaseOwnerOf(task: TaskRecord): string {
  if (!task.lease) throw new LeaseLostError(task.taskId);
  return task.lease.owner;
}
