import { randomUUID } from 'node:crypto';
import type { TaskSettings } from '../config.ts';
import { errorName, type Log } from '../log.ts';
import { logTaskEnded, withMetrics } from '../metrics.ts';
import { MAX_DELAY_SECONDS, type TaskMessage, type TaskQueue } from '../queue/queue.ts';
import { MAX_STATUS_MESSAGE_BYTES, truncateUtf8 } from '../tasks/limits.ts';
import { type JsonRpcErrorObject, MAX_RESULT_BYTES, type TaskOutcome, type TaskRecord } from '../tasks/model.ts';
import { LeaseLostError, type ReleaseOptions, type StepRecord, TaskRowRejectedError, type TaskStore } from '../tasks/store.ts';
import { type Journal, type RunOutcome, runTool } from './run.ts';
import type { ToolDefinition } from './tool.ts';

export interface WorkerDeps {
  store: TaskStore;
  queue: TaskQueue;
  tools: ReadonlyMap<string, ToolDefinition>;
  settings: Pick<
    TaskSettings,
    'leaseMs' | 'cancelCheckMs' | 'progressIntervalMs' | 'invocationBudgetMs' | 'maxAttempts' | 'retryBaseDelayMs' | 'redeliveryMs'
  >;
  /** Time left in this invocation (Lambda's `getRemainingTimeInMillis`), when there is a limit. */
  remainingMs?: () => number;
  now?: () => number;
  log: Log;
}

/**
 * What became of a message: `done` removes it from the queue; `retry` leaves
 * it for redelivery (after the last attempt it reaches the dead-letter queue).
 */
export type Disposition = 'done' | 'retry';

/** The error a task ends with once every delivery attempt failed unexpectedly. */
export const EXHAUSTED_ERROR = { code: -32603, message: 'Internal error' } as const;

/**
 * Time kept back from a Lambda invocation's limit to write a checkpoint and
 * hand over (the stack sizes the invocation budget around it: `infra/timings.ts`).
 */
export const HANDOVER_RESERVE_MS = 30_000;

/**
 * Runs the task a message points at.
 *
 * 1. Claim the lease (one conditional write). No lease means there is nothing
 *    to do: the task is gone, terminal, waiting for input or running elsewhere
 *    (a duplicate delivery). A worker that crashed leaves its lease to expire;
 *    its message comes back after the visibility timeout, which outlasts it.
 * 2. Run the handler, replaying recorded answers and steps. A heartbeat renews
 *    the lease a third of the way into it (which also moves the task's
 *    `sweepAt` past the renewed lease), writes progress messages and carries
 *    cancellation to `ctx.signal`.
 * 3. Write the outcome under the lease (one conditional write), or hand over:
 *    release the lease, then enqueue the continuation, wake-up or retry. If
 *    that enqueue fails the message itself is retried, so nothing is lost.
 *
 * Every write is fenced by the lease: a worker that lost it changes nothing.
 */
