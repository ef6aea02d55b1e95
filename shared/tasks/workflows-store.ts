/**
 * The workflow part of the task store port ({@link TaskStore} extends it):
 * what a workflow tool's execution writes on its task (its questions, its
 * progress, its end) and what the task's run records of it (the execution it
 * follows, an answer gone back). Decisions in `workflows-decisions.ts`; both
 * stores apply them. `expected` is the execution the task's binding names,
 * accepted until the row records the one it follows.
 */
import type { CompletionResult } from './callbacks-model.ts';
import type { RestartResult } from './workflows-decisions.ts';
import type { AskedQuestion, ExpectedExecution, FollowOptions, WorkflowEnd, WorkflowWriteResult } from './workflows-model.ts';

export interface WorkflowStore {
  /**
   * Records the execution the task follows, and its engine (one write),
   * unless it follows another already, which is kept, or `options.replacing`
   * names the one it follows. Resolves to the execution it follows;
   * `undefined` when the task has ended or is gone.
   */
  followExecution(taskId: string, execution: string, options?: FollowOptions): Promise<string | undefined>;

  /**
   * Moves the task from `replaced` (or none recorded) to `execution`, started
   * again from the beginning, and withdraws the replaced one's questions
   * (one conditional write; `decideRestartExecution`). `resumes`: the task is
   * due again and the caller enqueues it.
   */
  restartExecution(taskId: string, execution: string, replaced: string, now: number): Promise<RestartResult>;

  /**
   * Records a task-token state's question and its sealed token (one
   * conditional write; the same question again changes nothing). `resumed`:
   * the task was suspended on its workflow and is due again; the caller
   * enqueues it. Throws `LimitExceededError` past the budget.
   */
  askFromWorkflow(taskId: string, asked: AskedQuestion, expected: ExpectedExecution, now: number): Promise<WorkflowWriteResult>;

  /** Records the execution's progress message (the task's status while it is `working`). */
  workflowProgress(
    taskId: string,
    execution: string,
    expected: ExpectedExecution,
    message: string,
    now: number,
  ): Promise<WorkflowWriteResult>;

  /** Removes the token of question `id`, whose answer went back (nothing when it is gone already). */
  dropWorkflowToken(taskId: string, id: string): Promise<void>;

  /**
   * Records the execution's end (first wins): `resumed` when the task was
   * suspended on it, or waiting on one of its questions, and is due again
   * (the caller enqueues it); `not-followed` when the task follows another execution.
   */
  endWorkflow(taskId: string, end: WorkflowEnd, expected: ExpectedExecution, now: number): Promise<CompletionResult | 'not-followed'>;
}
