import { randomUUID } from 'node:crypto';
import type { CallbackKeys } from '../callback-tokens.ts';
import type { TaskSettings } from '../config.ts';
import type { LifecycleEvents } from '../events/publisher.ts';
import type { DeploymentLinks } from '../links.ts';
import { errorName, type Log } from '../log.ts';
import { logTaskEnded, withMetrics } from '../metrics.ts';
import { MAX_DELAY_SECONDS, type TaskMessage, type TaskQueue } from '../queue/queue.ts';
import { cancelRunsOnCancel } from '../tasks/callbacks-model.ts';
import { MAX_STATUS_MESSAGE_BYTES, truncateUtf8 } from '../tasks/limits.ts';
import { forPersonOnly, MAX_RESULT_BYTES, type TaskOutcome, type TaskRecord } from '../tasks/model.ts';
import { isFirstRun, pastAttemptCap, progressedPastMark, retriesExhausted } from '../tasks/predicates.ts';
import type { WorkerStore } from '../tasks/store.ts';
import { LeaseLostError, TaskRowRejectedError } from '../tasks/store-errors.ts';
import type { ReleaseOptions } from '../tasks/store-types.ts';
import { runEnded, type Traced, traceRun } from '../tracing/runs.ts';
import { BARE_INTERNAL_ERROR, INTERNAL_ERROR, INVALID_PARAMS } from '../wire.ts';
import { callbackState, suspendOnCallbacks } from './callbacks.ts';
import { startHeartbeat } from './heartbeat.ts';
import { type TaskJournal, taskJournal } from './journal.ts';
import { REPLAY_WIRE_REASONS } from './replay-checks.ts';
import { runTool } from './run.ts';
import type { RunOutcome } from './run-types.ts';
import type { ToolDefinition } from './tool.ts';

export interface WorkerDeps extends Traced {
  store: WorkerStore;
  queue: TaskQueue;
  tools: ReadonlyMap<string, ToolDefinition>;
  config: Pick<
    TaskSettings,
    'leaseMs' | 'cancelCheckMs' | 'progressIntervalMs' | 'invocationBudgetMs' | 'maxAttempts' | 'retryBaseDelayMs' | 'redeliveryMs'
  >;
  /** Time left in this invocation (Lambda's `getRemainingTimeInMillis`), when there is a limit. */
  remainingMs?: () => number;
  now?: () => number;
  log: Log;
  /** Lifecycle events of the outcomes written here (a question for a person, an end); absent: none. */
  events?: LifecycleEvents;
  /** Where a person answers (the task's page): named in the status of a task that waits for one. */
  links?: DeploymentLinks;
  /** The keys per purpose: callback URLs carry a token sealed under one (absent: a callback fails its step). */
  keys?: CallbackKeys;
  /** Whether the deployment names approvers (`TASKS_APPROVERS`); without them a question needing another approver is refused. */
  approvers?: boolean;
}

/**
 * What became of a message: `done` removes it from the queue; `retry` leaves
 * it for redelivery (after the last attempt it reaches the dead-letter queue).
 */
export type Disposition = 'done' | 'retry';

/** The error a task ends with once every delivery attempt failed unexpectedly. */
export const EXHAUSTED_ERROR = BARE_INTERNAL_ERROR;

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
 * 3. Then exactly one of: finish (write the outcome under the lease, one
 *    conditional write); hand over (release the lease, then enqueue the
 *    continuation, wake-up or retry; if that enqueue fails the message itself
 *    is retried, so nothing is lost); give back (release the lease for SQS to
 *    redeliver the message).
 *
 * Every write is fenced by the lease: a worker that lost it changes nothing.
 */
export async function processTaskMessage(message: TaskMessage, deps: WorkerDeps): Promise<Disposition> {
  const claimed = await claim(message, deps);
  return claimed instanceof TaskRun ? traceRun(deps, message, claimed.claimed, () => claimed.run()) : claimed;
}

