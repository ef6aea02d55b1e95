import type * as z from 'zod';
import { TasksError } from '../errors.ts';
import type { ClientCapabilities, Decision, JsonRpcErrorObject } from '../tasks/model.ts';
import type { WorkflowDeclaration } from '../workflows/declaration.ts';

export { delay } from '../delay.ts';
export { defineWorkflowTool, type WorkflowDeclaration } from '../workflows/declaration.ts';
export { jsonSchemaInput } from './json-schema.ts';
export type { LocalStateHandler, LocalStates } from './local-states.ts';

/** A `CallToolResult` as a tool returns it. */
export interface ToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** The task's final status message (e.g. "Deployed to 3 regions"); taken off the result, never sent with it. Default: one per status. */
  statusMessage?: string;
  [key: string]: unknown;
}

/**
 * How a tool may be run:
 * - `sync`: always answered inside the `tools/call` request;
 * - `task`: only as a task. A client that did not declare the extension is
 *   served through the fallback (a durable task named by an ordinary result,
 *   followed with `task_status`), or gets `-32021` when the fallback is off
 *   or the tool opts out ({@link ToolDefinition.fallback});
 * - `optional`: as a task when the client declared the extension on the
 *   request; otherwise through the fallback (its result inline when it ends
 *   within the synchronous budget), or inside the request when the fallback
 *   is off or the tool opts out.
 */
export type Execution = 'sync' | 'task' | 'optional';

/** Every {@link Execution}, for checks at run time. */
export const EXECUTIONS = ['sync', 'task', 'optional'] as const satisfies readonly Execution[];

/**
 * The whole API a tool author sees while the handler runs. A handler may be
 * replayed from the start (after an answer, a hand-over or a crash): work
 * with effects goes in `step`s, questions use fixed keys.
 *
 * @example
 * ```ts
 * handler: async ({ files }, ctx) => {
 *   const answer = await ctx.elicit('confirm', {
 *     message: `Delete ${files.length} files?`,
 *     requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
 *   });
 *   if (answer.action !== 'accept' || answer.content?.['ok'] !== true) return 'Nothing deleted';
 *   for (const [index, file] of files.entries()) {
 *     if (ctx.signal.aborted) return 'Stopped early';
 *     await ctx.step(`delete:${file}`, () => removeFile(file)); // your code; once per task, even across replays
 *     await ctx.progress(`${index + 1} of ${files.length} deleted`);
 *   }
 *   await ctx.sleep(60_000); // durable: no invocation runs during the minute
 *   return `Deleted ${files.length} files`;
 * },
 * ```
 */
