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
import { canTransition, type Decision as DecidedBy, isRunning, isTerminal, type TaskRecord } from './model.ts';
import { withMoment } from './moments.ts';
import { type SweepTiming, sweepWindow } from './predicates.ts';
import {
  type AskedQuestion,
  asksTheSame,
  type ExpectedExecution,
  type FollowOptions,
  stateKeyOf,
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
 * `followExecution`: the task follows `execution` (on `options.engine`, when
 * given), unless it follows another already (a retried start keeps what the
 * first recorded), or `options.replacing`
 * names the one it follows (a local restart moves it to the new execution).
 * The result is the execution the task follows afterwards; `undefined` for a
 * task that has ended or is not there.
 */
export function decideFollowExecution(
  task: TaskRecord | undefined,
  execution: string,
  options: FollowOptions = {},
): Decision<string | undefined> {
  if (!task || isTerminal(task.status)) return { result: undefined };
  const current = task.workflow?.execution;
  if (current === execution || (current !== undefined && current !== options.replacing)) return { result: current };
  const engine = options.engine === undefined ? {} : { engine: options.engine };
  return { result: execution, next: { ...task, workflow: { ...task.workflow, ...engine, execution }, version: task.version + 1 } };
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
  const carried = carriedDecision(task, earlier, asked, question);
  const callbacks = { ...carried.callbacks, [id]: { result: carried.question, at: now } };
  const workflow: WorkflowRecord = {
    ...task.workflow,
    execution: asked.execution,
    tokens: { ...task.workflow?.tokens, [id]: asked.sealedToken },
  };
  checkBudget('the questions of the workflow and their tokens', { callbacks, tokens: workflow.tokens }, MAX_CALLBACKS_BYTES);
  const decisions = carried.decisions ? { decisions: carried.decisions } : {};
  const suspended = task.status === 'working' && task.callbackWait !== undefined && !isRunning(task, now);
  if (!suspended) return { result: 'asked', next: { ...task, callbacks, workflow, ...decisions, version: task.version + 1 } };
  const { callbackWait: _woken, ...rest } = task;
  const next: TaskRecord = {
    ...rest,
    callbacks,
    workflow,
    ...decisions,
    sweepAt: now + sweepWindow(policy),
    moments: withMoment(task, { kind: 'resume', at: now, note: 'workflow' }),
    version: task.version + 1,
  };
  return { result: 'resumed', next };
}

/**
 * The restart rule's second half, as the restarted execution asks: the first
 * withdrawn question with the same state key whose answer awaits it is
 * settled. Asked again with the same message and schema, the new question
 * carries that answer (it goes back at once, nobody is asked again);
 * otherwise the earlier decision is marked not delivered, and the new
 * question is asked.
 */
function carriedDecision(
  task: TaskRecord,
  earlier: Array<WorkflowQuestion & { id: string }>,
  asked: AskedQuestion,
  question: WorkflowQuestion,
): { callbacks: TaskRecord['callbacks']; question: WorkflowQuestion; decisions?: Record<string, DecidedBy> } {
  const awaiting = earlier.find((q) => q.awaitsRestart && stateKeyOf(q.key) === asked.key);
  if (!awaiting) return { callbacks: task.callbacks, question };
  const { id, awaitsRestart: _settled, ...settled } = awaiting;
  const callbacks = { ...task.callbacks, [id]: { ...task.callbacks?.[id], result: settled, at: task.callbacks?.[id]?.at ?? 0 } };
  if (asksTheSame(awaiting, asked)) return { callbacks, question: { ...question, carries: awaiting.key } };
  return { callbacks, question, ...undelivered(task.decisions, [awaiting.key]) };
}

/** `decisions` with those of `keys` marked not delivered (none recorded: nothing to mark). */
function undelivered(decisions: Record<string, DecidedBy> | undefined, keys: string[]): { decisions?: Record<string, DecidedBy> } {
  const marked = keys.filter((key) => decisions?.[key] !== undefined);
  if (marked.length === 0) return {};
  return {
    decisions: { ...decisions, ...Object.fromEntries(marked.map((key) => [key, { ...decisions![key]!, notDelivered: true as const }])) },
  };
}

/** What a restart did: the execution the task follows afterwards (`undefined`: ended or gone), whether its run must go on, and the keys withdrawn unanswered. */
export interface RestartResult {
  follows: string | undefined;
  resumes: boolean;
  withdrawn: string[];
}

/**
 * `restartExecution`: the execution the task follows (`replaced`, or none
 * recorded yet) is replaced by `execution`, started again from the
 * beginning. Its questions are withdrawn at once: their tokens go (nothing
 * can answer them any more), an unanswered one leaves the task's open
 * questions (and so the page and the approvers' list) and its record of
 * where it was asked (the run no longer asks it), and an answered one
 * awaits the restarted execution ({@link carriedDecision}). A task left
 * with nothing open goes back to `working`, due (`resumes`), so that its
 * run suspends on the new execution. A task that follows another
 * execution, or has ended, is left as it is.
 */
export function decideRestartExecution(
  task: TaskRecord | undefined,
  execution: string,
  replaced: string,
  now: number,
): Decision<RestartResult> {
  if (!task || isTerminal(task.status)) return { result: { follows: undefined, resumes: false, withdrawn: [] } };
  const current = task.workflow?.execution;
  if (current === execution || (current !== undefined && current !== replaced))
    return { result: { follows: current, resumes: false, withdrawn: [] } };
  const { callbacks, withdrawn, tokens } = withdrawQuestions(task);
  const { progress: _old, tokens: _all, ...kept } = task.workflow ?? {};
  const workflow = { ...kept, execution, ...(Object.keys(tokens).length > 0 ? { tokens } : {}) };
  const questions = Object.fromEntries(Object.entries(task.questions ?? {}).filter(([key]) => !withdrawn.includes(key)));
  const changed = { callbacks, workflow, ...(task.questions ? { questions } : {}), lastUpdatedAt: now, version: task.version + 1 };
  const stays = { follows: execution, resumes: false, withdrawn };
  if (task.status !== 'input_required') return { result: stays, next: { ...task, ...changed } };
  const open = Object.fromEntries(Object.entries(task.inputRequests).filter(([key]) => !withdrawn.includes(key)));
  if (Object.keys(open).length > 0) return { result: stays, next: { ...task, ...changed, inputRequests: open } };
  if (!canTransition(task.status, 'working')) throw new IllegalTransitionError(task.status, 'working');
  const { inputRequests: _withdrawn, keptUntil: _kept, status: _waiting, ...rest } = task;
  const next: TaskRecord = { ...rest, ...changed, status: 'working', sweepAt: now, statusMessage: RESTARTED_MESSAGE };
  return { result: { ...stays, resumes: true }, next };
}

/** The status of a task whose questions a restart withdrew, until its run goes on. */
export const RESTARTED_MESSAGE = 'The workflow restarted from the beginning: its questions are asked again as it reaches them';

/** The settlements with the questions not withdrawn yet marked so, the keys withdrawn unanswered, and the tokens left. */
function withdrawQuestions(task: TaskRecord): {
  callbacks: NonNullable<TaskRecord['callbacks']>;
  withdrawn: string[];
  tokens: Record<string, string>;
} {
  const callbacks = { ...task.callbacks };
  const tokens = { ...task.workflow?.tokens };
  const withdrawn: string[] = [];
  const all = workflowQuestions(task.callbacks);
  const idOf = new Map(all.map((question) => [question.key, question.id]));
  for (const { id, ...question } of all) {
    if (question.withdrawn) continue;
    delete tokens[id];
    const answered = question.carries !== undefined || Object.hasOwn(task.inputResponses, question.key);
    if (!answered) withdrawn.push(question.key);
    const awaits = answered && question.carries === undefined ? { awaitsRestart: true as const } : {};
    callbacks[id] = { ...callbacks[id]!, result: { ...question, withdrawn: answered ? 'answered' : 'unanswered', ...awaits } };
    // A question that delivered an earlier answer hands it on: that answer awaits the next execution.
    const source = question.carries === undefined ? undefined : idOf.get(question.carries);
    const sourceQuestion = source === undefined ? undefined : (callbacks[source] as { result?: WorkflowQuestion }).result;
    if (source !== undefined && sourceQuestion)
      callbacks[source] = { ...callbacks[source]!, result: { ...sourceQuestion, awaitsRestart: true } };
  }
  return { callbacks, withdrawn, tokens };
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
    if (!decided.next) return decided;
    const next = decided.result === 'resumed' ? { ...decided.next, statusMessage: endedMessage(end) } : decided.next;
    return { ...decided, next: undeliveredAtEnd(next) };
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
  return { result: 'resumed', next: undeliveredAtEnd(next) };
}

/** The record of a task whose execution ended: answers still awaiting a restarted execution's question went nowhere. */
function undeliveredAtEnd(task: TaskRecord): TaskRecord {
  const awaiting = workflowQuestions(task.callbacks).filter((question) => question.awaitsRestart);
  if (awaiting.length === 0) return task;
  const callbacks = { ...task.callbacks };
  for (const { id, awaitsRestart: _settled, ...question } of awaiting) callbacks[id] = { ...callbacks[id]!, result: question };
  return {
    ...task,
    callbacks,
    ...undelivered(
      task.decisions,
      awaiting.map((question) => question.key),
    ),
  };
}

/** The status of a task its execution's end resumed. */
export function endedMessage(end: WorkflowEnd): string {
  return `The workflow ended (${end.status}); the task ends with it`;
}