/** Step 1: the claimed task as a {@link TaskRun}, or what to do with a message that claims nothing. */
async function claim(message: TaskMessage, deps: WorkerDeps): Promise<TaskRun | Disposition> {
  const now = deps.now ?? Date.now;
  const { log } = deps;
  const leaseOwner = randomUUID();
  let task: TaskRecord | undefined;
  try {
    task = await deps.store.claim(message.taskId, leaseOwner, now());
  } catch (error) {
    // Shows at once what keeps every task from running (e.g. AccessDenied after a bad deploy).
    log({ event: 'claim-failed', taskId: message.taskId, reason: message.reason, error: errorName(error) });
    if (!(error instanceof TaskRowRejectedError)) throw error;
    // The row can never be claimed (it is at DynamoDB's item size limit):
    // end the task rather than let the queue and the sweeper retry it forever.
    const at = now();
    const statusMessage = 'The task could not be started: its row is at the storage size limit';
    const ended = await deps.store.fail(message.taskId, { error: EXHAUSTED_ERROR, statusMessage, now: at });
    if (ended) {
      logTaskEnded(log, ended, 'failed', at, { reason: 'row-rejected' });
      await deps.events?.announce(ended);
    }
    return 'done';
  }
  if (!task) {
    log({ event: 'skip', taskId: message.taskId, reason: message.reason });
    return 'done';
  }
  const firstRun = isFirstRun(task, message.reason);
  if (firstRun) {
    log(withMetrics({ event: 'task-started', taskId: task.taskId, tool: task.tool }, { TimeQueued: Math.max(0, now() - task.createdAt) }));
  }
  return new TaskRun(deps, task, leaseOwner, firstRun);
}

/**
 * One claimed task, from the run of its handler to exactly one of {@link TaskRun.finish}, {@link TaskRun.handOver} or
 * {@link TaskRun.giveBack}. It holds the lease, the dependencies and the journal for the whole run.
 */
class TaskRun {
  private readonly now: () => number;
  private readonly log: Log;
  private readonly steps: TaskJournal;
  /** The record the run works from: as claimed, its attempt count started again when the cap finds progress. */
  private task: TaskRecord;

  constructor(
    private readonly deps: WorkerDeps,
    /** The record as claimed: outcomes are written against it. */
    readonly claimed: TaskRecord,
    private readonly leaseOwner: string,
    private readonly firstRun: boolean,
  ) {
    this.task = claimed;
    this.now = deps.now ?? Date.now;
    this.log = deps.log;
    this.steps = taskJournal(deps.store, claimed.taskId, this.now);
  }

  /** Step 2 and 3: run the handler, then settle. */
  async run(): Promise<Disposition> {
    // A cancel ends the task, unless its run waits on callbacks with an `onCancel`: that run replays to carry it to them.
    const cancelling = this.task.cancelRequested && cancelRunsOnCancel(this.task);
    if (this.task.cancelRequested && !cancelling) return this.finish({ status: 'cancelled' });
    if (pastAttemptCap(this.task, this.deps.config.maxAttempts)) {
      const capped = await this.checkProgress();
      if (capped) return capped;
    }
    const tool = this.deps.tools.get(this.task.tool);
    if (!tool) return this.finish({ status: 'failed', error: { code: INVALID_PARAMS, message: `Unknown tool: ${this.task.tool}` } });

    const cancel = new AbortController();
    if (cancelling) cancel.abort();
    const heartbeat = startHeartbeat(this.deps, this.task, this.leaseOwner, cancel, this.now);
    try {
      const outcome = await this.runHandler(tool, cancel.signal, heartbeat.progress, cancelling);
      heartbeat.stop();
      if (cancelling) return await this.finish(toTaskOutcome({ kind: 'cancelled' }));
      return await this.settle(outcome, cancel.signal.aborted);
    } catch (error) {
      return await this.recover(error);
    } finally {
      heartbeat.stop();
    }
  }

  /**
   * A run that crashes or times out leaves no outcome, and the sweeper (or SQS) starts it again with a fresh message:
   * such loops are capped by the runs started without progress. Past the cap (and only then: it costs a query and a
   * write) the checkpoints are counted: a task that made progress has its count start again at this run, so a long job
   * whose invocations keep dying still finishes; one that did not fails. Undefined: run the handler.
   */
  private async checkProgress(): Promise<Disposition | undefined> {
    const { task } = this;
    const recorded = await this.steps.count();
    if (!progressedPastMark(task, recorded)) {
      return this.finish({
        status: 'failed',
        error: EXHAUSTED_ERROR,
        statusMessage:
          `The task was started ${task.attempts - 1} times without finishing, handing over or recording a new step; its ` +
          `worker kept crashing or timing out`,
      });
    }
    try {
      await this.deps.store.heartbeat(task.taskId, this.leaseOwner, this.now(), { progressMark: recorded });
    } catch (error) {
      if (error instanceof LeaseLostError) return 'done';
      throw error;
    }
    this.log({ event: 'attempts-restarted', taskId: task.taskId, attempts: task.attempts, steps: recorded });
    // This run is attempt 1 of the new count (a RetryableError's backoff and cap count from it).
    this.task = { ...task, attempts: 1, progressMark: recorded };
    return undefined;
  }

