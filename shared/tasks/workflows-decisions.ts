/**
 * The decisions of the workflow operations of the store (see
 * `workflows-store.ts`), as pure functions in the manner of `decisions.ts`:
 * given the record as it is, what the operation answers and the record that
 * follows, if any. Both stores apply them.
 *
 * An execution is accepted from one place only: the execution the row
 * follows (`workflow.execution`), or, before the worker has recorded it, the
 * one the task's binding names (`expected`: the bound machine's execution
 * named by the task id, which only this server starts).
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { decideCompleteCallback, MAX_CALLBACKS_BYTES } from './callbacks-decisions.ts';
import type { CompletionResult } from './callbacks-model.ts';
import { type Decision, IllegalTransitionError } from './decisions.ts';
import { checkBudget } from './limits.ts';
import { canTransition, isRunning, isTerminal, type TaskRecord } from './model.ts';
import { withMoment } from './moments.ts';
import { type SweepTiming, sweepWindow } from './predicates.ts';
import {
  type AskedQuestion,
  type ExpectedExecution,
  WORKFLOW_END_ID,
  WORKFLOW_QUESTION_PREFIX,
  type WorkflowEnd,
  type WorkflowQuestion,
  type WorkflowRecord,
  type WorkflowWriteResult,
  workflowEnd,
  workflowQuestions,
} from './workflows-model.ts';

/** The execution a task follows: the one recorded on its row, else the one its binding names. */
function followed(task: TaskRecord, expected: ExpectedExecution): string | undefined {
  return task.workflow?.execution ?? expected(task);
}

/**
 * `followExecution`: the task follows `execution`, unless it follows another
 * already (a retried start keeps what the first recorded), or `replacing`
 * names the one it follows (a local restart moves it to the new execution).
 * The result is the execution the task follows afterwards; `undefined` for a
 * task that has ended or is not there.
 */
export function decideFollowExecution(task: TaskRecord | undefined, execution: string, replacing?: string): Decision<string | undefined> {
  if (!task || isTerminal(task.status)) return { result: undefined };
  const current = task.workflow?.execution;
  if (current === execution || (current !== undefined && current !== replacing)) return { result: current };
  return { result: execution, next: { ...task, workflow: { ...task.workflow, execution }, version: task.version + 1 } };
}

/**
 * `askFromWorkflow`: the first time a task-token state's question reaches the
 * task, it is recorded (a settlement under `workflow-question:<id>`, with the
 * order it came in and a key of its own on the task) and its sealed token
 * kept; the same question again is a `duplicate`. A task suspended on its
 * workflow is due again (`resumed`), as a completion makes it; a running or
 * waiting one asks it when its run comes to it. Throws `LimitExceededError`
 * when the task's questions and tokens together would pass the settlements'
 * budget.
 */
export function decideAskFromWorkflow(
  task: TaskRecord | undefined,
  asked: AskedQuestion,
  expected: ExpectedExecution,
  now: number,
  policy: SweepTiming,
): Decision<WorkflowWriteResult> {
  if (!task || isTerminal(task.status)) return { result: 'ended' };
  if (followed(task, expected) !== asked.execution) return { result: 'not-followed' };
  const id = `${WORKFLOW_QUESTION_PREFIX}${asked.id}`;
  if (task.callbacks?.[id]) return { result: 'duplicate' };
  if (workflowEnd(task.callbacks)) return { result: 'ended' };
  const earlier = workflowQuestions(task.callbacks);
  const question: WorkflowQuestion = {
    ...asked.question,
    n: earlier.length + 1,
    key: freeKey(asked.key, new Set([...task.issuedKeys, ...earlier.map((q) => q.key)])),
  };
  const callbacks = { ...task.callbacks, [id]: { result: question, at: now } };
  const workflow: WorkflowRecord = {
    ...task.workflow,
    execution: asked.execution,
    tokens: { ...task.workflow?.tokens, [id]: asked.sealedToken },
  };
  checkBudget('the questions of the workflow and their tokens', { callbacks, tokens: workflow.tokens }, MAX_CALLBACKS_BYTES);
  const suspended = task.status === 'working' && task.callbackWait !== undefined && !isRunning(task, now);
  if (!suspended) return { result: 'asked', next: { ...task, callbacks, workflow, version: task.version + 1 } };
  const { callbackWait: _woken, ...rest } = task;
  const next: TaskRecord = {
    ...rest,
    callbacks,
    workflow,
    sweepAt: now + sweepWindow(policy),
    moments: withMoment(task, { kind: 'resume', at: now, note: 'workflow' }),
    version: task.version + 1,
  };
  return { result: 'resumed', next };
}

