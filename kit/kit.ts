/**
 * The tool author's test kit: runs a tool's handler through the real replay
 * runner (`runTool`, the one the worker uses) with answers scripted up front,
 * a clock the test controls for durable sleeps, and the checkpoints the run
 * recorded open to inspection. No queue, table or network: a test of a tool
 * takes milliseconds.
 *
 * ```ts
 * const run = testTool(approvalGate, { action: 'deploy' }, { answers: { approval: accept({ approve: true }) } });
 * const result = await run.result();         // replays until the tool finishes
 * assert.equal(textOf(result), 'Approved and done: deploy');
 * ```
 *
 * Each {@link ToolRun.once} is one worker invocation: the handler runs from
 * the start, replaying recorded steps, answers and sleeps, exactly as
 * deployed. {@link ToolRun.finish} repeats that the way the worker and the
 * client would: it answers input requests from the script, moves the clock to
 * each sleep's wake-up time, and runs continuations and retries again.
 *
 * For the whole stack (HTTP, queue, table, worker) see `local.ts` in this folder.
 */

import { runTool } from '../shared/runtime/run.ts';
import type { Journal, JournalEntry, RunOutcome } from '../shared/runtime/run-types.ts';
import { withSettings } from '../shared/runtime/settings.ts';
import type { ElicitAnswer, ToolDefinition, ToolResult } from '../shared/runtime/tool.ts';
import type { CallbackSettlement, PostedCompletion } from '../shared/tasks/callbacks-model.ts';
import type { ClientCapabilities, Decision, InputRequest, QuestionRecord } from '../shared/tasks/model.ts';

/** The clock a {@link ToolRun} replays against; durable sleeps wait on it, not on real time. */
export class TestClock {
  #now: number;

  constructor(start: number) {
    this.#now = start;
  }

  /** The current time, epoch milliseconds. */
  now(): number {
    return this.#now;
  }

  /** Moves time forward by `ms` (a sleep due by then returns on the next run). */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`TestClock.advance needs a non-negative number of ms, got ${ms}`);
    this.#now += ms;
  }

  /** Sets the time; it never goes backwards. */
  set(epochMs: number): void {
    if (epochMs < this.#now) throw new RangeError(`TestClock.set cannot go back in time (${epochMs} < ${this.#now})`);
    this.#now = epochMs;
  }
}

/** The clock's default start: 2026-01-01T00:00:00Z. */
export const DEFAULT_START = Date.UTC(2026, 0, 1);

export interface TestToolOptions {
  /** Answers to `ctx.elicit`/`ctx.sample`, by key, as a client would give them through `tasks/update`. */
  answers?: Record<string, unknown>;
  /** Values for `ctx.setting(key)`, by key (a key the tool declares but this omits fails the read). */
  settings?: Record<string, string>;
  /** The client's capabilities (default: elicitation, sampling and roots). */
  clientCapabilities?: ClientCapabilities;
  /** Where the clock starts (epoch ms; default {@link DEFAULT_START}). */
  startAt?: number;
  /**
   * Hand over to a continuation after this many new steps in one run, as a
   * worker whose invocation time runs low does (default: never).
   */
  stepsPerRun?: number;
  /** {@link ToolRun.finish} lets open callbacks time out (the clock moves to their deadline) instead of failing the test. */
  timeOutCallbacks?: boolean;
  /** `ctx.taskId` (default `test-task`). */
  taskId?: string;
  /** Whether the deployment names approvers (default `true`); `false`: a four-eyes question is refused at once. */
  approvers?: boolean;
  /** Who decided the questions for a person answered, by key: handed to the tool with each answer (`decidedBy`). */
  decisions?: Record<string, Decision>;
}

/** A tool's task as a test drives it: see {@link testTool}. */
export interface ToolRun {
  /** The clock sleeps wait on; {@link ToolRun.finish} advances it, a test may too. */
  readonly clock: TestClock;
  /**
   * What the runs recorded, by name, in the order recorded: each step's value,
   * and each durable sleep's wake-up time as `sleep#<n>`.
   */
  readonly checkpoints: ReadonlyMap<string, unknown>;
  /** Every `ctx.progress` message, in order. */
  readonly progress: readonly string[];
  /** Every run's outcome, in order (the last one is the current state). */
  readonly outcomes: readonly RunOutcome[];
  /** The input requests the last run is waiting on (empty unless its outcome is `input`). */
  readonly inputRequests: Readonly<Record<string, InputRequest>>;
  /** The callbacks the last run waits on (`ctx.callback`), by id: the URL handed to the submit function (empty unless its outcome is `callbacks`). */
  readonly callbacks: Readonly<Record<string, string>>;
  /** Completes a callback as the outside system would (`{ result }` or `{ error }`); the first completion stands. Chainable. */
  complete(callbackId: string, posted: PostedCompletion): ToolRun;
  /** Records an answer for an input key, as `tasks/update` does; chainable. */
  answer(key: string, answer: unknown): ToolRun;
  /** Cancels the task: the current run's `ctx.signal` aborts and later runs end `cancelled`. */
  cancel(): void;
  /** Runs the handler once from the start, replaying what is recorded: one worker invocation. */
  once(): Promise<RunOutcome>;
  /**
   * Swaps in another version of the tool's code for the next runs, as a
   * deploy (or a restart of `npm run dev`) does under a task in flight: the
   * task keeps what it recorded and the version recorded when it started, so
   * the runner's replay checks judge the new code (`replay-divergence`,
   * `tool-version-changed`) as deployed. Chainable.
   */
  replaceCode(tool: ToolDefinition): ToolRun;
  /**
   * Runs until the tool ends (`result`, `protocol-error` or `cancelled`):
   * answers input requests from the answers given, moves the clock to each
   * sleep's wake-up time, and runs continuations and retries again (a retry
   * after its delay). Fails when the tool asks for an answer it was not given,
   * or after `maxRuns` runs (default 100).
   */
  finish(options?: { maxRuns?: number }): Promise<RunOutcome>;
  /** {@link ToolRun.finish}, then the tool's result; fails if the task did not end with one. */
  result(options?: { maxRuns?: number }): Promise<ToolResult>;
}

