import { isTerminal, type TaskBase, type TaskRecord } from './model.ts';

/**
 * The TTL a write should advertise: long enough that the task stays readable
 * for `keepMs` from `now`, and never shorter than what was already advertised
 * (spec item 8 lets it change; shortening would break a client's backstop).
 */
export function extendedTtl(task: Pick<TaskBase, 'createdAt' | 'ttlMs'>, now: number, keepMs: number): number {
  return Math.max(task.ttlMs, now - task.createdAt + keepMs);
}

/**
 * The `ttlMs` to advertise at `now`. A terminal task has its final TTL; a task
 * waiting for input until a deadline, the TTL written when it started waiting
 * (which covers that deadline plus the retention). A task
 * still running, or waiting without a deadline, never expires, and says so by always advertising
 * at least `retentionMs` beyond its current age; the TTL it gets on reaching a
 * terminal state (`age + retentionMs` or more) is therefore never shorter than
 * anything advertised before.
 */
export function renderedTtlMs(
  task: Pick<TaskRecord, 'status' | 'createdAt' | 'ttlMs' | 'sweepAt'>,
  now: number,
  retentionMs: number,
): number {
  if (isTerminal(task.status)) return task.ttlMs;
  // A wait for input with a deadline (`sweepAt`): the stored TTL already covers
  // the deadline plus the retention, and the task ends by then (or a sweep
  // later) with a TTL at least as long. Advertising more while it waits past
  // its deadline for the sweeper could exceed the TTL it ends with.
  if (task.status === 'input_required' && task.sweepAt !== undefined) return task.ttlMs;
  return extendedTtl(task, now, retentionMs);
}

/** Epoch seconds for DynamoDB's TTL attribute (rounded up so it is never early). */
export function expiresAtSeconds(createdAt: number, ttlMs: number): number {
  return Math.ceil((createdAt + ttlMs) / 1000);
}
