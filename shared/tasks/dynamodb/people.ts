/**
 * The DynamoDB store's operations that people's actions reach through the
 * task actions: answers in band and decisions on the console's pages, the
 * reads the approvers' pages make, and cancels. Each reads the row, decides
 * (`approvals-decisions.ts`, `decisions.ts`) and writes the difference under
 * the version read (`rewrite.ts`).
 */
import { decideInBandAnswer, decideOnPage, lateDecision, waitingForPerson } from '../approvals-decisions.ts';
import { decideCancel } from '../decisions.ts';
import { isRunning } from '../model.ts';
import type { TaskStore } from '../store.ts';
import { listWaitingPage, unlistWaiting } from './approvals.ts';
import { fromItem, number } from './codec.ts';
import { readRow } from './results.ts';
import { rewriteRow } from './rewrite.ts';
import type { StoreTable } from './update.ts';

/** Answers, decisions and the reads of questions for a person on `table`. */
export function answering(
  table: StoreTable,
): Pick<TaskStore, 'answer' | 'decide' | 'getDecision' | 'getWaitingForPerson' | 'listWaitingForPeople'> {
  return {
    async answer(taskId, owner, responses, now, options) {
      const result = await rewriteRow(table, taskId, (task) =>
        decideInBandAnswer(taskId, task, owner, responses, now, table.policy, options),
      );
      await unlistWaiting(table, taskId, result.decided);
      return result;
    },
    async decide(taskId, decider, responses, now) {
      const result = await rewriteRow(table, taskId, (task) => decideOnPage(taskId, task, decider, responses, now, table.policy));
      await unlistWaiting(table, taskId, result.decided);
      return result;
    },
    async getDecision(taskId, key, now) {
      const item = await readRow(table, taskId);
      return lateDecision(item && fromItem(item), key, now);
    },
    async getWaitingForPerson(taskId, now) {
      const item = await readRow(table, taskId);
      return waitingForPerson(item && fromItem(item), now);
    },
    listWaitingForPeople: (now, options) => listWaitingPage(table, now, options),
  };
}

/** `cancel` on `table`. */
export function cancelling(table: StoreTable): Pick<TaskStore, 'cancel'> {
  return {
    cancel: (taskId, owner, now, options = {}) =>
      rewriteRow(
        table,
        taskId,
        (task) => decideCancel(taskId, task, owner, now, table.policy, options),
        (current, decision) => {
          // A suspended run woken to run its `onCancel` is written under the version read.
          if (decision.result.result !== 'requested' || !isRunning(current, now)) return undefined;
          // Requesting cancellation of a running task only ever sets one flag:
          // concurrent cancels (and the worker's heartbeats) need not be ordered,
          // so the write is guarded by the rule (still this status, lease still
          // live), not by the version read. Already requested: nothing to write.
          if (current.cancelRequested) return 'skip';
          const next = decision.next;
          return {
            set: {
              cancelRequested: { BOOL: true },
              ...(next?.cancelMessage === undefined ? {} : { cancelMessage: { S: next.cancelMessage } }),
            },
            condition: '#status = :readStatus AND #leaseUntil > :now',
            values: { ':readStatus': { S: current.status }, ':now': number(now) },
          };
        },
      ),
  };
}
