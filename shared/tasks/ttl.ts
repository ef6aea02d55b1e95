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
 * How far a reader's clock may run ahead of the decision that ends a task:
 * the end's `now` is taken before its write lands (and by another function's
 * clock), so a read in between still sees the task unfinished at a later
 * `now`. What an unfinished task advertises is measured this much behind the
 * reader's clock, so the TTL it ends with is never shorter.
 */
export const CLOCK_MARGIN_MS = 5_000;

/**
 * The `ttlMs` to advertise at `now`. A terminal task has its final TTL,
 * `end + retentionMs`. An unfinished one (working, or waiting for input
 * with or without a deadline) never expires, and says so by advertising
 * `retentionMs` beyond its current age (less {@link CLOCK_MARGIN_MS}): what
 * it advertises only grows, and the TTL it gets at its end is never shorter
 * than anything advertised before. (Rows of earlier releases that stored a
 * waiting task's deadline plus the retention as its `ttlMs` keep
 * advertising that, and end with it.)
 */
export function renderedTtlMs(task: Pick<TaskRecord, 'status' | 'createdAt' | 'ttlMs'>, now: number, retentionMs: number): number {
  if (isTerminal(task.status)) return task.ttlMs;
  return extendedTtl(task, now - CLOCK_MARGIN_MS, retentionMs);
}

/** Epoch seconds for DynamoDB's TTL attribute (rounded up so it is never early). */
export function expiresAtSeconds(createdAt: number, ttlMs: number): number {
  return Math.ceil((createdAt + ttlMs) / 1000);
}
