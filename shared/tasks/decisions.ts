/**
 * The task state machine as pure decisions, one per {@link TaskStore}
 * operation that changes a task: given the record as it is (plus the
 * operation's inputs, `now` and the store's policy), what the operation
 * answers and the record that follows, if any. Both stores apply these
 * decisions, so what a transition does is written once:
 *
 * - the in-memory store passes its record and keeps `next`;
 * - the DynamoDB store passes the row it read (`fail`, `answer`, `cancel`)
 *   and writes the difference to `next` under a condition on the version it
 *   read; or, for the writes it makes without a read (`claim`, `heartbeat`,
 *   `finish`, `release`, `reschedule`), writes the same field values the
 *   decision would, under a condition expression that states the same rule
 *   as the decision's predicate (the rules and those field values are in
 *   `predicates.ts`).
 *
 * Every decision that changes `status` goes through {@link canTransition}:
 * a change the table does not allow throws {@link IllegalTransitionError}
 * instead of being written.
 *
 * Decisions never modify the records or inputs they are given; the records
 * they return may share nested objects with them.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */

import { TasksError } from '../errors.ts';
import { cancelRunsOnCancel } from './callbacks-model.ts';
import { checkBudget, type LimitExceededError, MAX_ANSWERS_BYTES } from './limits.ts';
import {
  canTransition,
  forPersonOnly,
  isRunning,
  isTerminal,
  type JsonRpcErrorObject,
  type TaskOutcome,
  type TaskRecord,
  type TaskStatus,
  type WorkingTask,
} from './model.ts';
import { claimMoments, outcomeMoment, releaseMoment, resumeMoments, withMoment } from './moments.ts';
import {
  claimable,
  heartbeatFields,
  isDueToRun,
  isWaitExpired,
  leaseFor,
  leaseHeld,
  progressedPastMark,
  releaseFields,
  type SweepTiming,
  sweepWindow,
  visible,
} from './predicates.ts';
import { LeaseLostError, TaskNotFoundError } from './store-errors.ts';
import type {
  AnswerResult,
  CancelOptions,
  CancelOutcome,
  Failure,
  HeartbeatOptions,
  NewTask,
  ReleaseOptions,
  StorePolicy,
} from './store-types.ts';
import { extendedTtl } from './ttl.ts';
import { endedWorkflow } from './workflows-model.ts';

/** The `statusMessage` of a task resumed by a person's answers. */
export const ANSWERED_MESSAGE = 'Answered; the task goes on';

/** What an operation answers, and the record to store after it (absent: nothing changes). */
export interface Decision<R> {
  result: R;
  next?: TaskRecord;
}