export async function processTaskMessage(message: TaskMessage, deps: WorkerDeps): Promise<Disposition> {
  const now = deps.now ?? Date.now;
  const { log } = deps;
  const leaseOwner = randomUUID();
  let task: TaskRecord | undefined;
  try {
    task = await deps.store.claim(message.taskId, leaseOwner, now(), deps.settings.leaseMs);
  } catch (error) {
    // Shows at once what keeps every task from running (e.g. AccessDenied after a bad deploy).
    log({ event: 'claim-failed', taskId: message.taskId, reason: message.reason, error: errorName(error) });
    if (!(error instanceof TaskRowRejectedError)) throw error;
    // The row can never be claimed (it is at DynamoDB's item size limit):
    // end the task rather than let the queue and the sweeper retry it forever.
    const at = now();
    const ended = await deps.store.fail(
      message.taskId,
      EXHAUSTED_ERROR,
      'The task could not be started: its row is at the storage size limit',
      at,
    );
    if (ended) logTaskEnded(log, { taskId: message.taskId }, 'failed', at, { reason: 'row-rejected' });
    return 'done';
  }
  if (!task) {
    log({ event: 'skip', taskId: message.taskId, reason: message.reason });
    return 'done';
  }
  // The first run of a task: its start message, claimed for the first time
  // (a redelivery after a crash has a higher count; a task whose start message
  // was lost and that the sweeper re-enqueued is not measured).
  if (message.reason === 'start' && task.attempts === 1) {
    log(withMetrics({ event: 'task-started', taskId: task.taskId, tool: task.tool }, { TimeQueued: Math.max(0, now() - task.createdAt) }));
  }
  const claimed = task;
  const finish = async (outcome: TaskOutcome) => {
    const at = now();
    // One line per task that reaches an end here, with its metrics (not when
    // the task had ended or moved on meanwhile: whoever ended it logged it).
    if ((await finishUnderLease(deps.store, claimed, leaseOwner, outcome, at, log)) && outcome.status !== 'input_required') {
      logTaskEnded(log, claimed, outcome.status, at);
    }
    return 'done' as const;
  };
  if (task.cancelRequested) return finish({ status: 'cancelled' });

  const steps = journal(deps.store, task.taskId, now);
  // A run that crashes or times out leaves no outcome, and the sweeper (or SQS)
  // starts it again with a fresh message: cap such loops by the runs started
  // without progress. Past the cap (and only then: it costs a query and a
  // write) the checkpoints are counted: a task that recorded steps since the
  // count last started again made progress, and its count starts again at
  // this run, so a long job whose invocations keep dying still finishes.
  if (task.attempts > deps.settings.maxAttempts) {
    const recorded = await steps.count();
    if (recorded <= (task.progressMark ?? 0)) {
      return finish({
        status: 'failed',
        error: EXHAUSTED_ERROR,
        statusMessage: `The task was started ${task.attempts - 1} times without finishing, handing over or recording a new step; its worker kept crashing or timing out`,
      });
    }
    try {
      await deps.store.heartbeat(task.taskId, leaseOwner, now(), { progressMark: recorded });
    } catch (error) {
      if (error instanceof LeaseLostError) return 'done';
      throw error;
    }
    log({ event: 'attempts-restarted', taskId: task.taskId, attempts: task.attempts, steps: recorded });
    // This run is attempt 1 of the new count (a RetryableError's backoff and cap count from it).
    task = { ...task, attempts: 1, progressMark: recorded };
  }

  const tool = deps.tools.get(task.tool);
  if (!tool) return finish({ status: 'failed', error: { code: -32602, message: `Unknown tool: ${task.tool}` } });

  const deadline = now() + Math.min(deps.settings.invocationBudgetMs, (deps.remainingMs?.() ?? Infinity) - HANDOVER_RESERVE_MS);
  const cancel = new AbortController();
  const heartbeat = startHeartbeat(deps, task, leaseOwner, cancel, now);
  try {
    const outcome = await runTool(tool, task.arguments, {
      taskId: task.taskId,
      clientCapabilities: task.clientCapabilities,
      answers: task.inputResponses,
      cancel: cancel.signal,
      progress: heartbeat.progress,
      journal: steps,
      ...(task.questions === undefined ? {} : { questions: task.questions }),
      // The task's first run: nothing can have been recorded before it.
      fresh: message.reason === 'start' && task.attempts === 1,
      ...(task.toolVersion === undefined ? {} : { recordedVersion: task.toolVersion }),
      shouldYield: () => now() >= deadline,
      now,
    });
    heartbeat.stop();
    log({ event: 'ran', taskId: task.taskId, tool: task.tool, outcome: outcome.kind, attempt: task.attempts });
    // A cancel seen while the run was handing over wins over the hand-over.
    if (cancel.signal.aborted && ['sleep', 'continue', 'retry'].includes(outcome.kind))
      return await finish(toTaskOutcome({ kind: 'cancelled' }));
    if (outcome.kind === 'protocol-error' && isReplayError(outcome.error)) {
      log({ event: 'replay-failed', taskId: task.taskId, tool: task.tool, reason: (outcome.error.data as { reason: string }).reason });
    }
    return await settle(outcome, task, leaseOwner, deps, now, finish, steps.loadedCount());
  } catch (error) {
    if (error instanceof LeaseLostError) {
      log({ event: 'lease-lost', taskId: task.taskId, tool: task.tool });
      return 'done';
    }
    // A run that recorded steps since the attempt count last started again made
    // progress: it hands the task over with a fresh message, as a clean hand-over
    // does, so the attempts (and SQS's receive count, which dead-letters the
    // message after its last delivery) start again and a long job whose runs
    // keep failing after useful work still finishes. Without progress the
    // message is left to SQS redelivery: a retry the handler did not ask for.
    const recorded = steps.loadedCount();
    const progressed = recorded !== undefined && recorded > (task.progressMark ?? 0);
    log(
      withMetrics(
        { event: 'error', taskId: task.taskId, tool: task.tool, error: errorName(error), ...(progressed ? { steps: recorded } : {}) },
        { TaskRetries: 1 },
      ),
    );
    if (progressed)
      return await handOver(deps, task, leaseOwner, now, 'retry', now() + deps.settings.retryBaseDelayMs, {
        handedOver: true,
        progressMark: recorded,
      });
    // SQS redelivers the message after its visibility timeout (and dead-letters
    // it after the last attempt); the sweeper must not step in before that.
    await deps.store.release(task.taskId, leaseOwner, now(), now() + deps.settings.redeliveryMs).catch((releaseError: unknown) => {
      // The lease then runs out by itself; the redelivery finds the task free.
      log({ event: 'release-failed', taskId: task.taskId, error: errorName(releaseError) });
    });
    return 'retry';
  } finally {
    heartbeat.stop();
  }
}

