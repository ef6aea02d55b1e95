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

/** The workflow operations on `table`. */
export function dynamoDbWorkflows(table: StoreTable): WorkflowStore {
  return {
    followExecution: (taskId, execution, replacing) =>
      rewriteRow(table, taskId, (task) => decideFollowExecution(task, execution, replacing)),
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
    dropWorkflowToken: (taskId, id) => rewriteRow(table, taskId, (task) => decideDropWorkflowToken(task, id)),
    endWorkflow: (taskId, end, expected, now) =>
      rewriteRow(table, taskId, (task) => decideEndWorkflow(task, end, expected, now, table.policy)),
  };
}