/** A decision tried to move a task along a transition `TRANSITIONS` does not allow (a bug, never a client's mistake). */
export class IllegalTransitionError extends TasksError {
  constructor(
    readonly from: TaskStatus,
    readonly to: TaskStatus,
  ) {
    super(`Illegal task transition: ${from} → ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/**
 * Checks a change of `task` to status `to` against the table: a non-terminal
 * task may keep its status (that is how leases and progress are written);
 * any other change must be one {@link canTransition} allows, so a terminal
 * task never changes again.
 */
function checkTransition(task: TaskRecord, to: TaskStatus): void {
  if (task.status === to && !isTerminal(to)) return;
  if (!canTransition(task.status, to)) throw new IllegalTransitionError(task.status, to);
}

/**
 * `create`: a new task's record, `working`, no lease, on the sweeper's index
 * from the start (due once a worker should have taken it and its first lease
 * ended). There is no record before it, so no decision to make.
 */
export function newTaskRecord(task: NewTask, policy: SweepTiming): WorkingTask {
  return {
    taskId: task.taskId,
    owner: task.owner,
    tool: task.tool,
    arguments: task.arguments,
    clientCapabilities: task.clientCapabilities,
    status: 'working',
    createdAt: task.now,
    lastUpdatedAt: task.now,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    inputResponses: task.inputResponses,
    issuedKeys: [],
    cancelRequested: false,
    attempts: 0,
    sweepAt: task.now + sweepWindow(policy),
    version: 1,
    ...(task.toolVersion === undefined ? {} : { toolVersion: task.toolVersion }),
    ...(task.repeat === undefined ? {} : { repeat: task.repeat }),
    ...(task.machineOwner ? { machineOwner: true } : {}),
    ...(task.requester === undefined ? {} : { requester: task.requester }),
    ...(task.toolTitle === undefined ? {} : { toolTitle: task.toolTitle }),
    ...task.trace,
  };
}

/**
 * `claim`: the lease for `leaseOwner` when the task is {@link claimable};
 * the result is the leased record. `sweepAt` stays: create, release and
 * answer scheduled it past one lease.
 */
export function decideClaim(
  task: TaskRecord | undefined,
  leaseOwner: string,
  now: number,
  leaseMs: number,
): Decision<TaskRecord | undefined> {
  if (!task || !claimable(task, now)) return { result: undefined };
  const next: TaskRecord = { ...task, lease: leaseFor(leaseOwner, now, leaseMs), attempts: task.attempts + 1, version: task.version + 1 };
  next.moments = claimMoments(task, now);
  return { result: next, next };
}

/**
 * `heartbeat`: {@link heartbeatFields} under a held lease; the result says
 * whether cancellation was requested. Throws {@link LeaseLostError} when the
 * lease is not held.
 */
export function decideHeartbeat(
  taskId: string,
  task: TaskRecord | undefined,
  leaseOwner: string,
  now: number,
  options: HeartbeatOptions,
  policy: Pick<StorePolicy, 'sweepGraceMs'>,
): Decision<{ cancelRequested: boolean }> {
  if (!task || !leaseHeld(task, leaseOwner)) throw new LeaseLostError(taskId);
  const { renewal, progress, restart } = heartbeatFields(leaseOwner, now, options, policy);
  const next: TaskRecord = { ...task, ...renewal, ...progress, ...restart, version: task.version + 1 };
  return { result: { cancelRequested: task.cancelRequested }, next };
}

/**
 * `finish`: the outcome applied under a held lease (see {@link applyOutcome});
 * the result is the finished record. Throws {@link LeaseLostError} when the
 * lease is not held.
 */
export function decideFinish(
  taskId: string,
  task: TaskRecord | undefined,
  leaseOwner: string,
  outcome: TaskOutcome,
  now: number,
  policy: Pick<StorePolicy, 'retentionMs' | 'maxInputWaitMs'>,
): Decision<TaskRecord> {
  if (!task || !leaseHeld(task, leaseOwner)) throw new LeaseLostError(taskId);
  const next = applyOutcome(task, outcome, now, policy.retentionMs, policy.maxInputWaitMs);
  return { result: next, next };
}

/**
 * The record after `outcome`: lease released, off the sweeper's index, TTL
 * extended to keep it readable for `retentionMs`, status-specific fields set.
 * With `maxInputWaitMs`, a task that starts waiting for input is due for the
 * sweeper at the end of its wait (`sweepAt = now + maxInputWaitMs`, which
 * keeps it on the sparse index), and its row expires (`keptUntil`) at that
 * deadline plus the retention until it ends; what it advertises stays
 * `age + retentionMs`, as a running task's does, so at its end (answered
 * and finished, cancelled or expired) both become `end + retentionMs`.
 * Throws {@link IllegalTransitionError} when the table does not allow the
 * outcome's status (a terminal task, above all).
 */
export function applyOutcome(
  task: TaskRecord,
  outcome: TaskOutcome,
  now: number,
  retentionMs: number,
  maxInputWaitMs?: number,
): TaskRecord {
  checkTransition(task, outcome.status);
  // The lease is released; no outcome leaves work for the sweeper to find, nor a wait's row expiry.
  const { lease: _released, sweepAt: _swept, keptUntil: _kept, callbackWait: _wait, ...base } = task;
  const common = {
    ...withoutStatusFields(base),
    // An ended task keeps no workflow task token: nothing can answer with it any more.
    ...(isTerminal(outcome.status) ? endedWorkflow(base.workflow) : {}),
    lastUpdatedAt: now,
    ttlMs: extendedTtl(task, now, retentionMs),
    moments: withMoment(task, outcomeMoment(outcome, now)),
    version: task.version + 1,
  };
  switch (outcome.status) {
    case 'completed':
      return { ...common, status: 'completed', result: outcome.result, ...finalMessage(outcome.statusMessage) };
    case 'failed':
      return { ...common, status: 'failed', error: outcome.error, ...finalMessage(outcome.statusMessage) };
    case 'cancelled': // a requested cancel's own message (an operator's reason) is the end's, however the run ends it
      return { ...common, status: 'cancelled', ...finalMessage(task.cancelMessage ?? outcome.statusMessage) };
    case 'input_required':
      return {
        ...common,
        ...(maxInputWaitMs === undefined ? {} : { sweepAt: now + maxInputWaitMs, keptUntil: now + maxInputWaitMs + retentionMs }),
        attempts: 0, // waiting for answers is a clean hand-over
        ...withStatusMessage(outcome.statusMessage ?? common.statusMessage),
        status: 'input_required',
        inputRequests: outcome.inputRequests,
        issuedKeys: [...new Set([...common.issuedKeys, ...Object.keys(outcome.inputRequests)])],
        ...(outcome.questions ? { questions: { ...common.questions, ...outcome.questions } } : {}),
      };
  }
}

/** The message an end writes, marked final; none: the message before the end stays on the row, unmarked (it no longer holds). */
function finalMessage(statusMessage: string | undefined): { statusMessage?: string; finalMessage?: true } {
  return statusMessage === undefined ? {} : { statusMessage, finalMessage: true };
}

/** `statusMessage` as a field to spread: absent rather than `undefined`. */
function withStatusMessage(statusMessage: string | undefined): { statusMessage?: string } {
  return statusMessage === undefined ? {} : { statusMessage };
}

/** The record without `status` and the fields only some statuses have. */
function withoutStatusFields(task: Omit<TaskRecord, 'lease' | 'sweepAt' | 'keptUntil' | 'callbackWait'>): Omit<WorkingTask, 'status'> {
  const { status: _s, inputRequests: _i, result: _r, error: _e, ...rest } = task as Record<string, unknown>;
  return rest as Omit<WorkingTask, 'status'>;
}

/** `release`: the lease dropped and {@link releaseFields} written, the task still `working`; a lease not held is left alone. */
export function decideRelease(
  task: TaskRecord | undefined,
  leaseOwner: string,
  resumeAt: number,
  options: ReleaseOptions,
  policy: SweepTiming,
): Decision<void> {
  if (!task || !leaseHeld(task, leaseOwner)) return { result: undefined };
  const { lease: _released, ...rest } = task;
  const moments = withMoment(task, releaseMoment(options, resumeAt));
  return { result: undefined, next: { ...rest, ...releaseFields(resumeAt, options, policy), moments, version: task.version + 1 } };
}

/**
 * `fail`: a task that is not terminal, that no live lease holds and that (given
 * its checkpoint count `steps`) recorded no step past its `progressMark` ends
 * `failed` (every delivery attempt was used up); the result is the failed record, if it did.
 * One that did record steps past its mark stays `working`, its progress
 * credited as the worker credits it (`progressMark` becomes `steps`, its
 * `attempts` start again): the next `fail` without new steps ends it, so runs
 * that die before they can claim (a broken deploy) cannot keep it alive.
 */
export function decideFail(
  task: TaskRecord | undefined,
  error: JsonRpcErrorObject,
  statusMessage: string,
  now: number,
  policy: Pick<StorePolicy, 'retentionMs'>,
  options: Pick<Failure, 'steps'> = {},
): Decision<TaskRecord | undefined> {
  if (!task || isTerminal(task.status) || isRunning(task, now)) return { result: undefined };
  if (progressedPastMark(task, options.steps)) {
    return { result: undefined, next: { ...task, attempts: 0, progressMark: options.steps, version: task.version + 1 } };
  }
  const next = applyOutcome(task, { status: 'failed', error, statusMessage }, now, policy.retentionMs);
  return { result: next, next };
}

/**
 * `answer`: records the answers to outstanding keys of an `input_required`
 * task and ignores the rest (throwing {@link LimitExceededError} when all the
 * task's answers together would pass `MAX_ANSWERS_BYTES`); answering the last one makes the task `working`
 * again, due for the sweeper one W later. Throws {@link TaskNotFoundError}
 * when the task is not {@link visible} to `owner`.
 */
export function decideAnswer(
  taskId: string,
  found: TaskRecord | undefined,
  owner: string,
  responses: Record<string, unknown>,
  now: number,
  policy: SweepTiming,
): Decision<AnswerResult> {
  const task = visible(found, owner, now);
  if (!task) throw new TaskNotFoundError(taskId);
  if (task.status !== 'input_required') return { result: { accepted: [], resumed: false } };
  const accepted = Object.keys(responses).filter((key) => Object.hasOwn(task.inputRequests, key));
  if (accepted.length === 0) return { result: { accepted, resumed: false } };

  // Resumed, the task runs again: its row no longer expires (`keptUntil` goes with the wait).
  const { inputRequests, keptUntil: _kept, ...rest } = task;
  const outstanding = Object.fromEntries(Object.entries(inputRequests).filter(([key]) => !accepted.includes(key)));
  const inputResponses = { ...task.inputResponses, ...Object.fromEntries(accepted.map((key) => [key, responses[key]])) };
  // The row keeps every answer: together they stay within the per-task budget.
  checkBudget('inputResponses (all answers of the task)', inputResponses, MAX_ANSWERS_BYTES);
  const resumed = Object.keys(outstanding).length === 0;
  // The message of a wait on a person (the worker names the task's page in it) no longer holds once they answered.
  const person = resumed && accepted.some((key) => forPersonOnly(inputRequests[key]!));
  const written = {
    inputResponses,
    lastUpdatedAt: now,
    version: task.version + 1,
    ...(person ? { statusMessage: ANSWERED_MESSAGE } : {}),
  };
  if (resumed) checkTransition(task, 'working');
  const next: TaskRecord = resumed
    ? { ...rest, ...written, status: 'working', sweepAt: now + sweepWindow(policy), moments: resumeMoments(task, now, 'answer') }
    : { ...task, ...written, inputRequests: outstanding };
  return { result: { accepted, resumed }, next };
}

/**
 * `cancel`: a terminal task is left alone; a running one gets
 * `cancelRequested` (its worker cancels it at its next check), or with
 * `atOnce` ends `cancelled` now, its lease voided (the worker's later task
 * writes are refused and it stops at its next check); any other ends `cancelled` at
 * once. Throws {@link TaskNotFoundError} when the task is not
 * {@link visible} to `owner`.
 */
export function decideCancel(
  taskId: string,
  found: TaskRecord | undefined,
  owner: string,
  now: number,
  policy: Pick<StorePolicy, 'retentionMs'>,
  options: CancelOptions = {},
): Decision<CancelOutcome> {
  const task = visible(found, owner, now);
  if (!task) throw new TaskNotFoundError(taskId);
  if (isTerminal(task.status)) return { result: { result: 'terminal' } };
  const kept = options.statusMessage === undefined || task.cancelRequested ? {} : { cancelMessage: options.statusMessage }; // for its run's end
  const requested = { ...task, cancelRequested: true, ...kept };
  if (isRunning(task, now) && !options.atOnce)
    return { result: { result: 'requested' }, next: { ...requested, version: task.version + 1 } };
  // Suspended on a callback with an `onCancel`, or following a workflow's execution (even while one of its
  // questions waits): due at once, so that its run tells the outside system, or stops the execution.
  if (cancelRunsOnCancel(task) && !options.atOnce) {
    const { inputRequests: _closed, keptUntil: _kept, ...rest } = requested as TaskRecord & { inputRequests?: unknown };
    checkTransition(task, 'working');
    return {
      result: { result: 'requested', resumes: true },
      next: { ...rest, status: 'working', sweepAt: now, moments: resumeMoments(task, now, 'cancel'), version: task.version + 1 },
    };
  }
  const statusMessage = options.statusMessage === undefined ? {} : { statusMessage: options.statusMessage };
  const next = applyOutcome(requested, { status: 'cancelled', ...statusMessage }, now, policy.retentionMs);
  return { result: { result: 'cancelled', task: next }, next };
}

/**
 * `reschedule`: a `working` task that is due at `now` ({@link isDueToRun})
 * gets `sweepAt = nextAt`; the result says whether it did. A task waiting for
 * input is on the index at its wait's deadline, which is not rescheduled.
 */
export function decideReschedule(task: TaskRecord | undefined, now: number, nextAt: number): Decision<boolean> {
  if (!task || !isDueToRun(task, now)) return { result: false };
  return { result: true, next: { ...task, sweepAt: nextAt, version: task.version + 1 } };
}

/**
 * `expireWait`: a task whose wait for input passed its deadline at `now`
 * ({@link isWaitExpired}) ends `failed` with `error`; the result is the
 * failed record, or `undefined` when the task is no such task.
 */
export function decideExpireWait(
  task: TaskRecord | undefined,
  error: JsonRpcErrorObject,
  statusMessage: string,
  now: number,
  policy: Pick<StorePolicy, 'retentionMs'>,
): Decision<TaskRecord | undefined> {
  if (!task || !isWaitExpired(task, now)) return { result: undefined };
  const next = applyOutcome(task, { status: 'failed', error, statusMessage }, now, policy.retentionMs);
  return { result: next, next };
}
