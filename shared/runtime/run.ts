import { AsyncLocalStorage } from 'node:async_hooks';
import { delay } from '../delay.ts';
import type { CallbackWait, CallbackWaitEntry } from '../tasks/callbacks-model.ts';
import {
  ANSWERED_BY_META,
  EVENT_MESSAGE_META,
  FOUR_EYES_META,
  forPersonOnly,
  type InputRequest,
  type QuestionRecord,
} from '../tasks/model.ts';
import { ReplayTrace } from '../tracing/runs.ts';
import { INVALID_PARAMS, MISSING_CAPABILITY } from '../wire.ts';
import { awaitCallback, type CallbackHost, RUN_HOST } from './callbacks.ts';
import {
  type CallKind,
  divergenceAt,
  fingerprintOf,
  indexRecorded,
  keyReuse,
  type RecordedCalls,
  type ReplayError,
  versionChange,
} from './replay-checks.ts';
import { type RunOptions, type RunOutcome, StoppedError } from './run-types.ts';
import {
  CallbackFailedError,
  CallbackTimedOutError,
  type ProgressAmount,
  RetryableError,
  type TaskContext,
  type ToolDefinition,
  ToolError,
  ToolProtocolError,
  type ToolResult,
} from './tool.ts';

/**
 * Runs a tool handler once, replaying what was recorded before.
 *
 * Replay rules. The handler runs from the start on every run (a resume after
 * input, a wake-up after a sleep, a continuation, a retry), so:
 * - `elicit`/`sample`/`listRoots` return the answer recorded for their key; a key with no
 *   answer registers an input request and never settles;
 * - `step(name, fn)` returns the value recorded for `name`; otherwise it runs
 *   `fn` and records its result before returning it;
 * - `sleep(ms)` records its wake-up time the first time it is reached (the
 *   n-th sleep of a run is `sleep#n`) and returns at once once that time has
 *   passed; before that it never settles.
 * - `now()` outside a step is a step of its own (the n-th read of a run is
 *   `now#n`): it returns the time recorded the first time it was reached;
 *   inside a step's `fn` it reads the clock (the step records the outcome).
 * Everything non-deterministic (time, ids, I/O) therefore belongs in a step,
 * and the order of steps, sleeps and questions must not depend on anything
 * outside them.
 *
 * That order is recorded and checked. Every durable call (step, sleep,
 * question) takes the next position, in call order; a step is recorded with
 * its position and a question with its position and fingerprint (method and
 * requested schema). A replay fails the task with a `ReplayError`
 * (`replay-checks.ts`: `-32603`, a message naming the step or key, `data.reason`) when:
 * - `replay-divergence`: a call reaches a position recorded for another step,
 *   sleep or question, or a recorded step is reached at another position;
 * - `input-key-reused`: one key is used for two different questions (in one
 *   run, or against the question recorded under it);
 * - `tool-version-changed`: recorded work would be replayed by a tool whose
 *   declared `version` differs from the one recorded on the task.
 * Steps recorded before positions existed (no `position`) are matched by name
 * only. Progress reported while the run is still replaying recorded calls is
 * dropped, so `statusMessage` never moves backwards.
 *
 * A run that cannot go on ends at the end of the current event-loop turn in
 * which it got stuck, so questions asked together (`Promise.all`) become one
 * set of outstanding keys. Work still in flight then is abandoned (the
 * context's signal is aborted) and replayed next time.
 */
export async function runTool(tool: ToolDefinition, args: Record<string, unknown>, options: RunOptions): Promise<RunOutcome> {
  const replay = new Replay(tool, options);
  try {
    const ran = tool.handler(args, replay.context()).then(
      (value) => ({ done: true as const, value }),
      (error: unknown) => ({ done: true as const, error }),
    );
    const settled = await Promise.race([ran, replay.suspension.then(() => ({ done: false as const }))]);
    if (!settled.done) return replay.suspended();
    if (replay.failure) return replay.failed(replay.failure);
    if ('error' in settled) return mapThrown(settled.error, options.cancel);
    return resultOutcome(toResult(settled.value));
  } finally {
    replay.detach();
  }
}

/** The replay whose step `fn` is running, if any: `now()` inside a step reads the clock instead of recording a step of its own. */
const insideStep = new AsyncLocalStorage<Replay>();

/**
 * One run's replay state: the position of each durable call, what the run is
 * waiting for (answers, a wake-up, a continuation) and the first replay
 * failure. A call that cannot go on suspends: it never settles, and the run
 * ends at the end of that event-loop turn.
 */
