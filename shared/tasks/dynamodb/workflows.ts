/**
 * The DynamoDB store's workflow operations ({@link WorkflowStore}), on the
 * task row: each reads the row, decides (`workflows-decisions.ts`) and writes
 * the difference under the version read, as `completeCallback` does. The
 * workflow part is one JSON attribute (`workflow`); questions and the end are
 * settlements in `callbacks`, which a suspending run compares with what it saw.
 */
import {
  decideAskFromWorkflow,
  decideDropWorkflowToken,
  decideEndWorkflow,
  decideFollowExecution,
  decideRestartExecution,
  decideWorkflowProgress,
} from '../workflows-decisions.ts';
import type { WorkflowStore } from '../workflows-store.ts';
import { unlistWaiting } from './approvals.ts';
import { rewriteRow } from './rewrite.ts';
import type { StoreTable } from './update.ts';

/** The worker's workflow operations on `table`: the execution a run follows, and a question's token dropped once answered. */
export function workflowRuns(table: StoreTable): Pick<WorkflowStore, 'followExecution' | 'dropWorkflowToken'> {
  return {
    followExecution: (taskId, execution, options) => rewriteRow(table, taskId, (task) => decideFollowExecution(task, execution, options)),
    dropWorkflowToken: (taskId, id) => rewriteRow(table, taskId, (task) => decideDropWorkflowToken(task, id)),
  };
}

/** What an engine reports on `table`, through the task actions: its questions, progress and end, and an execution restarted in its place. */
export function workflowReports(
  table: StoreTable,
): Pick<WorkflowStore, 'askFromWorkflow' | 'workflowProgress' | 'endWorkflow' | 'restartExecution'> {
  return {
    restartExecution: async (taskId, execution, replaced, now) => {
      const restarted = await rewriteRow(table, taskId, (task) => decideRestartExecution(task, execution, replaced, now));
      // The withdrawn questions leave the approvers' list (a page already skips what the row no longer holds open).
      await unlistWaiting(table, taskId, restarted.withdrawn);
      return restarted;
    },
    askFromWorkflow: (taskId, asked, expected, now) =>
      rewriteRow(table, taskId, (task) => decideAskFromWorkflow(task, asked, expected, now, table.policy)),
    workflowProgress: (taskId, execution, expected, message, now) =>
      rewriteRow(table, taskId, (task) => decideWorkflowProgress(task, execution, expected, message, now)),
    endWorkflow: (taskId, end, expected, now) =>
      rewriteRow(table, taskId, (task) => decideEndWorkflow(task, end, expected, now, table.policy)),
  };
}
