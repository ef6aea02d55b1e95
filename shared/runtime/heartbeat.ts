import type { TaskSettings } from '../config.ts';
import { errorName, type Log } from '../log.ts';
import { MAX_STATUS_MESSAGE_BYTES, truncateUtf8 } from '../tasks/limits.ts';
import type { TaskRecord } from '../tasks/model.ts';
import type { TaskStore } from '../tasks/store.ts';
import { LeaseLostError } from '../tasks/store-errors.ts';

/** What a heartbeat writes with and how often (a worker's dependencies provide it). */
export interface HeartbeatDeps {
  store: Pick<TaskStore, 'heartbeat' | 'get'>;
  config: Pick<TaskSettings, 'leaseMs' | 'cancelCheckMs' | 'progressIntervalMs'>;
  log: Log;
}

/** A running heartbeat: the run's progress goes through it; `stop` ends it. */
export interface Heartbeat {
  /** Writes a progress message, throttled (`progressIntervalMs`) and truncated to the status message limit. */
  progress(message: string): Promise<void>;
  stop(): void;
}

/**
 * Keeps the lease alive and carries cancellation to the handler. A renewal is
 * due once a third of the lease has passed since the last one (the claim
 * counts as one); it is the only write that moves `sweepAt`, an index key.
 * Every `cancelCheckMs` the timer renews the lease when that is due, and
 * otherwise reads the task (a read costs a fifth of a write). Progress
 * messages are written throttled (`progressIntervalMs`), without renewing the
 * lease unless a renewal is due, in which case one write does both. Every
 * write and read reports `cancelRequested`.
 */
export function startHeartbeat(
  deps: HeartbeatDeps,
  task: TaskRecord,
  leaseOwner: string,
  cancel: AbortController,
  now: () => number,
): Heartbeat {
  const { taskId, owner } = task;
  const { leaseMs, cancelCheckMs, progressIntervalMs } = deps.config;
  let renewedAt = now();
  let lastProgress = 0;
  let busy = false;
  const seen = (cancelRequested: boolean) => {
    if (cancelRequested && !cancel.signal.aborted) cancel.abort(new Error('cancelled'));
  };
  const renewalDue = () => now() - renewedAt >= leaseMs / 3;
  const write = async (renew: boolean, statusMessage?: string) => {
    const at = now();
    if (renew) renewedAt = at;
    const options = { ...(renew ? { leaseMs } : {}), ...(statusMessage === undefined ? {} : { statusMessage }) };
    const { cancelRequested } = await deps.store.heartbeat(taskId, leaseOwner, at, options);
    seen(cancelRequested);
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const check = renewalDue()
      ? write(true)
      : deps.store.get(taskId, owner, now()).then((current) => seen(current?.cancelRequested ?? true));
    check
      .catch((error: unknown) => {
        // A lost lease means another worker owns the task now: stop this run.
        if (error instanceof LeaseLostError) cancel.abort(error);
        // Anything else is retried at the next tick; the lease has two more thirds to go.
        else deps.log({ event: 'heartbeat-failed', taskId, error: errorName(error) });
      })
      .finally(() => (busy = false));
  }, cancelCheckMs);
  return {
    async progress(message: string) {
      if (now() - lastProgress < progressIntervalMs) return;
      lastProgress = now();
      await write(renewalDue(), truncateUtf8(message, MAX_STATUS_MESSAGE_BYTES));
    },
    stop: () => clearInterval(timer),
  };
}