/** Writes a finished run's outcome, or hands the task over to a later invocation. */
async function settle(
  outcome: RunOutcome,
  task: TaskRecord,
  leaseOwner: string,
  deps: WorkerDeps,
  now: () => number,
  finish: (outcome: TaskOutcome) => Promise<Disposition>,
  recordedSteps: number | undefined,
): Promise<Disposition> {
  // A clean hand-over records how many steps the task has: the mark later progress is measured from.
  const clean: ReleaseOptions = { handedOver: true, ...(recordedSteps !== undefined ? { progressMark: recordedSteps } : {}) };
  switch (outcome.kind) {
    case 'sleep':
      // Waits past SQS's 15-minute limit are chained: the wake-up finds the sleep not yet due and sleeps again.
      return handOver(deps, task, leaseOwner, now, 'wake', outcome.wakeAt, clean);
    case 'continue':
      return handOver(deps, task, leaseOwner, now, 'continue', now(), clean);
    case 'retry': {
      if (task.attempts >= deps.settings.maxAttempts) {
        return finish({
          status: 'failed',
          error: EXHAUSTED_ERROR,
          statusMessage: `Gave up after ${task.attempts} attempts: ${outcome.error.message}`,
        });
      }
      const backoff = outcome.error.options.delayMs ?? deps.settings.retryBaseDelayMs * 2 ** (task.attempts - 1);
      deps.log(withMetrics({ event: 'retry', taskId: task.taskId, tool: task.tool, attempt: task.attempts }, { TaskRetries: 1 }));
      // A retry the handler asked for is not a clean hand-over: its attempts keep counting.
      return handOver(deps, task, leaseOwner, now, 'retry', now() + Math.min(backoff, MAX_DELAY_SECONDS * 1000), { handedOver: false });
    }
    default:
      return finish(toTaskOutcome(outcome));
  }
}

/**
 * Releases the task to run again at `resumeAt` (`release` says whether the
 * hand-over is clean: the attempt count starts again from a new progress
 * mark), with a message delayed until then.
 */
async function handOver(
  deps: WorkerDeps,
  task: TaskRecord,
  leaseOwner: string,
  now: () => number,
  reason: TaskMessage['reason'],
  resumeAt: number,
  release: ReleaseOptions,
): Promise<'done'> {
  await deps.store.release(task.taskId, leaseOwner, now(), resumeAt, release);
  const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((resumeAt - now()) / 1000)));
  await deps.queue.send({ taskId: task.taskId, reason }, delaySeconds > 0 ? { delaySeconds } : undefined);
  return 'done';
}

/** Writes the outcome under the lease; false when the lease was lost (the task is someone else's, or ended meanwhile). */
async function finishUnderLease(
  store: TaskStore,
  task: TaskRecord,
  leaseOwner: string,
  outcome: TaskOutcome,
  now: number,
  log: Log,
): Promise<boolean> {
  try {
    await store.finish(task, leaseOwner, outcome, now);
    return true;
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
    // Another worker took the task over (or it ended meanwhile): its outcome stands.
    log({ event: 'lease-lost', taskId: task.taskId, tool: task.tool });
    return false;
  }
}

