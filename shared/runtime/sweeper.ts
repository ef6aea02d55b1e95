import type { TaskSettings } from '../config.ts';
import { errorName, type Log } from '../log.ts';
import type { TaskQueue } from '../queue/queue.ts';
import type { TaskStore } from '../tasks/store.ts';
import { sweepWindow } from '../tasks/transitions.ts';

export interface SweeperDeps {
  store: TaskStore;
  queue: TaskQueue;
  settings: Pick<TaskSettings, 'leaseMs' | 'sweepGraceMs'>;
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
export async function sweep(deps: SweeperDeps, limit = 100): Promise<{ requeued: string[] }> {
  const now = (deps.now ?? Date.now)();
  const requeued: string[] = [];
  for (const taskId of await deps.store.findDue(now, limit)) {
    try {
      if (!(await deps.store.reschedule(taskId, now, now + sweepWindow(deps.settings)))) continue;
      await deps.queue.send({ taskId, reason: 'sweep' });
    } catch (error) {
      // One task's failure does not stop the sweep; the task is due again next time.
      deps.log({ event: 'sweep-failed', taskId, error: errorName(error) });
      continue;
    }
    requeued.push(taskId);
    deps.log({ event: 'swept', taskId });
  }
  return { requeued };
}
