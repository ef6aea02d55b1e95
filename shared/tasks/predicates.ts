/**
 * The rules of the task state machine: the predicates every store decides
 * by, and the fields the writes made without a read (`claim`, `heartbeat`,
 * `release`) set. The decisions in `decisions.ts` apply them to a record;
 * the DynamoDB store's blind writes state the same rules as condition
 * expressions ({@link claimable}, {@link leaseHeld}, {@link isDueToRun}, each
 * quoting its expression) and write the same field values
 * ({@link leaseFor}, {@link heartbeatFields}, {@link releaseFields}). The
 * worker and the sweeper read the attempt rules and the sweep window here.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */

import { isExpired, isRunning, isTerminal, type TaskBase, type TaskRecord } from './model.ts';
import type { HeartbeatOptions, ReleaseOptions, StorePolicy } from './store-types.ts';

/** The timings that place `sweepAt`. */
export type SweepTiming = Pick<StorePolicy, 'leaseMs' | 'sweepGraceMs'>;

/**
 * W = `leaseMs + sweepGraceMs`: how long after a task is due to run the
 * sweeper looks at it (a worker takes it and may hold it for one lease, then
 * the grace). With a heartbeat's `leaseMs`, the time from a renewal to the
 * `sweepAt` it sets.
 */
export function sweepWindow(timing: SweepTiming): number {
  return timing.leaseMs + timing.sweepGraceMs;
}

// --- predicates ---------------------------------------------------------------

/** The task as its owner may see it at `now`: missing, expired and foreign tasks look the same (`undefined`). */
export function visible(task: TaskRecord | undefined, owner: string, now: number): TaskRecord | undefined {
  return task && task.owner === owner && !isExpired(task, now) ? task : undefined;
}

/**
 * Whether a worker may take the run lease: the task is `working` and no live
 * lease holds it. (A `working` task never expires, so no expiry check.)
 * The DynamoDB store's claim states the same rule as its condition:
 * `#status = :working AND (attribute_not_exists(#leaseUntil) OR #leaseUntil <= :now)`.
 */
export function claimable(task: TaskRecord, now: number): boolean {
  return task.status === 'working' && !isRunning(task, now);
}

/**
 * Whether `leaseOwner` may write under its lease: the lease is still in its
 * name and the task is not terminal. A lease that ran out while nobody took
 * it over is still held. The DynamoDB store's writes under a lease state
 * the same rule as their condition:
 * `#leaseOwner = :leaseOwner AND #status IN (:working, :input_required)`.
 */
export function leaseHeld(task: TaskRecord, leaseOwner: string): boolean {
  return task.lease?.owner === leaseOwner && !isTerminal(task.status);
}

/**
 * Whether the sweeper should look at the task at `now` (only non-terminal
 * tasks have a `sweepAt`: working ones, and ones waiting for input until a
 * deadline, `StorePolicy.maxInputWaitMs`).
 */
export function isDue(task: TaskRecord, now: number): boolean {
  return task.sweepAt !== undefined && task.sweepAt <= now;
}

/**
 * Whether the sweeper should re-enqueue the task at `now`: a `working` task
 * that {@link isDue}. The DynamoDB store's reschedule states the same rule as
 * its condition (a row has `activeShard` exactly when it has `sweepAt`):
 * `attribute_exists(#activeShard) AND #sweepAt <= :now AND #status = :working`.
 */
export function isDueToRun(task: TaskRecord, now: number): boolean {
  return task.status === 'working' && isDue(task, now);
}

/** Whether a wait for input has passed its deadline at `now` (its `sweepAt`). */
export function isWaitExpired(task: TaskRecord, now: number): boolean {
  return task.status === 'input_required' && isDue(task, now);
}

/**
 * Whether a task whose journal holds `steps` checkpoints made progress: it
 * recorded steps since its attempt count last started again (past its
 * `progressMark`). Progress resets the count, so a long job whose runs keep
 * dying after useful work still finishes. (`undefined`: not counted.)
 */
export function progressedPastMark(task: Pick<TaskBase, 'progressMark'>, steps: number | undefined): steps is number {
  return steps !== undefined && steps > (task.progressMark ?? 0);
}

/**
 * Whether a claim is the task's first run: its start message, claimed for the
 * first time. A redelivery after a crash has a higher count, and a task whose
 * start message was lost and that the sweeper re-enqueued is not a first run.
 * Nothing can have been recorded before a first run.
 */
export function isFirstRun(task: Pick<TaskBase, 'attempts'>, reason: string): boolean {
  return reason === 'start' && task.attempts === 1;
}

/**
 * Whether a claimed task has been started more times than `maxAttempts`
 * allows without progress: past it the worker counts the checkpoints
 * ({@link progressedPastMark}) before running again.
 */
export function pastAttemptCap(task: Pick<TaskBase, 'attempts'>, maxAttempts: number): boolean {
  return task.attempts > maxAttempts;
}

/** Whether a run that asked to be retried used the last of `maxAttempts`: the task then fails instead. */
export function retriesExhausted(task: Pick<TaskBase, 'attempts'>, maxAttempts: number): boolean {
  return task.attempts >= maxAttempts;
}

// --- the fields blind writes set ----------------------------------------------

/** The lease `claim` takes and a renewing `heartbeat` extends. */
export function leaseFor(leaseOwner: string, now: number, leaseMs: number): { owner: string; until: number } {
  return { owner: leaseOwner, until: now + leaseMs };
}

/**
 * What a `heartbeat` writes under a held lease, besides `version` (see
 * {@link HeartbeatOptions}): with `leaseMs` a renewal, the lease and
 * `sweepAt` together (only a renewal moves `sweepAt`, past the renewed
 * lease); with `statusMessage` the progress, the message and `lastUpdatedAt`.
 */
export function heartbeatFields(
  leaseOwner: string,
  now: number,
  options: HeartbeatOptions,
  policy: Pick<StorePolicy, 'sweepGraceMs'>,
): {
  renewal?: Required<Pick<TaskBase, 'lease' | 'sweepAt'>>;
  progress?: Required<Pick<TaskBase, 'statusMessage' | 'lastUpdatedAt'>>;
  restart?: Required<Pick<TaskBase, 'attempts' | 'progressMark'>>;
} {
  const { leaseMs, statusMessage, progressMark } = options;
  return {
    ...(progressMark === undefined ? {} : { restart: { attempts: 1, progressMark } }),
    ...(leaseMs === undefined
      ? {}
      : {
          renewal: {
            lease: leaseFor(leaseOwner, now, leaseMs),
            sweepAt: now + sweepWindow({ leaseMs, sweepGraceMs: policy.sweepGraceMs }),
          },
        }),
    ...(statusMessage === undefined ? {} : { progress: { statusMessage, lastUpdatedAt: now } }),
  };
}

/** What `release` writes under a held lease besides dropping it and `version`. */
export function releaseFields(
  resumeAt: number,
  options: ReleaseOptions,
  policy: SweepTiming,
): { sweepAt: number; attempts?: number; progressMark?: number } {
  return {
    sweepAt: resumeAt + sweepWindow(policy),
    ...(options.handedOver ? { attempts: 0 } : {}),
    ...(options.handedOver && options.progressMark !== undefined ? { progressMark: options.progressMark } : {}),
  };
}
