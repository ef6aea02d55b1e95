/**
 * The DynamoDB store's callback operations ({@link CallbackStore}), on the
 * task row: the suspension is a blind write under the lease (the row's
 * settlements must still be the ones the run saw), completions and
 * heartbeats read the row, decide (`callbacks-decisions.ts`) and write the
 * difference under the version read, as `answer` does.
 */

import { decideAwaitCallbacks, decideBeatCallback, decideCompleteCallback, suspendMoment } from '../callbacks-decisions.ts';
import { type CompletionResult, type HeartbeatResult, waitDeadline } from '../callbacks-model.ts';
import type { CallbackStore } from '../callbacks-store.ts';
import type { Decision } from '../decisions.ts';
import type { TaskRecord } from '../model.ts';
import { fromItem, number } from './codec.ts';
import { readRow } from './results.ts';
import { backoff, changes, leaseHeldBy, MAX_ATTEMPTS, momentWrite, type StoreTable, shardsOf, updateRow, versionOf } from './update.ts';

/** The worker's callback operation on `table`: a run suspends on its callbacks. */
export function callbackWaits(table: StoreTable): Pick<CallbackStore, 'awaitCallbacks'> {
  return {
    async awaitCallbacks(taskId, leaseOwner, options, now) {
      // A blind write of what `decideAwaitCallbacks` decides; the condition states
      // its rule: lease held, no cancel requested, the settlements as the run saw them.
      // (A working row is on the active index already: only its `sweepAt` moves.)
      const seen = options.seen === undefined ? undefined : JSON.stringify(options.seen);
      const moment = momentWrite(suspendMoment(options, now), options.claimed);
      const guard = leaseHeldBy(leaseOwner, {
        ':false': { BOOL: false },
        ...(seen === undefined ? {} : { ':seen': { S: seen } }),
        ...moment.values,
      });
      const written = await updateRow(table, taskId, {
        set: {
          status: { S: 'working' },
          callbackWait: { S: JSON.stringify(options.wait) },
          sweepAt: number(waitDeadline(options.wait, options.seen)),
          attempts: number(0),
          statusMessage: { S: options.statusMessage },
          lastUpdatedAt: number(now),
          ...(options.progressMark === undefined ? {} : { progressMark: number(options.progressMark) }),
          ...moment.set,
        },
        ...(moment.setExpressions ? { setExpressions: moment.setExpressions } : {}),
        remove: ['leaseOwner', 'leaseUntil'],
        condition: `${guard.condition} AND #cancelRequested = :false AND ${seen === undefined ? 'attribute_not_exists(#callbacks)' : '#callbacks = :seen'}`,
        values: guard.values!,
      });
      if (written) return 'waiting';
      // Refused: tell a lost lease from a completion (or a cancel) that came first.
      const item = await readRow(table, taskId);
      return decideAwaitCallbacks(taskId, item && fromItem(item), leaseOwner, options, now).result;
    },
  };
}

/** The outside system's callback operations on `table`: completions and heartbeats. */
export function callbackCompletions(table: StoreTable): Pick<CallbackStore, 'completeCallback' | 'beatCallback'> {
  return {
    completeCallback: (taskId, callbackId, posted, now) =>
      rewrite<CompletionResult>(table, taskId, (task) => decideCompleteCallback(task, callbackId, posted, now, table.policy)),
    beatCallback: (taskId, callbackId, now) => rewrite<HeartbeatResult>(table, taskId, (task) => decideBeatCallback(task, callbackId, now)),
  };
}

/** Read, decide, write the difference under the version read; decide again on a fresh read when another writer got in between. */
async function rewrite<T>(table: StoreTable, taskId: string, decide: (task: TaskRecord | undefined) => Decision<T>): Promise<T> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    if (attempt > 1) await backoff(attempt - 1, true);
    const item = await readRow(table, taskId);
    const current = item && fromItem(item);
    const { result, next } = decide(current);
    if (!current || !next) return result;
    if (await updateRow(table, taskId, { ...changes(current, next, shardsOf(table.policy)), ...versionOf(current) })) return result;
  }
  throw new Error(`Task kept changing: gave up after ${MAX_ATTEMPTS} attempts`);
}