/** Maps a finished run to a task outcome (spec items 50–52: tool errors complete, protocol errors fail). */
export function toTaskOutcome(outcome: Extract<RunOutcome, { kind: 'result' | 'protocol-error' | 'input' | 'cancelled' }>): TaskOutcome {
  switch (outcome.kind) {
    case 'result': {
      const result = { ...outcome.result, resultType: 'complete' };
      const bytes = Buffer.byteLength(JSON.stringify(result));
      if (bytes > MAX_RESULT_BYTES) {
        const message = `The tool's result is too large: ${bytes} bytes, the limit is ${MAX_RESULT_BYTES}`;
        return { status: 'failed', error: { code: -32603, message }, statusMessage: message };
      }
      return { status: 'completed', result };
    }
    case 'protocol-error':
      return { status: 'failed', error: outcome.error, statusMessage: outcome.error.message };
    case 'input':
      return {
        status: 'input_required',
        inputRequests: outcome.inputRequests,
        ...(outcome.questions ? { questions: outcome.questions } : {}),
      };
    case 'cancelled':
      return { status: 'cancelled', statusMessage: "Cancelled at the client's request" };
  }
}

/** Whether a failed run's error is one of the runner's replay checks (`data.reason`). */
function isReplayError(error: JsonRpcErrorObject): boolean {
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return reason === 'replay-divergence' || reason === 'input-key-reused' || reason === 'tool-version-changed';
}

/**
 * Step checkpoints, loaded with one query the first time a step or sleep
 * needs them (or the attempt cap counts them), then kept up to date.
 */
function journal(
  store: TaskStore,
  taskId: string,
  now: () => number,
): Journal & { count(): Promise<number>; loadedCount(): number | undefined } {
  let steps: Promise<Map<string, StepRecord>> | undefined;
  let loaded: Map<string, StepRecord> | undefined;
  const load = () => (steps ??= store.loadJournal(taskId).then((map) => (loaded = map)));
  return {
    async lookup(name) {
      return (await load()).get(name);
    },
    async record(name, value, position) {
      const stored = await store.saveStep(taskId, name, value, now(), position);
      const map = await load();
      if (!map.has(name)) map.set(name, position === undefined ? { value: stored } : { value: stored, position });
      return stored;
    },
    entries: () => load(),
    count: async () => (await load()).size,
    loadedCount: () => loaded?.size,
  };
}

/**
 * Keeps the lease alive and carries cancellation to the handler. A renewal is
 * due once a third of the lease has passed since the last one (the claim
 * counts as one); it is the only write that moves `sweepAt`, an index key.
 * Every `cancelCheckMs` the timer renews the lease when that is due, and
 * otherwise reads the task (a read costs a fifth of a write). Progress
 * messages are written throttled (`progressIntervalMs`), without renewing the
 * lease unless a renewal is due, in which case one write does both. Every
 * write and read reports `cancelRequested`.
 */
function startHeartbeat(deps: WorkerDeps, task: TaskRecord, leaseOwner: string, cancel: AbortController, now: () => number) {
  const { taskId, owner } = task;
  const { leaseMs, cancelCheckMs, progressIntervalMs } = deps.settings;
  let renewedAt = now();
  let lastProgress = 0;
  let busy = false;
  const seen = (cancelRequested: boolean) => {
    if (cancelRequested && !cancel.signal.aborted) cancel.abort(new Error('cancelled'));
  };
  const renewalDue = () => now() - renewedAt >= leaseMs / 3;
  const write = async (renew: boolean, statusMessage?: string) => {
    const at = now();
    if (renew) renewedAt = at;
    const options = { ...(renew ? { leaseMs } : {}), ...(statusMessage === undefined ? {} : { statusMessage }) };
    const { cancelRequested } = await deps.store.heartbeat(taskId, leaseOwner, at, options);
    seen(cancelRequested);
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const check = renewalDue()
      ? write(true)
      : deps.store.get(taskId, owner, now()).then((current) => seen(current?.cancelRequested ?? true));
    check
      .catch((error: unknown) => {
        // A lost lease means another worker owns the task now: stop this run.
        if (error instanceof LeaseLostError) cancel.abort(error);
        // Anything else is retried at the next tick; the lease has two more thirds to go.
        else deps.log({ event: 'heartbeat-failed', taskId, error: errorName(error) });
      })
      .finally(() => (busy = false));
  }, cancelCheckMs);
  return {
    async progress(message: string) {
      if (now() - lastProgress < progressIntervalMs) return;
      lastProgress = now();
      await write(renewalDue(), truncateUtf8(message, MAX_STATUS_MESSAGE_BYTES));
    },
    stop: () => clearInterval(timer),
  };
}
