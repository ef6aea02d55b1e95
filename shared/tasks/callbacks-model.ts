/**
 * What a task row keeps of its callbacks (waits on an outside system): the
 * settlements posted to their URLs, and the wait a suspended run left
 * behind. Neither holds a token: a callback's URL is derived from its id
 * when needed (`shared/runtime/callback-tokens.ts`) and never stored.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import type { Moment } from './phases.ts';
import { followsLiveWorkflow, type WorkflowRecord } from './workflows-model.ts';

/** What the outside system posted: the first one recorded wins. */
export type CallbackSettlement =
  | { result: unknown; at: number }
  | { error: { message: string; code?: string; data?: unknown }; at: number };

/** One open callback of a suspended run, as the sweeper and the completion endpoint need it. */
export interface CallbackWaitEntry {
  /** When the callback was created (its heartbeat clock starts then). */
  since: number;
  /** The callback's deadline (epoch ms): past it, the handler gets a timeout. */
  timeoutAt: number;
  /** With a heartbeat timeout: the longest gap between heartbeats. */
  heartbeatTimeoutMs?: number;
  /** The last heartbeat recorded (epoch ms). */
  beatAt?: number;
  /** The handler gave an `onCancel`: a cancel wakes the task to run it. */
  onCancel?: true;
}

/** The open callbacks a suspended run waits for, by callback id; `wakeAt` when it also sleeps. */
export interface CallbackWait {
  callbacks: Record<string, CallbackWaitEntry>;
  wakeAt?: number;
}

/** When an open callback's wait ends by itself: its timeout, or its heartbeat deadline if earlier. */
export function entryDeadline(entry: CallbackWaitEntry): number {
  const beat = entry.heartbeatTimeoutMs === undefined ? Number.POSITIVE_INFINITY : (entry.beatAt ?? entry.since) + entry.heartbeatTimeoutMs;
  return Math.min(entry.timeoutAt, beat);
}

/** When the sweeper wakes a suspended run: the first deadline of its callbacks (or its sleep's wake-up). */
export function waitDeadline(wait: CallbackWait, settled: Record<string, CallbackSettlement> = {}): number {
  const open = Object.entries(wait.callbacks).filter(([id]) => !Object.hasOwn(settled, id));
  return Math.min(wait.wakeAt ?? Number.POSITIVE_INFINITY, ...open.map(([, entry]) => entryDeadline(entry)));
}

/**
 * Whether a cancel of a task must go through its run rather than end it at
 * once: it is `working` and its last suspension waits on a callback whose
 * handler gave an `onCancel`, which runs (once, as a step) before the task
 * ends `cancelled`; or it follows a workflow's execution that has not ended
 * (`followsLiveWorkflow`), which its run stops first. (A running task's
 * cancel is carried to its run anyway.)
 */
export function cancelRunsOnCancel(task: {
  status: string;
  callbackWait?: CallbackWait;
  callbacks?: Record<string, CallbackSettlement>;
  workflow?: WorkflowRecord;
}): boolean {
  if (followsLiveWorkflow(task)) return true;
  const wait = task.callbackWait;
  if (task.status !== 'working' || !wait) return false;
  return Object.entries(wait.callbacks).some(([id, entry]) => entry.onCancel === true && !task.callbacks?.[id]);
}

/** What a suspended run writes when it starts waiting (see {@link decideAwaitCallbacks}). */
export interface AwaitCallbacksOptions {
  /** The settlements the run saw (the record as claimed): any other means one arrived meanwhile. */
  seen: Record<string, CallbackSettlement> | undefined;
  wait: CallbackWait;
  statusMessage: string;
  /** The step checkpoints the task has now: its new `progressMark` (a clean hand-over). */
  progressMark?: number;
  /** The task as the run claimed it: the moments the suspension appends to (see `ReleaseOptions.claimed`). */
  claimed?: { createdAt: number; moments?: readonly Moment[] };
}

/** What a completion did (the endpoint answers each with its own status). */
export type CompletionResult =
  /** Recorded; the run it completes is running or queued and will see it. */
  | 'accepted'
  /** Recorded, and the suspended run was the last thing waiting: the caller enqueues the task. */
  | 'resumed'
  /** The same completion was recorded before: nothing changes. */
  | 'duplicate'
  /** Another completion (or a timeout) settled the callback first. */
  | 'conflict'
  /** The task has ended. */
  | 'ended'
  /** No such task. */
  | 'unknown'
  /** The callback's wait has passed its deadline. */
  | 'expired';

/** A completion as posted: a result or an error (its time is the store's). */
export type PostedCompletion = { result: unknown } | { error: { message: string; code?: string; data?: unknown } };

/** What a heartbeat did. */
export type HeartbeatResult = 'recorded' | 'skipped' | 'settled' | 'ended' | 'unknown' | 'expired';
