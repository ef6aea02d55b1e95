/**
 * The DynamoDB store's read-decide-write loop (`answer`, `cancel`, `fail`,
 * `decide`, `expireWait`) and the smallest write that ends a task whose row
 * DynamoDB refused.
 */

import type { Decision } from '../decisions.ts';
import { isTerminal, type TaskRecord } from '../model.ts';
import { TaskRowRejectedError } from '../store-errors.ts';
import { fromItem, type Item } from './codec.ts';
import { countRunEnded } from './repeats.ts';
import { readRow } from './results.ts';
import { freeSlot } from './slots.ts';
import {
  backoff,
  changes,
  MAX_ATTEMPTS,
  type MinimalOutcome,
  minimalEnd,
  type RowWrite,
  rejectedMessage,
  type StoreTable,
  shardsOf,
  updateRow,
  versionOf,
} from './update.ts';

/**
 * Read, decide, write `next` only if the row is still the version read;
 * when another writer got in between, decide again on a fresh read. The
 * result of a chunked row is not loaded: terminal rows are never rewritten.
 */
export async function rewriteRow<T>(
  table: StoreTable,
  taskId: string,
  decide: (task: TaskRecord | undefined) => Decision<T>,
  /** A write that needs no version guard for this decision (or `skip`: none at all). */
  unordered?: (current: TaskRecord, decision: Decision<T>) => RowWrite | 'skip' | undefined,
): Promise<T> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    if (attempt > 1) await backoff(attempt - 1, true);
    const item = await readRow(table, taskId);
    const current = item && fromItem(item);
    const decision = decide(current);
    const { result, next } = decision;
    if (!current || !next) return result;
    const own = unordered?.(current, decision);
    if (own === 'skip') return result;
    const write: RowWrite = own ?? { ...changes(current, next, shardsOf(table.policy)), ...versionOf(current) };
    let written: Item | undefined;
    try {
      written = await updateRow(table, taskId, write);
    } catch (error) {
      if (!(error instanceof TaskRowRejectedError) || !isTerminal(next.status)) throw error;
      // The row cannot take this change (e.g. it is at the size limit):
      // end the task as decided through a write that also slims the row.
      const outcome = next.status === 'failed' ? { status: 'failed' as const, error: next.error } : { status: 'cancelled' as const };
      const message = rejectedMessage(error, next.status === 'cancelled' ? 'it was cancelled' : 'it failed');
      if (await endMinimal(table, current, outcome, message, next.lastUpdatedAt, versionOf(current))) return result;
      continue;
    }
    if (written) {
      if (isTerminal(next.status)) {
        await freeSlot(table, current.owner, taskId);
        await countRunEnded(table, current);
      }
      return result;
    }
  }
  throw new Error(`Task kept changing: gave up after ${MAX_ATTEMPTS} attempts`);
}

/**
 * Ends a task through the smallest write that can ({@link minimalEnd}),
 * which only ever shrinks the row: used when DynamoDB refused the regular
 * write. Resolves to the ended record, or `undefined` when `guard` failed.
 */
export async function endMinimal(
  table: StoreTable,
  task: TaskRecord,
  outcome: MinimalOutcome,
  statusMessage: string,
  now: number,
  guard: Pick<RowWrite, 'condition' | 'values'>,
): Promise<TaskRecord | undefined> {
  const written = await updateRow(table, task.taskId, {
    ...minimalEnd(task, outcome, statusMessage, now, table.policy),
    ...guard,
    returnValues: 'ALL_NEW',
  });
  if (!written) return undefined;
  await freeSlot(table, task.owner, task.taskId);
  await countRunEnded(table, task);
  return fromItem(written);
}
