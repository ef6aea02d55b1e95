import type { TaskBase } from './model.ts';

/**
 * The TTL a write should advertise: long enough that the task stays readable
 * for `keepMs` from `now`, and never shorter than what was already advertised
 * (spec item 8 lets it change; shortening would break a client's backstop).
 */
export function extendedTtl(task: Pick<TaskBase, 'createdAt' | 'ttlMs'>, now: number, keepMs: number): number {
  return Math.max(task.ttlMs, now - task.createdAt + keepMs);
}

/** Epoch seconds for DynamoDB's TTL attribute (rounded up so it is never early). */
export function expiresAtSeconds(createdAt: number, ttlMs: number): number {
  return Math.ceil((createdAt + ttlMs) / 1000);
}
