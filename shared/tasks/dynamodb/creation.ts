/**
 * The DynamoDB store's `create`, the MCP function's: a conditional put of
 * the new row, through an idempotency key's item when the call has one
 * (`idempotent.ts`), under the cap on unfinished tasks (`slots.ts`).
 */
import { newTaskRecord } from '../decisions.ts';
import { isTerminal, type TaskRecord } from '../model.ts';
import { visible } from '../predicates.ts';
import type { TaskStore } from '../store.ts';
import { TaskIdTakenError } from '../store-errors.ts';
import { fromItem, toItem } from './codec.ts';
import { createOnce } from './idempotent.ts';
import { readRow } from './results.ts';
import { freeSlot, takeSlot } from './slots.ts';
import { putRow, type StoreTable, shardsOf } from './update.ts';

/** `create` on `table`. */
export function creation(table: StoreTable): Pick<TaskStore, 'create'> {
  return {
    async create(task, options = {}) {
      const record = newTaskRecord(task, table.policy);
      const capped = table.policy.maxUnfinishedTasks !== undefined;
      if (capped) await takeSlot(table, record.owner, record.taskId, task.now);
      try {
        let created: { task: TaskRecord; created: boolean };
        if (options.idempotencyKey === undefined) {
          created = (await putRow(table, record))
            ? { task: fromItem(toItem(record, shardsOf(table.policy))), created: true }
            : await existing(table, record, options.join === true, task.now);
        } else {
          created = await createOnce(table, record, options.idempotencyKey, task.now);
        }
        // An idempotent retry or a joined call returned an earlier task: this call's slot goes back.
        if (capped && !created.created) await freeSlot(table, record.owner, record.taskId);
        return created;
      } catch (error) {
        if (capped) await freeSlot(table, record.owner, record.taskId);
        throw error;
      }
    },
  };
}

/** The unfinished task already under `record`'s id, for a `create` that may join it (one read). */
async function existing(table: StoreTable, record: TaskRecord, join: boolean, now: number): Promise<{ task: TaskRecord; created: false }> {
  if (!join) throw new Error('Task id collision');
  const item = await readRow(table, record.taskId);
  const found = item && visible(fromItem(item), record.owner, now);
  if (found && !isTerminal(found.status)) return { task: found, created: false };
  throw new TaskIdTakenError(record.taskId);
}