export interface TaskContext {
  /** The task id, or `undefined` when the call is answered synchronously. */
  readonly taskId: string | undefined;
  /** Fires when the task is cancelled (or the run is suspended); stop promptly. */
  readonly signal: AbortSignal;
  /** Capabilities the client declared on the originating `tools/call`. */
  readonly clientCapabilities: ClientCapabilities;
  /**
   * Reports progress as the task's `statusMessage` (throttled; writes cost
   * money). Answered inside the request, to a client that sent a
   * `progressToken`, it is a `notifications/progress` instead, carrying
   * `amount` when given.
   */
  progress(message: string, amount?: ProgressAmount): Promise<void>;
  /**
   * Asks the client for input with `elicitation/create`. Returns the answer
   * recorded under `key`; otherwise the run is suspended: the task goes
   * `input_required` and the handler is replayed from the start once every
   * outstanding key is answered. Keys identify requests for the task's whole
   * life: use a fixed key per question, never one derived from time or chance.
   */
  elicit(key: string, params: ElicitParams): Promise<ElicitAnswer>;
  /** Like {@link TaskContext.elicit}, with `sampling/createMessage`. */
  sample(key: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /**
   * Like {@link TaskContext.elicit}, with `roots/list`: the client's roots
   * (a `ListRootsResult`, `{ roots: [{ uri, name? }] }`). Needs the client's
   * `roots` capability.
   */
  listRoots(key: string): Promise<RootsAnswer>;
  /**
   * Runs `fn` once for the task's whole life and checkpoints its (JSON) result;
   * on every later replay returns the checkpoint without running `fn`. Names
   * identify steps: one name, one step. At-least-once: if the invocation dies
   * after `fn` ran but before the checkpoint was written, `fn` runs again.
   * Step boundaries are also where a long job hands over to a continuation.
   */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Waits durably: the invocation ends and the task is woken through the
   * queue after `ms` (chained SQS delays beyond 15 minutes). No compute runs
   * meanwhile. Inside a request (no task) it simply waits.
   */
  sleep(ms: number): Promise<void>;
  /**
   * The time (epoch ms) by the run's clock: outside a step, recorded like a
   * step (`now#n`, the n-th read), so a replay reads the same instant; inside
   * a step's `fn`, the clock itself (the step records what it computes).
   * Under the test kit the clock is the kit's, which durable sleeps move;
   * `Date.now()` is real time there. Read time through it.
   */
  now(): Promise<number>;
  /**
   * The value of a setting or secret the tool declares in `needs.settings`,
   * read once per execution environment (SSM Parameter Store or Secrets
   * Manager when deployed; a local file or the environment locally). Not
   * journaled: read it where you use it, and never return a secret from a
   * step (checkpoints are stored in the task table).
   */
  setting(key: string): Promise<string>;
  /**
   * Waits for an outside system: creates callback `name` (its `id` is stable
   * across replays, the outside system may deduplicate on it), runs
   * `options.submit` with its id and URL in a step (at least once, recorded
   * once), and suspends the task, with no compute, until something is posted
   * to the URL. Returns the posted `result`; throws
   * {@link CallbackFailedError} for a posted `error` and
   * {@link CallbackTimedOutError} past `timeoutMs` (or `heartbeatTimeoutMs`
   * without a heartbeat). Callbacks awaited together resume the task once
   * each is settled or past its deadline. Needs a task.
   */
  callback<T = unknown>(name: string, options: CallbackOptions): Promise<T>;
}

/** A callback as its submit function gets it: hand `url` to the outside system. */
export interface CallbackHandle {
  id: string;
  /** `POST` `{"result": …}`, `{"error": {"message": …}}` or `{"heartbeat": true}` here. */
  url: string;
}

export interface CallbackOptions {
  /** Hands the callback to the outside system (a step: at least once, recorded once). */
  submit: (callback: CallbackHandle) => Promise<void>;
  /** The longest wait for the outside system, from the callback's creation. */
  timeoutMs: number;
  /** The longest gap between heartbeats (from the creation, then from the last heartbeat). */
  heartbeatTimeoutMs?: number;
  /** Runs once (as a step) when the task is cancelled while waiting: tell the outside system. */
  onCancel?: (callback: { id: string }) => Promise<void>;
  /** The task's `statusMessage` while it waits (default: names the callback). */
  waitingMessage?: string;
}

/** The outside system posted an `error` to the callback. Uncaught, the task completes with it as a tool error. */
export class CallbackFailedError extends TasksError {
  constructor(
    readonly callback: string,
    readonly error: { message: string; code?: string; data?: unknown },
  ) {
    super(`Callback ${callback} failed: ${error.message}`);
    this.name = 'CallbackFailedError';
  }
}

/** The callback's deadline passed (`timeout`) or its heartbeats stopped (`heartbeat`). Uncaught, the task completes with it as a tool error. */
export class CallbackTimedOutError extends TasksError {
  constructor(
    readonly callback: string,
    readonly reason: 'timeout' | 'heartbeat',
  ) {
    super(reason === 'timeout' ? `Callback ${callback} timed out` : `Callback ${callback} missed its heartbeat`);
    this.name = 'CallbackTimedOutError';
  }
}

export interface ElicitParams {
  mode?: 'form';
  message: string;
  requestedSchema: Record<string, unknown>;
  /**
   * `'person'`: only a person may answer (an approval, a consent), never a
   * model on the person's behalf. The fallback's `task_answer` tool refuses
   * such a question; a task-capable client or `mcp-tasks answer` answers it.
   * Default: the tool's {@link ToolDefinition.answeredBy}.
   */
  answeredBy?: 'person';
  /**
   * `true` (with `answeredBy: 'person'`): the task's caller may not decide
   * this question; an approver of the deployment other than them must, on
   * the task's page (four eyes). On a deployment without approvers
   * (`TASKS_APPROVERS`) the question is refused at once: the task fails.
   * Default: the tool's {@link ToolDefinition.fourEyes}.
   */
  fourEyes?: boolean;
  /**
   * `true`: `message` may go out in the lifecycle event that tells approvers
   * of a question for a person (EventBridge, `Task Waiting For Person`).
   * Leave it unset when the message quotes arguments or anything else that
   * must stay inside the deployment: the tool's title stands in for it.
   * Default: the tool's {@link ToolDefinition.eventMessage}.
   */
  eventMessage?: boolean;
}

export interface ElicitAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
  /** For a question for a person: who decided it, as, through what and when (absent for other questions). */
  decidedBy?: Decision;
}

