import { Duration } from 'aws-cdk-lib';
import { DEFAULT_SETTINGS, ENV } from '../shared/config.ts';
import { HANDOVER_RESERVE_MS } from '../shared/runtime/worker.ts';

/**
 * AWS's rule for SQS event sources: the queue's visibility timeout is at least
 * six times the function timeout, so a batch that is retried after throttling
 * is not redelivered while an earlier attempt may still run.
 */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/**
 * Time the worker keeps back from Lambda's limit to checkpoint and hand a task
 * over: its effective budget is `min(TASKS_INVOCATION_BUDGET_MS, remaining
 * time − this)`. Defined by the runtime, which applies it.
 */
export const HANDOVER_RESERVE = Duration.millis(HANDOVER_RESERVE_MS);

/**
 * How long one worker invocation may run: the ceiling on a tool that does not
 * use steps, and on a single step (see {@link LONGEST_STEP}). It bounds the
 * time between checkpoints, not a job; the visibility timeout, DLQ delay and
 * backlog alarm grow with it. Why 5 minutes: `docs/durability.md`.
 */
const WORKER_TIMEOUT = Duration.minutes(5);

/**
 * A step that starts just before the invocation budget runs out must still
 * finish and be recorded before the timeout: the runtime only yields between
 * steps. The budget is therefore the timeout minus this (at least the
 * runtime's {@link HANDOVER_RESERVE}).
 */
const LONGEST_STEP = Duration.minutes(1);

/**
 * The lease a worker holds on a running task, renewed every third of its
 * length: how long a crashed or timed-out worker keeps others off the task.
 * Why 3 minutes (a renewal a minute, recovery within 6 minutes):
 * `docs/durability.md`.
 */
const LEASE = Duration.minutes(3);

/**
 * How long past its next expected event (delivery of its start, continuation
 * or wake-up message; its lease ending) a task may go unnoticed before the
 * sweeper re-enqueues it: SQS → Lambda delivery with room. How it moves with
 * claims and renewals: the timeline in `docs/durability.md`.
 */
const SWEEP_GRACE = Duration.minutes(2);

/** How often the sweeper runs, unless context says otherwise (EventBridge's finest rate is a minute). */
export const DEFAULT_SWEEP_INTERVAL = Duration.minutes(1);

/** One sweep takes a few seconds; below the shortest interval, so runs do not overlap. */
export const SWEEPER_TIMEOUT = Duration.seconds(30);

/** The timings of durable execution, checked against each other ({@link durableTimings}). */
export interface DurableTimings {
  readonly workerTimeout: Duration;
  /** Of the task queue: {@link VISIBILITY_TIMEOUT_FACTOR} × the worker timeout. */
  readonly visibilityTimeout: Duration;
  readonly lease: Duration;
  /** `TASKS_INVOCATION_BUDGET_MS`: time a worker invocation spends on a task before handing over. */
  readonly invocationBudget: Duration;
  readonly sweepGrace: Duration;
  readonly sweepInterval: Duration;
  readonly sweeperTimeout: Duration;
}

/**
 * The stack's timings for a sweep interval, after checking the relations
 * that keep durable execution prompt and safe ({@link timingProblems}; each
 * is explained in `docs/durability.md`); a violation fails synthesis.
 */
export function durableTimings(sweepInterval: Duration = DEFAULT_SWEEP_INTERVAL): DurableTimings {
  const timings: DurableTimings = {
    workerTimeout: WORKER_TIMEOUT,
    visibilityTimeout: Duration.seconds(WORKER_TIMEOUT.toSeconds() * VISIBILITY_TIMEOUT_FACTOR),
    lease: LEASE,
    invocationBudget: WORKER_TIMEOUT.minus(LONGEST_STEP),
    sweepGrace: SWEEP_GRACE,
    sweepInterval,
    sweeperTimeout: SWEEPER_TIMEOUT,
  };
  const problems = timingProblems(timings, DEFAULT_SETTINGS.cancelCheckMs);
  if (problems.length > 0) throw new Error(`Inconsistent durable-execution timings:\n- ${problems.join('\n- ')}`);
  return timings;
}

/** The relations of {@link durableTimings} that `timings` breaks, in words. */
export function timingProblems(timings: DurableTimings, cancelCheckMs: number): string[] {
  const ms = (d: Duration) => d.toMilliseconds();
  const { workerTimeout, visibilityTimeout, lease, invocationBudget, sweepGrace, sweepInterval, sweeperTimeout } = timings;
  const problems: string[] = [];
  if (ms(visibilityTimeout) < VISIBILITY_TIMEOUT_FACTOR * ms(workerTimeout)) {
    problems.push(
      `the visibility timeout (${visibilityTimeout.toHumanString()}) must be at least ${VISIBILITY_TIMEOUT_FACTOR} × the worker ` +
        `timeout (${workerTimeout.toHumanString()})`,
    );
  }
  if (ms(visibilityTimeout) < ms(workerTimeout) + ms(lease)) {
    problems.push(
      `the visibility timeout (${visibilityTimeout.toHumanString()}) must cover the worker timeout plus the lease ` +
        `(${lease.toHumanString()})`,
    );
  }
  if (ms(lease) <= 3 * cancelCheckMs) {
    problems.push(`the lease (${lease.toHumanString()}) must exceed three heartbeat ticks (3 × ${cancelCheckMs} ms)`);
  }
  const stepRoom = ms(workerTimeout) - ms(invocationBudget);
  if (stepRoom < ms(HANDOVER_RESERVE)) {
    problems.push(
      `the invocation budget (${invocationBudget.toHumanString()}) must leave at least the hand-over reserve ` +
        `(${HANDOVER_RESERVE.toHumanString()}) of the worker timeout`,
    );
  }
  if (ms(lease) + ms(sweepGrace) + ms(sweepInterval) >= ms(visibilityTimeout)) {
    problems.push(
      `lease + sweep grace + sweep interval (${lease.toHumanString()} + ${sweepGrace.toHumanString()} + ` +
        `${sweepInterval.toHumanString()}) must be shorter than the visibility timeout (${visibilityTimeout.toHumanString()}), so ` +
        `that the sweeper recovers crashed tasks before SQS redelivers them`,
    );
  }
  if (ms(sweeperTimeout) >= ms(sweepInterval)) {
    problems.push(
      `the sweeper timeout (${sweeperTimeout.toHumanString()}) must be shorter than the sweep interval (${sweepInterval.toHumanString()})`,
    );
  }
  return problems;
}

/**
 * The settings every function gets: the store's policy (`sweepAt` = queued or
 * resume time + lease + grace, or renewed lease end + grace) is applied by
 * every function that writes a task, so they must all agree on it.
 */
export function timingsEnvironment(timings: DurableTimings): Record<string, string> {
  return {
    [ENV.leaseMs]: String(timings.lease.toMilliseconds()),
    [ENV.sweepGraceMs]: String(timings.sweepGrace.toMilliseconds()),
    [ENV.invocationBudgetMs]: String(timings.invocationBudget.toMilliseconds()),
    // After an unexpected error the worker leaves the message to SQS; the
    // sweeper waits this long so that redelivery (and the DLQ count) decides.
    [ENV.redeliveryMs]: String(timings.visibilityTimeout.toMilliseconds()),
  };
}