class Replay {
  /** Resolves once a call suspended (at the end of that event-loop turn). */
  readonly suspension: Promise<void>;
  /** The first replay check that failed, if any: the run ends with it. */
  failure: ReplayError | undefined;
  private readonly now: () => number;
  private readonly controller = new AbortController();
  private readonly onCancel = () => this.controller.abort(this.options.cancel.reason);
  private readonly pending: Record<string, InputRequest> = {};
  private readonly newQuestions: Record<string, QuestionRecord> = {};
  private readonly questions: Record<string, QuestionRecord>;
  private wakeAt: number | undefined;
  private readonly waits: Record<string, CallbackWaitEntry> = {};
  private waitMessage = '';
  private yielded = false;
  private stuck!: () => void;
  private suspending = false;
  /** The run's trace, when it is traced: its steps' spans, the waits it passes. */
  private readonly trace: ReplayTrace | undefined;
  /** Durable calls so far (the last one's position). */
  private calls = 0;
  private sleeps = 0;
  private clockReads = 0;
  /** `kind:name` reached in this run. */
  private readonly seen = new Set<string>();
  // The journal's steps are indexed once a step or sleep has loaded them (the
  // load is the query replay needs anyway); before that, questions and
  // progress are judged against the recorded questions alone, so a run that
  // uses no steps never pays for a journal query.
  private recorded: Promise<RecordedCalls> | undefined;
  private readonly questionsOnly: Promise<RecordedCalls>;

  constructor(
    private readonly tool: ToolDefinition,
    private readonly options: RunOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.suspension = new Promise<void>((resolve) => (this.stuck = resolve));
    this.questions = options.questions ?? {};
    this.questionsOnly = indexRecorded(undefined, this.questions);
    this.trace = options.journal ? ReplayTrace.of(options.questions, this.now()) : undefined;
    if (options.cancel.aborted) this.onCancel();
    else options.cancel.addEventListener('abort', this.onCancel, { once: true });
  }

  /** The handler's context over this replay. */
  context(): TaskContext {
    const { tool, options } = this;
    const context: TaskContext = {
      taskId: options.taskId,
      signal: this.controller.signal,
      clientCapabilities: options.clientCapabilities,
      progress: (message, amount) => this.progress(message, amount),
      elicit: (key, { answeredBy, eventMessage, fourEyes, ...params }) => {
        const person = (answeredBy ?? this.tool.answeredBy) === 'person';
        // A machine's question for a person is an approver's, as a four-eyes one: nobody signs in as the machine.
        const otherApprover = person && ((fourEyes ?? this.tool.fourEyes) === true || options.machineOwner === true);
        if (otherApprover && options.approvers !== true && !Object.hasOwn(options.answers, key)) {
          return Promise.reject(new ToolProtocolError(INVALID_PARAMS, undecidable(key, options.machineOwner === true)));
        }
        const marks = {
          ...(person ? { [ANSWERED_BY_META]: 'person' } : {}),
          ...(otherApprover ? { [FOUR_EYES_META]: true } : {}),
          ...((eventMessage ?? this.tool.eventMessage) === true ? { [EVENT_MESSAGE_META]: true } : {}),
        };
        const meta = Object.keys(marks).length > 0 ? { _meta: { ...(params as { _meta?: object })._meta, ...marks } } : {};
        return this.ask(key, { method: 'elicitation/create', params: { mode: 'form', ...params, ...meta } }, 'elicitation');
      },
      sample: (key, params) => this.ask(key, { method: 'sampling/createMessage', params }, 'sampling'),
      listRoots: (key) => this.ask(key, { method: 'roots/list', params: {} }, 'roots'),
      step: (name, fn) => this.durableStep('step', name, fn),
      sleep: (ms) => this.sleep(ms),
      now: () =>
        insideStep.getStore() === this
          ? Promise.resolve(this.now())
          : this.durableStep('step', `now#${++this.clockReads}`, async () => this.now()),
      callback: (name, callbackOptions) => awaitCallback(this.callbackHost(), name, callbackOptions),
      // The composition root binds settings to the catalogue (`bindSettings` in `settings.ts`).
      setting: (key) => Promise.reject(new Error(`Tool "${tool.name}" reads setting "${key}", but no settings are bound to the catalogue`)),
    };
    // Engine-supplied handlers (a workflow tool's) wait through the same host; not part of the tool author's API.
    return Object.assign(context, { [RUN_HOST]: this.callbackHost() });
  }