  /** Runs the handler once, replaying the journal, until it ends or suspends. */
  private async runHandler(
    tool: ToolDefinition,
    signal: AbortSignal,
    progress: (message: string) => Promise<void>,
    cancelling: boolean,
  ): Promise<RunOutcome> {
    const { task, now } = this;
    const { invocationBudgetMs } = this.deps.config;
    const deadline = now() + Math.min(invocationBudgetMs, (this.deps.remainingMs?.() ?? Infinity) - HANDOVER_RESERVE_MS);
    const outcome = await runTool(tool, task.arguments, {
      taskId: task.taskId,
      clientCapabilities: task.clientCapabilities,
      answers: task.inputResponses,
      ...(task.decisions === undefined ? {} : { decisions: task.decisions }),
      approvers: this.deps.approvers === true,
      ...(task.machineOwner ? { machineOwner: true } : {}),
      cancel: signal,
      progress,
      journal: this.steps,
      callbacks: callbackState(task, this.deps, cancelling),
      ...(task.questions === undefined ? {} : { questions: task.questions }),
      fresh: this.firstRun,
      ...(task.toolVersion === undefined ? {} : { recordedVersion: task.toolVersion }),
      shouldYield: () => now() >= deadline,
      now,
    });
    this.log({ event: 'ran', taskId: task.taskId, tool: task.tool, outcome: outcome.kind, attempt: task.attempts });
    if (outcome.kind === 'protocol-error' && outcome.replay) {
      this.log({ event: 'replay-failed', taskId: task.taskId, tool: task.tool, reason: REPLAY_WIRE_REASONS[outcome.replay.reason] });
    }
    return outcome;
  }

  /** Step 3 for a run that ended: finish, or hand over to a later invocation. */
  private settle(outcome: RunOutcome, cancelled: boolean): Promise<Disposition> {
    const { task, now } = this;
    const { maxAttempts, retryBaseDelayMs } = this.deps.config;
    // A cancel seen while the run was handing over wins over the hand-over.
    if (
      cancelled &&
      (outcome.kind === 'sleep' || outcome.kind === 'continue' || outcome.kind === 'retry' || outcome.kind === 'callbacks')
    ) {
      return this.finish(toTaskOutcome({ kind: 'cancelled' }));
    }
    // A clean hand-over records how many steps the task has: the mark later progress is measured from.
    const recordedSteps = this.steps.loadedCount();
    const clean: ReleaseOptions = { handedOver: true, ...(recordedSteps !== undefined ? { progressMark: recordedSteps } : {}) };
    switch (outcome.kind) {
      case 'sleep':
        // Waits past SQS's 15-minute limit are chained: the wake-up finds the sleep not yet due and sleeps again.
        return this.handOver('wake', outcome.wakeAt, clean);
      case 'continue':
        return this.handOver('continue', now(), clean);
      case 'callbacks':
        return this.awaitCallbacks(outcome, clean);
      case 'retry': {
        if (retriesExhausted(task, maxAttempts)) {
          const statusMessage = `Gave up after ${task.attempts} attempts: ${outcome.error.message}`;
          return this.finish({ status: 'failed', error: EXHAUSTED_ERROR, statusMessage });
        }
        const backoff = outcome.error.options.delayMs ?? retryBaseDelayMs * 2 ** (task.attempts - 1);
        this.log(withMetrics({ event: 'retry', taskId: task.taskId, tool: task.tool, attempt: task.attempts }, { TaskRetries: 1 }));
        // A retry the handler asked for is not a clean hand-over: its attempts keep counting.
        return this.handOver('retry', now() + Math.min(backoff, MAX_DELAY_SECONDS * 1000), { handedOver: false });
      }
      default:
        return this.finish(namingThePage(toTaskOutcome(outcome), task.taskId, this.deps.links));
    }
  }

  /**
   * Step 3 for a run that threw. A lost lease means the task is someone
   * else's: nothing to do. A run that made progress hands the task over with a
   * fresh message, as a clean hand-over does, so the attempts (and SQS's
   * receive count, which dead-letters the message after its last delivery)
   * start again and a long job whose runs keep failing after useful work still
   * finishes. Without progress the message is given back to SQS: a retry the
   * handler did not ask for.
   */
  private async recover(error: unknown): Promise<Disposition> {
    const { task, now } = this;
    if (error instanceof LeaseLostError) {
      this.log({ event: 'lease-lost', taskId: task.taskId, tool: task.tool });
      return 'done';
    }
    const recorded = this.steps.loadedCount();
    const progressed = progressedPastMark(task, recorded);
    this.log(
      withMetrics(
        { event: 'error', taskId: task.taskId, tool: task.tool, error: errorName(error), ...(progressed ? { steps: recorded } : {}) },
        { TaskRetries: 1 },
      ),
    );
    if (progressed) return this.handOver('retry', now() + this.deps.config.retryBaseDelayMs, { handedOver: true, progressMark: recorded });
    return this.giveBack();
  }

