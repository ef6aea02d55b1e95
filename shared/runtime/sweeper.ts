import type { TaskSettings } from '../config.ts';
import { errorName, type Log } from '../log.ts';
import { logTaskEnded } from '../metrics.ts';
import type { TaskQueue } from '../queue/queue.ts';
import type { JsonRpcErrorObject } from '../tasks/model.ts';
import type { TaskStore } from '../tasks/store.ts';
import { sweepWindow } from '../tasks/transitions.ts';
import { INTERNAL_ERROR } from '../wire.ts';

export interface SweeperDeps {
  store: TaskStore;
  queue: TaskQueue;
  settings: Pick<TaskSettings, 'leaseMs' | 'sweepGraceMs'> & Partial<Pick<TaskSettings, 'maxInputWaitMs'>>;
  now?: () => number;
  log: Log;
}

/**
 * Finds work nobody is doing and puts it back on the queue: a task whose
 * start message was never enqueued, whose worker vanished (lease expired,
 * message lost), or whose continuation or wake-up went missing. The store's
 * sparse index of non-terminal tasks makes this a query, never a scan.
 *
 * Each due task is first rescheduled (a conditional write, so two sweepers
 * never both take it), then enqueued. It is rescheduled one lease plus the
 * grace ahead, like a new task: the message is claimed about now, and its
 * run holds a lease. A task that was merely slow (or claimed late, see the
 * store's `sweepAt` schedule) gets a duplicate message, which its lease makes
 * harmless.
 */
export async function sweep(deps: SweeperDeps, limit = 100): Promise<{ requeued: string[]; expired: string[] }> {
  const now = (deps.now ?? Date.now)();
  const requeued: string[] = [];
  const expired: string[] = [];
  for (const taskId of await deps.store.findDue(now, limit)) {
    try {
      if (await deps.store.reschedule(taskId, now, now + sweepWindow(deps.settings))) {
        await deps.queue.send({ taskId, reason: 'sweep' });
        requeued.push(taskId);
        deps.log({ event: 'swept', taskId });
        continue;
      }
      // Not a working task (or another sweeper got there): a wait for input past its deadline?
      const { error, statusMessage } = inputWaitExpired(deps.settings.maxInputWaitMs);
      const failed = await deps.store.expireWait(taskId, error, statusMessage, now);
      if (!failed) continue;
      expired.push(taskId);
      logTaskEnded(deps.log, failed, 'failed', now, { reason: 'input-wait-expired' });
    } catch (error) {
      // One task's failure does not stop the sweep; the task is due again next time.
      deps.log({ event: 'sweep-failed', taskId, error: errorName(error) });
    }
  }
  return { requeued, expired };
}

/** The error of a task that waited for input too long (`maxInputWaitMs`, when known, is named in it). */
export function inputWaitExpired(maxInputWaitMs?: number): { error: JsonRpcErrorObject; statusMessage: string } {
  const limit = maxInputWaitMs === undefined ? '' : ` (${formatDuration(maxInputWaitMs)})`;
  const message = `The task waited for input longer than the server allows${limit} and was abandoned`;
  return { error: { code: INTERNAL_ERROR, message }, statusMessage: message };
}

function formatDuration(ms: number): string {
  const units: Array<[string, number]> = [
    ['days', 86_400_000],
    ['hours', 3_600_000],
    ['minutes', 60_000],
    ['seconds', 1000],
  ];
  for (const [name, size] of units) if (ms % size === 0 && ms >= size) return `${ms / size} ${ms === size ? name.slice(0, -1) : name}`;
  return `${ms} ms`;
}
