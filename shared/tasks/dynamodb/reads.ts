/**
 * The DynamoDB store's reads: a task (`get`), an owner's list (`list`, in
 * `list.ts`), and the step journal (`journal.ts`), with `saveStep`, the
 * journal's one write.
 */
import { visible } from '../predicates.ts';
import type { TaskStore } from '../store.ts';
import { fromItem } from './codec.ts';
import { loadJournal, saveStep } from './journal.ts';
import { listPage } from './list.ts';
import { readRow, withResult } from './results.ts';
import type { StoreTable } from './update.ts';

/** `get` on `table`: one strongly consistent read, plus the chunks of a large result. */
export function reading(table: StoreTable): Pick<TaskStore, 'get'> {
  return {
    async get(taskId, owner, now) {
      const item = await readRow(table, taskId);
      const task = item && visible(fromItem(item), owner, now);
      return task && item && withResult(table, task, item);
    },
  };
}

/** `list` on `table`. */
export function listing(table: StoreTable): Pick<TaskStore, 'list'> {
  return { list: (owner, now, options) => listPage(table, owner, now, options) };
}

/** The step journal on `table`: `loadSteps`, `loadJournal`, `saveStep`. */
export function steps(table: StoreTable): Pick<TaskStore, 'loadSteps' | 'loadJournal' | 'saveStep'> {
  return {
    loadSteps: async (taskId) => new Map([...(await loadJournal(table, taskId))].map(([name, step]) => [name, step.value])),
    loadJournal: (taskId) => loadJournal(table, taskId),
    saveStep: (taskId, step) => saveStep(table, taskId, step),
  };
}
