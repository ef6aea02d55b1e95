/**
 * What a task row keeps of a workflow tool's execution (a Step Functions
 * state machine run as one task): the execution the task follows, the
 * questions its task-token states asked, the sealed task tokens still to be
 * answered, and its last progress message. The execution's end and its
 * questions are recorded as the row's callback settlements
 * (`callbacks-model.ts`), under ids of their own, so a suspended run is woken,
 * and a running one signalled, exactly as a callback's completion does.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */

import { canonicalJson } from '../canonical-json.ts';

/** The row's callback settlements, as far as this module reads them (`CallbackSettlement` in `callbacks-model.ts`). */
type Settlements = Record<string, object>;

/** The workflow part of a task row (absent: not a workflow tool, or nothing started yet). */
export interface WorkflowRecord {
  /**
   * The engine the execution runs on (`EngineName` in `shared/engines/port.ts`):
   * absent on rows written before engines had names, which are Step Functions'.
   */
  engine?: string;
  /** The ARN of the execution the task follows: questions and the end are accepted from it only. */
  execution?: string;
  /**
   * The task tokens of the questions not answered back yet, by question id,
   * each sealed under its own key purpose (`workflow-task-token`): secrets,
   * never logged, shown or put in an event; removed once the answer went
   * back, and with the rest of the row's workflow part when the task ends.
   */
  tokens?: Record<string, string>;
  /** The execution's last progress message, the status while it runs (absent: "Running <workflow>"). */
  progress?: string;
}

/** How `followExecution` (`workflows-store.ts`) records an execution. */
export interface FollowOptions {
  /** The execution the task follows that this one replaces (a local restart). */
  replacing?: string;
  /** The engine it runs on, recorded with it (`WorkflowRecord.engine`). */
  engine?: string;
}

/**
 * The execution a task's binding names, for a task whose row records none
 * yet (the bound machine's execution named by the task id); `undefined`: none.
 */
export type ExpectedExecution = (task: { taskId: string; tool: string }) => string | undefined;

/** The callback id the execution's end is recorded under (a callback's own ids start with `cb_`). */
export const WORKFLOW_END_ID = 'workflow';

/** The prefix of the callback ids questions are recorded under (followed by a digest of their task token). */
export const WORKFLOW_QUESTION_PREFIX = 'workflow-question:';

/** The statuses an execution ends with. */
export type WorkflowEndStatus = 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** How an execution ended, as its status-change event (or one `DescribeExecution`) tells it. */
export interface WorkflowEnd {
  status: WorkflowEndStatus;
  /** The execution's ARN. */
  execution: string;
  /** SUCCEEDED: the output, parsed, when it came with the event and is small enough to keep on the row. */
  output?: unknown;
  /** SUCCEEDED: the output was left out (too large for the event or the row): one `DescribeExecution` reads it. */
  outputOmitted?: true;
  /** FAILED, TIMED_OUT, ABORTED: the error and cause given, if any (cut to fit the row). */
  error?: string;
  cause?: string;
}

/** A question a task-token state asked, as the row records it (its token apart, in {@link WorkflowRecord.tokens}). */
export interface WorkflowQuestion {
  /** 1 for the execution's first question, and so on: the order they are asked on the task in. */
  n: number;
  /** The key of its input request on the task: the state's `key`, or `key#n` when an earlier question took it. */
  key: string;
  /** The state's name, when the payload gave it (`$$.State.Name`): named when the state stopped waiting. */
  state?: string;
  message: string;
  requestedSchema: Record<string, unknown>;
  answeredBy?: 'person';
  fourEyes?: boolean;
  /**
   * The execution that asked it was replaced by a restart: it is no longer
   * open, and nothing goes back to its token; `answered`: an answer was
   * recorded before (`decideRestartExecution` in `workflows-decisions.ts`).
   */
  withdrawn?: 'answered' | 'unanswered';
  /**
   * On a withdrawn question answered before the restart: its decision waits
   * for the restarted execution to ask the same key with the same message
   * and schema (it is delivered there), else it is not delivered.
   */
  awaitsRestart?: true;
  /** The task key of a withdrawn question whose recorded answer this one delivers (not asked again). */
  carries?: string;
}