  /** The outcome of a run whose handler did not settle: a replay failure, or what it waits for. */
  suspended(): RunOutcome {
    if (this.failure) return this.failed(this.failure);
    this.controller.abort(new Error('suspended'));
    // Questions first: a sleep or continuation replays them unanswered anyway.
    if (Object.keys(this.pending).length > 0) {
      return Object.keys(this.newQuestions).length > 0
        ? { kind: 'input', inputRequests: this.pending, questions: this.newQuestions }
        : { kind: 'input', inputRequests: this.pending };
    }
    if (Object.keys(this.waits).length > 0) {
      const wait: CallbackWait = { callbacks: this.waits, ...(this.wakeAt === undefined ? {} : { wakeAt: this.wakeAt }) };
      return { kind: 'callbacks', wait, statusMessage: this.waitMessage };
    }
    if (this.wakeAt !== undefined) return { kind: 'sleep', wakeAt: this.wakeAt };
    if (this.yielded) return { kind: 'continue' };
    throw new Error('Run suspended without a reason');
  }

  /** The outcome of a run a replay check failed. */
  failed(error: ReplayError): RunOutcome {
    this.controller.abort(new Error('replay failed'));
    return { kind: 'protocol-error', error: error.toJSON(), replay: error };
  }

  detach(): void {
    this.options.cancel.removeEventListener('abort', this.onCancel);
  }

  /** What `ctx.callback` needs of this replay (`callbacks.ts`). */
  private callbackHost(): CallbackHost {
    const { options } = this;
    return {
      taskId: options.journal ? options.taskId : undefined,
      state: options.callbacks,
      now: this.now,
      step: (name, fn) => this.durableStep('step', name, fn),
      cancelStep: (name, fn) => this.durableStep('step', name, fn, true),
      cancelReason: () => options.cancel.reason,
      calledBack: (wait) => this.trace?.calledBack(wait),
      wait: (callbackId, entry, message, wakeAt) => {
        this.waits[callbackId] = entry;
        this.waitMessage ||= message;
        if (wakeAt !== undefined) this.wakeAt = Math.min(this.wakeAt ?? wakeAt, wakeAt);
        return this.suspend<never>();
      },
    };
  }

  private suspend<T>(): Promise<T> {
    if (!this.suspending) {
      this.suspending = true;
      setImmediate(this.stuck);
    }
    return new Promise<T>(() => {});
  }

  /** Ends the run with `error` (the first one wins); the call that found it never settles. */
  private fail<T>(error: ReplayError): Promise<T> {
    this.failure ??= error;
    return this.suspend<T>();
  }

  private recordedCalls(load: boolean): Promise<RecordedCalls> {
    return load ? (this.recorded ??= indexRecorded(this.options.journal, this.questions)) : (this.recorded ?? this.questionsOnly);
  }

  private versionChanged(): ReplayError | undefined {
    return versionChange(this.tool.name, this.options.recordedVersion, this.tool.version);
  }

  /** The divergence, if any, of reaching `name` (a `kind`) at `position`, which was recorded at `recordedAt`. */
  private async diverges(kind: CallKind, name: string, position: number, recordedAt: number | undefined): Promise<ReplayError | undefined> {
    const index = this.recordedCalls(kind !== 'question');
    const first = !this.seen.has(`${kind}:${name}`);
    this.seen.add(`${kind}:${name}`);
    if (!first) return undefined; // a name used again in one run: same value, no new position to check
    return divergenceAt(await index, kind, name, position, recordedAt);
  }

  private async ask<T>(key: string, request: InputRequest, capability: string): Promise<T> {
    const { options, questions } = this;
    const position = ++this.calls;
    const fingerprint = fingerprintOf(request);
    const reused = keyReuse(key, fingerprint, this.newQuestions[key] ?? questions[key]);
    if (reused) return this.fail<T>(reused);
    if (options.journal) {
      const diverged = await this.diverges('question', key, position, questions[key]?.position);
      if (diverged) return this.fail<T>(diverged);
    }
    if (Object.hasOwn(options.answers, key)) {
      if (questions[key]) {
        const changed = this.versionChanged();
        if (changed) return this.fail<T>(changed);
      }
      const decision = options.decisions?.[key];
      this.trace?.answered(key, questions[key], forPersonOnly(request), decision?.at);
      const answer = options.answers[key];
      // Who decided a question for a person travels with its answer (`ElicitAnswer.decidedBy`).
      return (decision && typeof answer === 'object' && answer !== null ? { ...answer, decidedBy: decision } : answer) as T;
    }
    if (!(capability in options.clientCapabilities)) {
      throw new ToolProtocolError(MISSING_CAPABILITY, 'Missing required client capability', {
        requiredCapabilities: { [capability]: {} },
      });
    }
    this.pending[key] = request;
    if (options.journal) this.newQuestions[key] ??= { position, fingerprint, ...(this.trace ? { askedAt: this.trace.startedAt } : {}) };
    return this.suspend<T>();
  }