/** How far a tool is, as `notifications/progress` carries it (`progress` increases; `total` if known). */
export interface ProgressAmount {
  progress: number;
  total?: number;
}

/** A client's answer to `roots/list`. */
export interface RootsAnswer {
  roots: Array<{ uri: string; name?: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

/**
 * Where a deployed function reads a setting from.
 * - `{ ssmParameter: '/reports/endpoint' }`: an SSM Parameter Store `String`;
 *   with `secret: true` a `SecureString`, decrypted on read.
 * - `{ secretsManager: 'reports/api-key' }`: a Secrets Manager secret's `SecretString`.
 * Locally the value comes from `settings.local.json` or the environment
 * instead (see `bin/local/settings.ts`). Both stores' AWS managed keys need
 * no grant; a secret under a customer managed key needs `kms:Decrypt` on it,
 * declared in `needs.permissions`.
 */
export type SettingSource = { ssmParameter: string; secret?: boolean } | { secretsManager: string };

/**
 * An AWS permission a tool's own code needs, granted to the functions that
 * may run the tool (the worker, and the MCP function when the tool may run
 * inside the request). A resource with a `*` must say `why`: cdk-nag flags
 * wildcard resources, and `why` is the reason the stack acknowledges it with.
 */
export interface ToolPermission {
  actions: string[];
  resources: string[];
  why?: string;
}

/** What a tool needs from its environment besides its arguments. */
export interface ToolNeeds {
  /** Settings and secrets by key, for `ctx.setting(key)`. */
  settings?: Record<string, SettingSource>;
  permissions?: ToolPermission[];
}

/** A tool of the catalogue. */
export interface ToolDefinition<Args = Record<string, unknown>> {
  name: string;
  title?: string;
  description: string;
  inputSchema: z.ZodType<Args>;
  execution: Execution;
  /**
   * For `optional` tools: whether a call that could become a task is cheap
   * enough to answer inline anyway (e.g. zero work requested).
   */
  inline?: (args: Args) => boolean;
  handler: (args: Args, ctx: TaskContext) => Promise<ToolResult | string>;
  /**
   * For `task` and `optional` tools: input to gather before the task exists,
   * through multi-round-trip requests on the `tools/call` itself. The answers
   * are recorded on the task, so the same `ctx.elicit(key, …)` calls in
   * `handler` return them without asking again.
   */
  prepare?: (args: Args, ctx: TaskContext) => Promise<void>;
  /** Shortest `pollIntervalMs` to suggest for this tool's tasks (default: the server's). */
  pollIntervalMs?: number;
  /**
   * OAuth scopes a caller needs to call this tool, on top of the endpoint's
   * (only when the endpoint requires tokens). A token without them gets
   * `403 insufficient_scope` naming them, so the client can step up.
   */
  scopes?: string[];
  /**
   * The version of this tool's durable behaviour: change it whenever a change
   * of the handler would replay differently (steps, sleeps or questions added,
   * removed, renamed or reordered). It is recorded on every task the tool
   * starts; a task whose recorded version differs from the code's when it
   * replays recorded work ends `failed` with a version error instead of
   * replaying the old journal with new code (see docs/tools.md, "Replay rules").
   * Leave it unset until a change needs it: unversioned tasks are replayed
   * with the divergence checks only.
   */
  version?: string;
  /** Settings, secrets and AWS permissions the tool needs; the stack grants exactly these. */
  needs?: ToolNeeds;
  /**
   * `'person'`: every question this tool asks is for a person only (see
   * {@link ElicitParams.answeredBy}); a model answering through the fallback's
   * `task_answer` is refused.
   */
  answeredBy?: 'person';
  /** `true`: every question of this tool for a person needs an approver other than the caller (see {@link ElicitParams.fourEyes}). */
  fourEyes?: boolean;
  /**
   * `true`: the messages of this tool's questions for a person may go out in
   * lifecycle events (see {@link ElicitParams.eventMessage}). Default: they
   * do not, and the tool's `title` (or name) stands in for them, since a
   * message may quote the arguments.
   */
  eventMessage?: boolean;
  /**
   * `false`: this tool opts out of the fallback for clients that do not
   * declare the tasks extension, and keeps the strict behaviour (a `task`
   * tool answers `-32021`, an `optional` one runs inside the request).
   * Default: served by the fallback when the deployment has it on.
   */
  fallback?: boolean;
  /**
   * `false`: identical calls (same caller, same arguments) from a client
   * without tasks each run anew, for tools whose repeated calls are meant to
   * run again (a "roll the dice", a "send another reminder"). Default: a
   * repeat within minutes of an unfinished identical call joins its task and
   * answers as `task_status` would, so a model that calls again (or a client
   * that gave up and retries) never starts the work twice.
   */
  joinRepeats?: boolean;
  /** A workflow tool's workflow (`defineWorkflowTool`): its handler runs the state machine bound to it. */
  workflow?: WorkflowDeclaration;
}

/**
 * Declares a tool with its argument type inferred from the schema.
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 *
 * export const countWords = defineTool({
 *   name: 'count_words',
 *   description: 'Counts the words of a document, as a task.',
 *   inputSchema: z.object({ url: z.string().url() }),
 *   execution: 'task',
 *   handler: async ({ url }, ctx) => {
 *     const text = await ctx.step('fetch', async () => (await fetch(url)).text());
 *     const words = text.split(/\s+/).filter(Boolean).length;
 *     return { content: [{ type: 'text', text: `${words} words` }], structuredContent: { words } };
 *   },
 * });
 * ```
 */
export function defineTool<S extends z.ZodType<Record<string, unknown>>>(
  tool: Omit<ToolDefinition<z.output<S>>, 'inputSchema'> & { inputSchema: S },
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** A tool error: the call ran and failed at the tool level (`isError: true`, task `completed`). */
export class ToolError extends TasksError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ToolError';
  }
}

/**
 * A transient failure: the run is retried later with exponential backoff,
 * up to the worker's attempt limit, after which the task ends `failed`.
 */
export class RetryableError extends TasksError {
  constructor(
    message: string,
    readonly options: { delayMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RetryableError';
  }
}

/**
 * A JSON-RPC error from the underlying request: the task ends `failed` with
 * this error (spec item 51). Not retried.
 */
export class ToolProtocolError extends TasksError {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ToolProtocolError';
  }

  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