/**
 * Prepares a tool's task for a test. `args` are checked and completed
 * (defaults) by the tool's input schema, as `tools/call` does; invalid
 * arguments throw the schema's error here.
 */
export function testTool(tool: ToolDefinition, args: Record<string, unknown>, options: TestToolOptions = {}): ToolRun {
  return new ScriptedRun(tool, tool.inputSchema.parse(args), options);
}

/**
 * The checkpoints of a {@link ScriptedRun}, kept as JSON as the task table
 * keeps them: a replay gets a fresh copy of what was stored (a `Date` comes
 * back a string). Counts what each run records, for `stepsPerRun`.
 */
class MemoryJournal implements Journal {
  readonly values = new Map<string, unknown>();
  readonly #positions = new Map<string, number | undefined>();
  recordedThisRun = 0;

  async lookup(name: string): Promise<JournalEntry | undefined> {
    return this.values.has(name) ? this.#entry(name) : undefined;
  }

  async record(name: string, value: unknown, position?: number): Promise<unknown> {
    this.recordedThisRun++;
    if (!this.values.has(name)) {
      this.values.set(name, stored(value));
      this.#positions.set(name, position);
    }
    return stored(this.values.get(name));
  }

  async entries(): Promise<Map<string, JournalEntry>> {
    return new Map([...this.values.keys()].map((name) => [name, this.#entry(name)]));
  }

  #entry(name: string): JournalEntry {
    const position = this.#positions.get(name);
    const value = stored(this.values.get(name));
    return position === undefined ? { value } : { value, position };
  }
}

const stored = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** A tool's task driven by a test: see {@link testTool} and {@link ToolRun}. */
class ScriptedRun implements ToolRun {
  readonly clock: TestClock;
  readonly progress: string[] = [];
  readonly outcomes: RunOutcome[] = [];
  readonly #tool: ToolDefinition;
  readonly #args: Record<string, unknown>;
  readonly #options: TestToolOptions;
  readonly #answers: Record<string, unknown>;
  readonly #journal = new MemoryJournal();
  readonly #cancel = new AbortController();
  /** What the task records besides steps: the tool version it started with and where each question was asked. */
  readonly #recordedVersion: string | undefined;
  readonly #questions: Record<string, QuestionRecord> = {};
  /** Callbacks: the URLs handed out (a fake origin: nothing listens there) and what was posted to them. */
  readonly #urls: Record<string, string> = {};
  readonly #settlements: Record<string, CallbackSettlement> = {};
  #bound: ToolDefinition;

  constructor(tool: ToolDefinition, args: Record<string, unknown>, options: TestToolOptions) {
    this.#tool = tool;
    this.#args = args;
    this.#options = options;
    this.clock = new TestClock(options.startAt ?? DEFAULT_START);
    this.#answers = { ...options.answers };
    this.#recordedVersion = tool.version;
    this.#bound = this.#bind(tool);
  }

  get checkpoints(): ReadonlyMap<string, unknown> {
    return this.#journal.values;
  }

  get inputRequests(): Readonly<Record<string, InputRequest>> {
    const outcome = this.outcomes.at(-1);
    return outcome?.kind === 'input' ? outcome.inputRequests : {};
  }

  get callbacks(): Readonly<Record<string, string>> {
    const outcome = this.outcomes.at(-1);
    if (outcome?.kind !== 'callbacks') return {};
    return Object.fromEntries(Object.keys(outcome.wait.callbacks).map((id) => [id, this.#urls[id] ?? '']));
  }

  complete(callbackId: string, posted: PostedCompletion): ToolRun {
    this.#settlements[callbackId] ??= { ...posted, at: this.clock.now() } as CallbackSettlement;
    return this;
  }

  answer(key: string, answer: unknown): ToolRun {
    this.#answers[key] = answer;
    return this;
  }

  cancel(): void {
    this.#cancel.abort(new Error('cancelled by the test'));
  }

  replaceCode(tool: ToolDefinition): ToolRun {
    this.#bound = this.#bind(tool);
    return this;
  }

  async once(): Promise<RunOutcome> {
    this.#journal.recordedThisRun = 0;
    const outcome = this.#cancel.signal.aborted
      ? ({ kind: 'cancelled' } as const)
      : await runTool(this.#bound, this.#args, this.#runContext());
    if (outcome.kind === 'input') Object.assign(this.#questions, outcome.questions);
    this.outcomes.push(outcome);
    return outcome;
  }

  async finish({ maxRuns = 100 } = {}): Promise<RunOutcome> {
    for (let runs = 0; runs < maxRuns; runs++) {
      const outcome = await this.once();
      if (outcome.kind === 'result' || outcome.kind === 'protocol-error' || outcome.kind === 'cancelled') return outcome;
      this.#prepareNextRun(outcome);
    }
    throw new Error(
      `testTool: "${this.#tool.name}" did not finish within ${maxRuns} runs; last outcome: ${JSON.stringify(this.outcomes.at(-1))}`,
    );
  }

  async result(options?: { maxRuns?: number }): Promise<ToolResult> {
    const outcome = await this.finish(options);
    if (outcome.kind !== 'result') throw new Error(`testTool: "${this.#tool.name}" ended without a result: ${JSON.stringify(outcome)}`);
    return outcome.result;
  }

  /** The tool with its settings read from the test's options (a key the test omits fails the read). */
  #bind(code: ToolDefinition): ToolDefinition {
    const settings = this.#options.settings ?? {};
    return withSettings(code, async (name, key) => {
      if (!Object.hasOwn(settings, key)) throw new Error(`testTool: tool "${name}" reads setting "${key}"; give it in options.settings`);
      return settings[key]!;
    });
  }

  /** What one run sees, as the worker reads it from the task: the answers as they stand when it starts. */
  #runContext(): Parameters<typeof runTool>[2] {
    const options = this.#options;
    return {
      taskId: options.taskId ?? 'test-task',
      clientCapabilities: options.clientCapabilities ?? { elicitation: {}, sampling: {}, roots: {} },
      answers: { ...this.#answers },
      questions: { ...this.#questions },
      approvers: options.approvers ?? true,
      ...(options.decisions ? { decisions: options.decisions } : {}),
      fresh: this.outcomes.length === 0,
      ...(this.#recordedVersion === undefined ? {} : { recordedVersion: this.#recordedVersion }),
      cancel: this.#cancel.signal,
      progress: async (message) => void this.progress.push(message),
      journal: this.#journal,
      callbacks: {
        settlements: structuredClone(this.#settlements),
        url: async (callbackId: string) => (this.#urls[callbackId] = `https://callbacks.test/callbacks/${callbackId}`),
      },
      shouldYield: () => options.stepsPerRun !== undefined && this.#journal.recordedThisRun >= options.stepsPerRun,
      now: () => this.clock.now(),
    };
  }

  /**
   * What the worker and the client do between two runs of a task that has not
   * ended: answer its questions from the script (failing on a question the
   * test gave no answer for), move the clock to a sleep's wake-up time or past
   * a retry's delay, and let open callbacks time out when the test asks for it.
   */
  #prepareNextRun(outcome: Exclude<RunOutcome, { kind: 'result' | 'protocol-error' | 'cancelled' }>): void {
    const name = this.#tool.name;
    switch (outcome.kind) {
      case 'input': {
        const missing = Object.keys(outcome.inputRequests).filter((key) => !Object.hasOwn(this.#answers, key));
        if (missing.length > 0)
          throw new Error(`testTool: "${name}" asks for ${missing.map((key) => `"${key}"`).join(', ')}, which the test gave no answer for`);
        return; // answered since: run again
      }
      case 'sleep':
        this.clock.set(Math.max(this.clock.now(), outcome.wakeAt));
        return;
      case 'retry':
        this.clock.advance(outcome.error.options.delayMs ?? 0);
        return;
      case 'continue':
        return;
      case 'callbacks': {
        const open = Object.keys(outcome.wait.callbacks).filter((id) => !Object.hasOwn(this.#settlements, id));
        if (open.length === 0) return;
        if (this.#options.timeOutCallbacks !== true)
          throw new Error(`testTool: "${name}" waits for callback ${open.join(', ')}, which the test did not complete`);
        const due = Math.min(...Object.values(outcome.wait.callbacks).map((entry) => entry.timeoutAt));
        this.clock.set(Math.max(this.clock.now(), due));
      }
    }
  }
}

/** An elicitation answer accepting with this content: `accept({ approve: true })`. */
export function accept(content: Record<string, unknown> = {}): ElicitAnswer {
  return { action: 'accept', content };
}

/** An elicitation answer declining the request. */
export function decline(): ElicitAnswer {
  return { action: 'decline' };
}

/** The text of a result's text content, joined by newlines (what most assertions compare). */
export function textOf(result: ToolResult): string {
  return result.content
    .filter((part): part is { type: 'text'; text: string } => part['type'] === 'text' && typeof part['text'] === 'string')
    .map((part) => part.text)
    .join('\n');
}
