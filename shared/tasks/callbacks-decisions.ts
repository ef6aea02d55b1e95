/**
 * The decisions of the callback operations of the store (see
 * `callbacks-store.ts`), as pure functions in the manner of
 * `decisions.ts`: given the record as it is, what the operation answers
 * and the record that follows, if any. Both stores apply them.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { canonicalJson } from '../canonical-json.ts';
import {
  type AwaitCallbacksOptions,
  type CallbackSettlement,
  type CallbackWait,
  type CompletionResult,
  entryDeadline,
  type HeartbeatResult,
  type PostedCompletion,
  waitDeadline,
} from './callbacks-model.ts';
import type { Decision } from './decisions.ts';
import { checkBudget } from './limits.ts';
import { isRunning, isTerminal, type TaskRecord } from './model.ts';
import { withMoment } from './moments.ts';
import type { Moment } from './phases.ts';
import { leaseHeld, type SweepTiming, sweepWindow } from './predicates.ts';
import { LeaseLostError } from './store-errors.ts';
import { WORKFLOW_END_ID } from './workflows-model.ts';

/** The largest payload one completion may post (the JSON of its `result` or `error`), as the endpoint measures it. */
export const MAX_CALLBACK_BYTES = 64 * 1024;

/** All settlements of one task together (they live on its row, as answers do). */
export const MAX_CALLBACKS_BYTES = 128 * 1024;

/** The `statusMessage` of a task its callbacks resumed. */
export const CALLED_BACK_MESSAGE = 'Called back; the task goes on';

/**
 * `awaitCallbacks`: the run holding the lease suspends on `wait`: the lease is
 * dropped, and the task stays `working`, due for the sweeper at the wait's
 * first deadline (no message is queued). `signalled` instead, with nothing
 * written, when a settlement arrived or a cancel was requested since the
 * claim: the run must go on rather than wait. Throws {@link LeaseLostError}
 * when the lease is not held.
 */
export function decideAwaitCallbacks(
  taskId: string,
  task: TaskRecord | undefined,
  leaseOwner: string,
  options: AwaitCallbacksOptions,
  now: number,
): Decision<'waiting' | 'signalled'> {
  if (!task || !leaseHeld(task, leaseOwner)) throw new LeaseLostError(taskId);
  if (task.cancelRequested || !sameSettlements(task.callbacks, options.seen)) return { result: 'signalled' };
  const { lease: _released, ...rest } = task;
  const next: TaskRecord = {
    ...rest,
    status: 'working',
    callbackWait: options.wait,
    sweepAt: waitDeadline(options.wait, task.callbacks),
    attempts: 0,
    moments: withMoment(task, suspendMoment(options, now)),
    ...(options.progressMark === undefined ? {} : { progressMark: options.progressMark }),
    statusMessage: options.statusMessage,
    lastUpdatedAt: now,
    version: task.version + 1,
  };
  return { result: 'waiting', next };
}

/** The moment a suspension marks: on the workflow's end (a workflow tool's run), or on callbacks. */
export function suspendMoment(options: Pick<AwaitCallbacksOptions, 'wait'>, now: number): Moment {
  return { kind: 'suspend', at: now, note: Object.hasOwn(options.wait.callbacks, WORKFLOW_END_ID) ? 'workflow' : 'callback' };
}

/** Whether two sets of settlements are the same (as the DynamoDB store compares the attribute's text). */
function sameSettlements(a: Record<string, CallbackSettlement> | undefined, b: Record<string, CallbackSettlement> | undefined): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
}

/**
 * `completeCallback`: the first completion of a callback is recorded on the
 * task (later ones change nothing: the same one is a `duplicate`, another a
 * `conflict`). When the task's run is suspended on its callbacks and this
 * settles the last open one, the task is due again (`sweepAt = now + W`, so
 * the sweeper resumes it should the caller's enqueue never happen).
 */
export function decideCompleteCallback(
  task: TaskRecord | undefined,
  callbackId: string,
  posted: PostedCompletion,
  now: number,
  policy: SweepTiming,
): Decision<CompletionResult> {
  if (!task) return { result: 'unknown' };
  if (isTerminal(task.status)) return { result: 'ended' };
  const earlier = task.callbacks?.[callbackId];
  if (earlier) return { result: samePosted(earlier, posted) ? 'duplicate' : 'conflict' };
  const entry = task.callbackWait?.callbacks[callbackId];
  if (entry && entryDeadline(entry) <= now) return { result: 'expired' };
  const callbacks: Record<string, CallbackSettlement> = { ...task.callbacks, [callbackId]: { ...posted, at: now } };
  checkBudget('callbacks (all completions of the task)', callbacks, MAX_CALLBACKS_BYTES);
  const wait = task.callbackWait;
  const resumed = wait !== undefined && !isRunning(task, now) && Object.keys(wait.callbacks).every((id) => Object.hasOwn(callbacks, id));
  if (!resumed) return { result: 'accepted', next: { ...task, callbacks, version: task.version + 1 } };
  const { callbackWait: _done, ...rest } = task;
  const next: TaskRecord = {
    ...rest,
    callbacks,
    sweepAt: now + sweepWindow(policy),
    statusMessage: CALLED_BACK_MESSAGE,
    lastUpdatedAt: now,
    moments: withMoment(task, { kind: 'resume', at: now, note: callbackId === WORKFLOW_END_ID ? 'workflow' : 'callback' }),
    version: task.version + 1,
  };
  return { result: 'resumed', next };
}

function samePosted(earlier: CallbackSettlement, posted: PostedCompletion): boolean {
  const { at: _at, ...recorded } = earlier;
  return canonicalJson(recorded) === canonicalJson(posted);
}

/**
 * The shortest time between two heartbeats written for one callback: a
 * tenth of its heartbeat timeout, at least a second. Heartbeats in between
 * are answered but not written.
 */
export function heartbeatWriteInterval(heartbeatTimeoutMs: number): number {
  return Math.max(1000, Math.floor(heartbeatTimeoutMs / 10));
}

/**
 * `beatCallback`: a heartbeat of an open callback of a suspended run moves
 * its heartbeat deadline (and the task's `sweepAt`, the wait's first
 * deadline), at most once per {@link heartbeatWriteInterval}. Before the run
 * has suspended (its wait is not on the row yet) nothing is written: the
 * heartbeat clock starts when the callback is created.
 */
export function decideBeatCallback(task: TaskRecord | undefined, callbackId: string, now: number): Decision<HeartbeatResult> {
  if (!task) return { result: 'unknown' };
  if (isTerminal(task.status)) return { result: 'ended' };
  if (task.callbacks?.[callbackId]) return { result: 'settled' };
  const wait = task.callbackWait;
  const entry = wait?.callbacks[callbackId];
  if (!wait || !entry || entry.heartbeatTimeoutMs === undefined) return { result: 'skipped' };
  if (entryDeadline(entry) <= now) return { result: 'expired' };
  if (now - (entry.beatAt ?? entry.since) < heartbeatWriteInterval(entry.heartbeatTimeoutMs)) return { result: 'skipped' };
  const callbackWait: CallbackWait = { ...wait, callbacks: { ...wait.callbacks, [callbackId]: { ...entry, beatAt: now } } };
  const running = isRunning(task, now);
  const next: TaskRecord = {
    ...task,
    callbackWait,
    ...(running ? {} : { sweepAt: waitDeadline(callbackWait, task.callbacks) }),
    version: task.version + 1,
  };
  return { result: 'recorded', next };
}
