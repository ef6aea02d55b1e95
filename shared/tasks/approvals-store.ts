/**
 * The approvals part of the task store port ({@link TaskStore} extends it):
 * what an approver may open of another's task, the questions waiting for
 * people, and a decision given on a task's page. Decisions in
 * `approvals-decisions.ts`; both stores apply them.
 */

import type { Decider, WaitingPage } from './approvals-model.ts';
import type { Decision, TaskRecord } from './model.ts';
import type { AnswerResult, ListOptions } from './store-types.ts';

export interface ApprovalStore {
  /** The task when it waits on a question for a person (what an approver may open), whoever owns it; else `undefined`. */
  getWaitingForPerson(taskId: string, now: number): Promise<TaskRecord | undefined>;

  /**
   * Who decided the question `key` of a task (whoever owns it), while the
   * task is readable at `now`: what an approver whose decision came late
   * is told. Never the answer. `'withdrawn'`: a restart of its workflow
   * withdrew the question before anyone answered it. One read.
   */
  getDecision(taskId: string, key: string, now: number): Promise<Decision | 'withdrawn' | undefined>;

  /**
   * A page of the questions for a person waiting for a decision, of every owner, oldest first (only with `StorePolicy.approvals`).
   * @throws {@link InvalidPageError} for a malformed `after` or `limit`
   */
  listWaitingForPeople(now: number, options: ListOptions): Promise<WaitingPage>;

  /**
   * Records `decider`'s answers given on a task's page, and who decided each question for a person (`approvals-decisions.ts`).
   * @throws {@link TaskNotFoundError} when the decider may not see the task
   * @throws {@link DecisionRefusedError} when a question is not theirs to decide (four eyes, or not for approvers)
   */
  decide(taskId: string, decider: Decider, responses: Record<string, unknown>, now: number): Promise<AnswerResult>;
}