  /**
   * Finish: writes the outcome under the lease, and logs one line per task that
   * reaches an end here, with its metrics (not when the lease was lost: the
   * task had ended or moved on meanwhile, and whoever ended it logged it).
   * Then, the outcome written, announces what it implies (a question for a
   * person, or the end): a publish that fails changes nothing of the task.
   */
  private async finish(outcome: TaskOutcome): Promise<'done'> {
    const task = this.claimed;
    const at = this.now();
    let finished: TaskRecord;
    try {
      finished = await this.deps.store.finish(task, this.leaseOwner, outcome, at);
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      // Another worker took the task over (or it ended meanwhile): its outcome stands.
      this.log({ event: 'lease-lost', taskId: task.taskId, tool: task.tool });
      return 'done';
    }
    runEnded(outcome);
    if (outcome.status !== 'input_required') logTaskEnded(this.log, task, outcome.status, at);
    await this.deps.events?.announce(finished);
    return 'done';
  }

  /**
   * Hand over: releases the task to run again at `resumeAt` (`release` says
   * whether the hand-over is clean: the attempt count starts again from a new
   * progress mark), with a message delayed until then.
   */
  private async handOver(reason: TaskMessage['reason'], resumeAt: number, release: ReleaseOptions): Promise<'done'> {
    const { taskId } = this.task;
    const why = reason === 'wake' ? 'sleep' : reason === 'retry' ? 'retry' : 'continue';
    await this.deps.store.release(taskId, this.leaseOwner, resumeAt, { ...release, why, at: this.now(), claimed: this.claimed });
    const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((resumeAt - this.now()) / 1000)));
    await this.deps.queue.send({ taskId, reason }, delaySeconds > 0 ? { delaySeconds } : undefined);
    return 'done';
  }

  /** Suspend on callbacks (`suspendOnCallbacks`); a completion or a cancel that came during the run makes it go on at once. */
  private async awaitCallbacks(outcome: Extract<RunOutcome, { kind: 'callbacks' }>, clean: ReleaseOptions): Promise<'done'> {
    const suspended = await suspendOnCallbacks(this.deps, this.claimed, this.leaseOwner, outcome, clean.progressMark, this.now());
    return suspended === 'signalled' ? this.handOver('continue', this.now(), clean) : 'done';
  }

  /**
   * Give back: SQS redelivers the message after its visibility timeout (and
   * dead-letters it after the last attempt); the sweeper must not step in
   * before that.
   */
  private async giveBack(): Promise<'retry'> {
    const { taskId } = this.task;
    const back = { why: 'redelivery', at: this.now(), claimed: this.claimed } as const;
    await this.deps.store.release(taskId, this.leaseOwner, back.at + this.deps.config.redeliveryMs, back).catch((releaseError: unknown) => {
      // The lease then runs out by itself; the redelivery finds the task free.
      this.log({ event: 'release-failed', taskId, error: errorName(releaseError) });
    });
    return 'retry';
  }
}

/**
 * A wait on a question only a person may answer gets a short status naming
 * the task's page, where they answer it: whoever reads the task's status
 * (a client, its model) can send them there. No link goes into the question
 * itself (form-mode elicitations carry none).
 */
function namingThePage(outcome: TaskOutcome, taskId: string, links: DeploymentLinks | undefined): TaskOutcome {
  if (outcome.status !== 'input_required' || !Object.values(outcome.inputRequests).some(forPersonOnly)) return outcome;
  const page = links?.taskPage(taskId);
  return page ? { ...outcome, statusMessage: `Waiting for a person to answer on the task's page: ${page}` } : outcome;
}

/** Maps a finished run to a task outcome (spec items 50–52: tool errors complete, protocol errors fail). */
function toTaskOutcome(outcome: Extract<RunOutcome, { kind: 'result' | 'protocol-error' | 'input' | 'cancelled' }>): TaskOutcome {
  switch (outcome.kind) {
    case 'result': {
      const result = { ...outcome.result, resultType: 'complete' };
      const bytes = Buffer.byteLength(JSON.stringify(result));
      if (bytes > MAX_RESULT_BYTES) {
        const message = `The tool's result is too large: ${bytes} bytes, the limit is ${MAX_RESULT_BYTES}`;
        return { status: 'failed', error: { code: INTERNAL_ERROR, message }, statusMessage: message };
      }
      // The tool's final message, cut like a progress message.
      const message =
        outcome.statusMessage === undefined ? {} : { statusMessage: truncateUtf8(outcome.statusMessage, MAX_STATUS_MESSAGE_BYTES) };
      return { status: 'completed', result, ...message };
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
      return { status: 'cancelled', statusMessage: outcome.statusMessage ?? "Cancelled at the client's request" };
  }
}
