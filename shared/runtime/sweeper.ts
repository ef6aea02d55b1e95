import type { TaskSettings } from '../config.ts';
import { formatDuration } from '../durations.ts';
import type { LifecycleEvents } from '../events/publisher.ts';
import { errorName, type Log } from '../log.ts';
import { logTaskEnded } from '../metrics.ts';
import type { TaskQueue } from '../queue/queue.ts';
import type { JsonRpcErrorObject } from '../tasks/model.ts';
import { sweepWindow } from '../tasks/predicates.ts';
import type { TaskStore } from '../tasks/store.ts';

/** The store's operations the sweeper calls. */
export type SweeperStore = Pick<TaskStore, 'findDue' | 'reschedule' | 'expireWait'>;

import { INTERNAL_ERROR } from '../wire.ts';

export interface SweeperDeps {
  store: SweeperStore;
  queue: TaskQueue;
  config: Pick<TaskSettings, 'leaseMs' | 'sweepGraceMs'> & Partial<Pick<TaskSettings, 'maxInputWaitMs'>>;
  now?: () => number;
  log: Log;
  /** Lifecycle events of the waits ended here; absent: none. */
  events?: LifecycleEvents;
}

/** Due tasks one index read returns: a page of the backlog. */
export const SWEEP_PAGE = 100;

/**
 * Most due tasks handled at once (each is one conditional write and one SQS
 * send, tens of milliseconds on AWS): the parallelism grows with the page
 * found, up to this, so a quiet run makes few calls at once and a backlog is
 * drained about this many times faster than one by one.
 */
export const SWEEP_MAX_PARALLELISM = 32;

/**
 * How long one run keeps reading pages when it is given no deadline (the
 * local stack; deployed, the function's remaining time less
 * {@link SWEEP_DEADLINE_MARGIN_MS} bounds it): below the sweeper's timeout,
 * so runs end before the next one starts.
 */
const SWEEP_RUN_BUDGET_MS = 20_000;

/** Time left for the last page's writes and sends when a run stops starting pages. */
export const SWEEP_DEADLINE_MARGIN_MS = 5_000;

export interface SweepOptions {
  /** Epoch ms after which no new page is started (default: {@link SWEEP_RUN_BUDGET_MS} from now). */
  deadline?: number;
  /** Tasks per index read (default {@link SWEEP_PAGE}). */
  page?: number;
  /** Most tasks handled at once (default {@link SWEEP_MAX_PARALLELISM}). */
  maxParallelism?: number;
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
 *
 * The per-run amount follows the load: a run reads page after page of due
 * tasks (earliest first) until a page comes back short, holds nothing new
 * (a task that could be neither rescheduled nor expired stays due and is
 * not retried within the run), or the deadline passes; each page is handled
 * with up to {@link SWEEP_MAX_PARALLELISM} tasks at once.
 */
export async function sweep(deps: SweeperDeps, options: SweepOptions = {}): Promise<{ requeued: string[]; expired: string[] }> {
  const clock = deps.now ?? Date.now;
  const deadline = options.deadline ?? clock() + SWEEP_RUN_BUDGET_MS;
  const page = options.page ?? SWEEP_PAGE;
  const requeued: string[] = [];
  const expired: string[] = [];
  const seen = new Set<string>();
  for (;;) {
    const now = clock();
    const due = await deps.store.findDue(now, page);
    const fresh = due.filter((taskId) => !seen.has(taskId));
    for (const taskId of fresh) seen.add(taskId);
    const parallelism = Math.max(1, Math.min(options.maxParallelism ?? SWEEP_MAX_PARALLELISM, fresh.length));
    await inParallel(fresh, parallelism, async (taskId) => {
      // Each write's own time: an end decided with a stale clock could be earlier than a read of the task before it landed.
      const outcome = await sweepOne(deps, taskId, clock());
      if (outcome === 'requeued') requeued.push(taskId);
      if (outcome === 'expired') expired.push(taskId);
    });
    if (due.length < page || fresh.length === 0 || clock() >= deadline) break;
  }
  return { requeued, expired };
}

/** One due task: re-enqueued if it is working, ended if its wait for input is past its deadline. */
async function sweepOne(deps: SweeperDeps, taskId: string, now: number): Promise<'requeued' | 'expired' | 'none'> {
  try {
    if (await deps.store.reschedule(taskId, now, now + sweepWindow(deps.config))) {
      await deps.queue.send({ taskId, reason: 'sweep' });
      deps.log({ event: 'swept', taskId });
      return 'requeued';
    }
    // Not a working task (or another sweeper got there): a wait for input past its deadline?
    const { error, statusMessage } = inputWaitExpired(deps.config.maxInputWaitMs);
    const failed = await deps.store.expireWait(taskId, { error, statusMessage, now });
    if (!failed) return 'none';
    logTaskEnded(deps.log, failed, 'failed', now, { reason: 'input-wait-expired' });
    await deps.events?.announce(failed);
    return 'expired';
  } catch (error) {
    // One task's failure does not stop the sweep; the task is due again next run.
    deps.log({ event: 'sweep-failed', taskId, error: errorName(error) });
    return 'none';
  }
}

/** Runs `work` on every item, at most `parallelism` at once (`work` does not throw: `sweepOne` handles its errors). */
async function inParallel<T>(items: readonly T[], parallelism: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, items.length) }, lane));
}

/** The error of a task that waited for input too long (`maxInputWaitMs`, when known, is named in it). */
export function inputWaitExpired(maxInputWaitMs?: number): { error: JsonRpcErrorObject; statusMessage: string } {
  const limit = maxInputWaitMs === undefined ? '' : ` (${formatDuration(maxInputWaitMs)})`;
  const message = `The task waited for input longer than the server allows${limit} and was abandoned`;
  return { error: { code: INTERNAL_ERROR, message }, statusMessage: message };
}
