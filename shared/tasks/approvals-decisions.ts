/**
 * The rules of questions for a person (`answeredBy: 'person'`) as pure
 * decisions both stores apply: who may decide one (the task's owner, unless
 * the question needs another approver; an approver of the deployment, for
 * any task), what a task-declaring client's in-band answer does to one, and
 * the record of who decided, kept on the row with the answer.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { type AnswerOptions, type Decider, DecisionRefusedError } from './approvals-model.ts';
import { decideAnswer, type Decision as StoreDecision } from './decisions.ts';
import { MAX_TASK_ID_LENGTH } from './limits.ts';
import { type Decision, forPersonOnly, isExpired, needsAnotherApprover, type TaskRecord } from './model.ts';
import type { SweepTiming } from './predicates.ts';
import { InvalidPageError, TaskNotFoundError } from './store-errors.ts';
import { type AnswerResult, type ListOptions, MAX_LIST_PAGE } from './store-types.ts';
import { withdrawnKeys } from './workflows-model.ts';

/** The record of the questions among `keys` that are for a person, decided by `decision`. */
function personalKeys(task: TaskRecord, keys: string[]): string[] {
  if (task.status !== 'input_required') return [];
  return keys.filter((key) => Object.hasOwn(task.inputRequests, key) && forPersonOnly(task.inputRequests[key]!));
}

/** `answer` with the questions for a person ruled on (see {@link InBandPersonAnswers}). */
export function decideInBandAnswer(
  taskId: string,
  found: TaskRecord | undefined,
  owner: string,
  responses: Record<string, unknown>,
  now: number,
  policy: SweepTiming,
  options: AnswerOptions = {},
): StoreDecision<AnswerResult> {
  let given = responses;
  if (found?.status === 'input_required' && found.owner === owner && !isExpired(found, now)) {
    const open = found.inputRequests;
    const personal = Object.keys(responses).filter((key) => Object.hasOwn(open, key) && forPersonOnly(open[key]!));
    const fourEyes = personal.filter((key) => needsAnotherApprover(open[key]!));
    if (fourEyes.length > 0) throw new DecisionRefusedError('four-eyes', fourEyes);
    if (options.person === 'ignore') given = Object.fromEntries(Object.entries(responses).filter(([key]) => !personal.includes(key)));
  }
  const decided = decideAnswer(taskId, found, owner, given, now, policy);
  const name = options.name === undefined ? {} : { name: options.name };
  return withDecisions(decided, found, { by: owner, ...name, as: 'owner', via: 'client', at: now });
}

/**
 * `decide`: the answers of `decider` on a task's page. The owner answers any
 * open question of their task, except one that needs another approver; an
 * approver of the deployment decides the questions for a person of any
 * task (another's questions not for a person are refused). Anyone else
 * finds no task, as for an unknown id.
 */
export function decideOnPage(
  taskId: string,
  found: TaskRecord | undefined,
  decider: Decider,
  responses: Record<string, unknown>,
  now: number,
  policy: SweepTiming,
): StoreDecision<AnswerResult> {
  const owner = found?.owner === decider.principal;
  if (!found || isExpired(found, now) || (!owner && !decider.approver)) throw new TaskNotFoundError(taskId);
  if (found.status === 'input_required') {
    const open = Object.keys(responses).filter((key) => Object.hasOwn(found.inputRequests, key));
    const request = (key: string) => found.inputRequests[key]!;
    const notPersonal = open.filter((key) => !forPersonOnly(request(key)));
    if (!owner && notPersonal.length > 0) throw new DecisionRefusedError('not-for-approvers', notPersonal);
    const fourEyes = owner ? open.filter((key) => needsAnotherApprover(request(key))) : [];
    if (fourEyes.length > 0) throw new DecisionRefusedError('four-eyes', fourEyes);
  }
  const decision: Decision = {
    by: decider.principal,
    ...(decider.name === undefined ? {} : { name: decider.name }),
    as: owner ? 'owner' : 'approver',
    via: 'page',
    at: now,
  };
  return withDecisions(decideAnswer(taskId, found, found.owner, responses, now, policy), found, decision);
}

/** `decided` with the decisions of the questions for a person it accepted recorded on its next record. */
function withDecisions(
  decided: StoreDecision<AnswerResult>,
  found: TaskRecord | undefined,
  decision: Decision,
): StoreDecision<AnswerResult> {
  const { next, result } = decided;
  const personal = next && found ? personalKeys(found, result.accepted) : [];
  if (!next || personal.length === 0) return decided;
  const decisions = { ...found?.decisions, ...Object.fromEntries(personal.map((key) => [key, decision])) };
  return { result: { ...result, decided: personal }, next: { ...next, decisions } };
}

/** The open questions for a person of `task` (none unless it waits for input). */
export function openPersonQuestions(task: TaskRecord): string[] {
  return task.status === 'input_required' ? Object.keys(task.inputRequests).filter((key) => forPersonOnly(task.inputRequests[key]!)) : [];
}

/** `task` when it waits on a question for a person at `now` (what an approver may open), else `undefined`. */
export function waitingForPerson(task: TaskRecord | undefined, now: number): TaskRecord | undefined {
  return task && !isExpired(task, now) && openPersonQuestions(task).length > 0 ? task : undefined;
}

/**
 * What an answer that came late is told of question `key` of a task, whoever
 * owns it (`ApprovalStore.getDecision`): who decided it, or `'withdrawn'` when
 * a restart of its workflow withdrew it before anyone answered; else nothing.
 */
export function lateDecision(task: TaskRecord | undefined, key: string, now: number): Decision | 'withdrawn' | undefined {
  if (!task || isExpired(task, now)) return undefined;
  return task.decisions?.[key] ?? (withdrawnKeys(task.callbacks).includes(key) ? 'withdrawn' : undefined);
}

/** Digits of a time in a waiting question's sort key. */
const TIME_DIGITS = 15;

/** A waiting question's place in the approvers' list: `<asked at, zero-padded>#<task id>#<key>`, oldest first. */
export function waitingSortKey(askedAt: number, taskId: string, key: string): string {
  return `${String(askedAt).padStart(TIME_DIGITS, '0')}#${taskId}#${key}`;
}

const WAITING_CURSOR = new RegExp(`^\\d{${TIME_DIGITS}}#[^#]{1,${MAX_TASK_ID_LENGTH}}#.{1,512}$`);

/** The page options checked (a limit in range, a cursor as the list makes them). Throws {@link InvalidPageError}. */
export function checkWaitingPage(options: ListOptions): ListOptions {
  if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > MAX_LIST_PAGE) {
    throw new InvalidPageError(`A page lists 1 to ${MAX_LIST_PAGE} questions`);
  }
  if (options.after !== undefined && !WAITING_CURSOR.test(options.after)) throw new InvalidPageError('Malformed page cursor');
  return options;
}