  /**
   * Failure window: `fn` may have run (and had its side effects) when the
   * invocation dies before the value is recorded; it then runs again on the
   * next replay. Steps are at-least-once; make their effects idempotent.
   */
  private async durableStep<T>(kind: 'step' | 'sleep', name: string, fn: () => Promise<T>, evenIfCancelled = false): Promise<T> {
    // A cancelled task starts no new step; a run carrying a cancel to `onCancel`s replays the recorded ones.
    const cancelling = this.options.callbacks?.cancelling === true;
    if (!cancelling) this.options.cancel.throwIfAborted();
    const position = ++this.calls;
    const journal = this.options.journal;
    if (!journal) return insideStep.run(this, fn);
    const entry = await journal.lookup(name);
    const diverged = await this.diverges(kind, name, position, entry?.position);
    if (diverged) return this.fail<T>(diverged);
    if (entry) {
      const changed = this.versionChanged();
      return changed ? this.fail<T>(changed) : (entry.value as T);
    }
    if (cancelling && !evenIfCancelled) this.options.cancel.throwIfAborted();
    if (this.options.shouldYield?.()) {
      this.yielded = true;
      return this.suspend<T>();
    }
    const value = await (this.trace ? this.trace.step(kind, name, () => insideStep.run(this, fn)) : insideStep.run(this, fn));
    return (await journal.record(name, value === undefined ? null : value, position)) as T;
  }

  private async sleep(ms: number): Promise<void> {
    this.options.cancel.throwIfAborted(); // nor goes to sleep
    const name = `sleep#${++this.sleeps}`;
    // Inline (no journal): wait in-process, stopping as soon as the run is cancelled or out of budget (the same signal).
    if (!this.options.journal) return delay(ms, this.controller.signal);
    const due = await this.durableStep('sleep', name, async () => this.now() + ms);
    if (due <= this.now()) return;
    this.wakeAt = Math.min(this.wakeAt ?? due, due);
    return this.suspend<void>();
  }

  /** Progress from a replay of recorded calls repeats the past: only new work reports. */
  private async progress(message: string, amount?: ProgressAmount): Promise<void> {
    if (this.options.journal && !this.options.fresh) {
      const { lastPosition, unpositioned } = await this.recordedCalls(false);
      const replaying =
        this.calls < lastPosition || [...unpositioned].some((name) => !this.seen.has(`step:${name}`) && !this.seen.has(`sleep:${name}`));
      if (replaying) return;
    }
    await this.options.progress(message, amount);
  }
}

function mapThrown(error: unknown, cancel: AbortSignal): RunOutcome {
  if (error instanceof ToolError || error instanceof CallbackFailedError || error instanceof CallbackTimedOutError)
    return { kind: 'result', result: { content: [{ type: 'text', text: error.message }], isError: true } };
  if (error instanceof ToolProtocolError) return { kind: 'protocol-error', error: error.toJSON() };
  if (error instanceof StoppedError) return { kind: 'cancelled', statusMessage: error.message };
  if (cancel.aborted) return { kind: 'cancelled' };
  if (error instanceof RetryableError) return { kind: 'retry', error };
  throw error;
}

/** A returned result as a run's outcome: its `statusMessage`, if a string, is the task's final message, not part of the result. */
function resultOutcome({ statusMessage, ...result }: ToolResult): RunOutcome {
  return typeof statusMessage === 'string' ? { kind: 'result', result, statusMessage } : { kind: 'result', result };
}

/** Why a question that needs an approver cannot be decided on a deployment without approvers. */
function undecidable(key: string, machine: boolean): string {
  const none = 'this deployment names no approvers (TASKS_APPROVERS, -c approvers=group:<name>): it cannot be decided';
  return machine
    ? `Question "${key}" is for a person, and this task's caller is a machine (a client acting for itself, by the deployment's ` +
        `machine rule, TASKS_MACHINE_CLAIM) that nobody signs in as, so an approver must decide it; ${none}`
    : `Question "${key}" must be decided by an approver other than the caller, and ${none}`;
}

function toResult(value: ToolResult | string): ToolResult {
  return typeof value === 'string' ? { content: [{ type: 'text', text: value }] } : value;
}