/** What the decider of a question a restart withdrew is told when the restarted execution does not ask it again. */
export const NOT_DELIVERED_MESSAGE = 'Not delivered: the workflow restarted; decide again';

/** The state's own key of a question: its task key without the suffix that made it unique (`approval#2` → `approval`). */
export function stateKeyOf(key: string): string {
  return key.replace(/#\d+$/, '');
}

/** Whether the restarted execution asks `again` what `earlier` asked: the same key, message and schema, for the same people. */
export function asksTheSame(earlier: WorkflowQuestion, again: AskedQuestion): boolean {
  const { message, requestedSchema, answeredBy, fourEyes } = again.question;
  return (
    stateKeyOf(earlier.key) === again.key &&
    earlier.message === message &&
    canonicalJson(earlier.requestedSchema) === canonicalJson(requestedSchema) &&
    earlier.answeredBy === answeredBy &&
    (earlier.fourEyes ?? false) === (fourEyes ?? false)
  );
}

/** The keys of the questions a restart withdrew before anyone answered them (what a late answer to one is told: {@link NOT_DELIVERED_MESSAGE}). */
export function withdrawnKeys(callbacks: Settlements | undefined): string[] {
  return workflowQuestions(callbacks)
    .filter((question) => question.withdrawn === 'unanswered')
    .map((question) => question.key);
}

/** A question as the receiver hands it to the store: its id (the token's digest), its fields and its sealed token. */
export interface AskedQuestion {
  /** The execution that asks (its ARN). */
  execution: string;
  /** Derived from the task token: the same token asked twice is one question. */
  id: string;
  /** The state's key for it (the task's key is made unique by the store). */
  key: string;
  question: Omit<WorkflowQuestion, 'n' | 'key'>;
  sealedToken: string;
}

/**
 * What the receiver's writes did:
 * - `asked`: recorded; the task's run (running, or waiting on an earlier question) asks it next;
 * - `resumed`: recorded, and the suspended task is due again: the caller enqueues it;
 * - `duplicate`: that question was recorded before (the state invoked the receiver again);
 * - `recorded`: a progress message was written;
 * - `ended`: the task has ended (or is not there);
 * - `not-followed`: the task follows no such execution.
 */
export type WorkflowWriteResult = 'asked' | 'resumed' | 'duplicate' | 'recorded' | 'ended' | 'not-followed';

/** The questions recorded on a task, in the order asked. */
export function workflowQuestions(callbacks: Settlements | undefined): Array<WorkflowQuestion & { id: string }> {
  return Object.entries(callbacks ?? {})
    .filter(([id, settled]) => id.startsWith(WORKFLOW_QUESTION_PREFIX) && 'result' in settled)
    .map(([id, settled]) => ({ ...((settled as { result: WorkflowQuestion }).result as WorkflowQuestion), id }))
    .sort((a, b) => a.n - b.n);
}

/** The end recorded on a task, if any. */
export function workflowEnd(callbacks: Settlements | undefined): WorkflowEnd | undefined {
  const settled = callbacks?.[WORKFLOW_END_ID];
  return settled && 'result' in settled ? (settled.result as WorkflowEnd) : undefined;
}

/**
 * Whether a cancel of this task must go through its run, which stops the
 * execution it follows first: the task follows one whose end is not recorded,
 * and is not terminal (a question it waits on goes with the cancel).
 */
export function followsLiveWorkflow(task: { status: string; workflow?: WorkflowRecord; callbacks?: Settlements }): boolean {
  return (
    (task.status === 'working' || task.status === 'input_required') &&
    task.workflow?.execution !== undefined &&
    workflowEnd(task.callbacks) === undefined
  );
}

/** The row's workflow part once the task has ended: its tokens go (nothing can use them any more). */
export function endedWorkflow(workflow: WorkflowRecord | undefined): { workflow?: WorkflowRecord } {
  if (!workflow) return {};
  const { tokens: _gone, ...rest } = workflow;
  return { workflow: rest };
}