/** `key` itself, or `key#2`, `key#3`, … : the first not in `taken` (a key is never asked twice on one task). */
function freeKey(key: string, taken: ReadonlySet<string>): string {
  if (!taken.has(key)) return key;
  for (let n = 2; ; n += 1) if (!taken.has(`${key}#${n}`)) return `${key}#${n}`;
}

/**
 * `workflowProgress`: the execution's progress message is kept on the row,
 * and is the task's status while it is `working` (a question's wait keeps
 * its own message; the run shows the progress again once it suspends).
 */
export function decideWorkflowProgress(
  task: TaskRecord | undefined,
  execution: string,
  expected: ExpectedExecution,
  message: string,
  now: number,
): Decision<WorkflowWriteResult> {
  if (!task || isTerminal(task.status)) return { result: 'ended' };
  if (followed(task, expected) !== execution) return { result: 'not-followed' };
  const workflow: WorkflowRecord = { ...task.workflow, execution, progress: message };
  const shown = task.status === 'working' ? { statusMessage: message, lastUpdatedAt: now } : {};
  return { result: 'recorded', next: { ...task, workflow, ...shown, version: task.version + 1 } };
}

/** `dropWorkflowToken`: the answer to question `id` went back: its token is removed (nothing when it is gone already). */
export function decideDropWorkflowToken(task: TaskRecord | undefined, id: string): Decision<void> {
  const tokens = task?.workflow?.tokens;
  if (!task || !tokens || !Object.hasOwn(tokens, id)) return { result: undefined };
  const { [id]: _dropped, ...rest } = tokens;
  const { tokens: _all, ...workflow } = task.workflow!;
  const next: TaskRecord = {
    ...task,
    workflow: Object.keys(rest).length > 0 ? { ...workflow, tokens: rest } : workflow,
    version: task.version + 1,
  };
  return { result: undefined, next };
}

/**
 * `endWorkflow`: the execution's end, recorded as the completion of the
 * task's `workflow` callback (first wins; a repeat is a `duplicate`, anything
 * after the task ended `ended`), from the execution the task follows only. A
 * task waiting on one of its questions is woken too: nothing can answer it any
 * more, and its run ends the task as the execution ended.
 */
export function decideEndWorkflow(
  task: TaskRecord | undefined,
  end: WorkflowEnd,
  expected: ExpectedExecution,
  now: number,
  policy: SweepTiming,
): Decision<CompletionResult | 'not-followed'> {
  if (task && !isTerminal(task.status) && followed(task, expected) !== end.execution) return { result: 'not-followed' };
  if (task?.status !== 'input_required' || task.callbacks?.[WORKFLOW_END_ID]) {
    const decided = decideCompleteCallback(task, WORKFLOW_END_ID, { result: end }, now, policy);
    // Resumed: the status says what resumed it, until the run ends the task.
    return decided.result === 'resumed' && decided.next
      ? { ...decided, next: { ...decided.next, statusMessage: endedMessage(end) } }
      : decided;
  }
  if (!canTransition(task.status, 'working')) throw new IllegalTransitionError(task.status, 'working');
  const { inputRequests: _unanswerable, keptUntil: _kept, ...rest } = task;
  const next: TaskRecord = {
    ...rest,
    status: 'working',
    callbacks: { ...task.callbacks, [WORKFLOW_END_ID]: { result: end, at: now } },
    sweepAt: now + sweepWindow(policy),
    statusMessage: endedMessage(end),
    lastUpdatedAt: now,
    moments: withMoment(task, { kind: 'resume', at: now, note: 'workflow' }),
    version: task.version + 1,
  };
  return { result: 'resumed', next };
}

/** The status of a task its execution's end resumed. */
export function endedMessage(end: WorkflowEnd): string {
  return `The workflow ended (${end.status}); the task ends with it`;
}
