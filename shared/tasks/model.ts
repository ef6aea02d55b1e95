/**
 * The task model: the spec's five statuses, the one table of allowed
 * transitions, and the record the store keeps for every task.
 *
 * Wire names (`working`, `input_required`, …) are used verbatim so nothing
 * needs translating between the row, the domain and the protocol.
 */

import type { CallbackSettlement, CallbackWait } from './callbacks-model.ts';
import type { Moment } from './phases.ts';
import type { WorkflowRecord } from './workflows-model.ts';

/** The statuses of `io.modelcontextprotocol/tasks` (spec §1.1). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

/** A terminal task never changes again (spec §2). */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * Allowed transitions (spec §2). A transition to the same status is not a
 * transition: `working` → `working` is how progress and leases are written,
 * under rules of their own. Every decision in `decisions.ts` that changes a
 * task's status is checked against this table, so both stores refuse what it
 * does not allow.
 */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ['input_required', 'completed', 'failed', 'cancelled'],
  input_required: ['working', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** A server-to-client request carried in `inputRequests` (`{method, params}`, no id). */
export interface InputRequest {
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  params?: Record<string, unknown>;
}

/**
 * The `_meta` key of an input request's params marking a question only a
 * person may answer (`'person'`), as a tool's `elicit(key, { answeredBy })` asked.
 */
export const ANSWERED_BY_META = 'dev.mcp-tasks-serverless/answeredBy';

/**
 * The `_meta` key of an input request's params marking a question whose
 * `message` may go out in lifecycle events (`true`), as the tool's
 * `eventMessage` (or the question's) asked.
 */
export const EVENT_MESSAGE_META = 'dev.mcp-tasks-serverless/eventMessage';

/**
 * The `_meta` key of an input request's params marking a question for a
 * person that its task's owner may not decide (`true`): an approver other
 * than the caller must (four eyes), as the tool's `fourEyes` (or the
 * question's) asked.
 */
export const FOUR_EYES_META = 'dev.mcp-tasks-serverless/fourEyes';

/** Whether a person other than the task's owner must decide this question (see {@link FOUR_EYES_META}). */
export function needsAnotherApprover(request: InputRequest): boolean {
  const meta = request.params?.['_meta'] as Record<string, unknown> | undefined;
  return forPersonOnly(request) && meta?.[FOUR_EYES_META] === true;
}

/**
 * Who decided a question for a person, and when: recorded on the row with
 * the answer (never its content), shown on the page and by `ops inspect`,
 * and handed to the tool with the answer.
 */
export interface Decision {
  /** The principal who decided. */
  by: string;
  /** What the console calls them (a name or email claim), when known. */
  name?: string;
  /** `owner`: the task's own principal; `approver`: someone the deployment's approvers rule admits. */
  as: 'owner' | 'approver';
  /** Where: the task's page, or the task-declaring client of the owner (a form answered through `tasks/update`). */
  via: 'page' | 'client';
  /** Epoch milliseconds. */
  at: number;
  /**
   * `true`: the decision went nowhere: the workflow execution it was for was
   * restarted, and the restarted one did not ask the same again
   * (`NOT_DELIVERED_MESSAGE` in `workflows-model.ts` says so to the decider).
   */
  notDelivered?: true;
}

/** Whether only a person may answer this question (`answeredBy: 'person'`). */
export function forPersonOnly(request: InputRequest): boolean {
  const meta = request.params?.['_meta'] as Record<string, unknown> | undefined;
  return meta?.[ANSWERED_BY_META] === 'person';
}

/** A JSON-RPC error object, as carried by a `failed` task (spec §1.3). */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Client capabilities as declared on the originating `tools/call` (envelope `clientCapabilities`). */
export type ClientCapabilities = Record<string, unknown>;

/** Fields every task record has, whatever its status. */
export interface TaskBase {
  taskId: string;
  /** The principal that created the task; only it may see or touch the task. */
  owner: string;
  /**
   * `true`: the owner is a machine (its token matched the deployment's
   * machine rule, `TASKS_MACHINE_CLAIM`): nobody signs in as it, so its
   * questions for a person are for approvers (as four-eyes ones). Absent:
   * a person, or a row written before the rule.
   */
  machineOwner?: true;
  tool: string;
  arguments: Record<string, unknown>;
  /** Capabilities the client declared on the `tools/call` that created the task. */
  clientCapabilities: ClientCapabilities;
  /** The last status message written; once the task has ended, read it through `statusMessageOf` (`status-message.ts`). */
  statusMessage?: string;
  /**
   * `true`: `statusMessage` was written with the task's end (a tool's final
   * message, a failure's or a cancel's reason). Absent on an ended task: its
   * message is from before the end and no longer holds (rows ended before
   * this field existed read so too).
   */
  finalMessage?: true;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds. */
  lastUpdatedAt: number;
  /**
   * Lifetime from `createdAt`: while the task is unfinished, the floor of
   * what is advertised (`age + retention` grows past it); once terminal, the
   * task's final TTL, `end + retention` (never shorter than anything
   * advertised before, which was at most `age + retention` then).
   */
  ttlMs: number;
  /**
   * While waiting for input until a deadline: when the row itself expires
   * (epoch ms: the deadline plus the retention), a backstop the table's TTL
   * deletes it by should the wait never be ended. Not advertised, and
   * replaced by the final TTL when the task ends. Absent otherwise (a
   * working task's row never expires).
   */
  keptUntil?: number;
  pollIntervalMs: number;
  /** Answers recorded so far, by input-request key; replayed into the handler. */
  inputResponses: Record<string, unknown>;
  /** Every input-request key ever issued: keys are never reused (spec items 23–25). */
  issuedKeys: string[];
  cancelRequested: boolean;
  /**
   * The status message a requested cancel ends the task with (an operator's
   * reason, `ops cancel --reason`), kept until its run ends it; for a
   * workflow, also the cause its execution is stopped with. Absent: the
   * client's request.
   */
  cancelMessage?: string;
  /** The worker currently running the handler, while its lease is live. */
  lease?: { owner: string; until: number };
  /**
   * Runs started (leases taken) since the task last handed over cleanly (a
   * continuation, a wake-up) or received its answers: a run that crashes or
   * fails does not reset it, so it counts a crash loop.
   */
  attempts: number;
  /**
   * When the sweeper should look at the task if nothing has happened by then
   * (epoch ms). While waiting for input, the end of the wait (with
   * `StorePolicy.maxInputWaitMs`; absent without it). Absent once terminal.
   */
  sweepAt?: number;
  /** Optimistic-concurrency counter, incremented by every write. */
  version: number;
  /** The tool's declared `version` when the task was created (absent: the tool declared none, or the row predates versions). */
  toolVersion?: string;
  /**
   * Who started the task, as a person reads it: the `name` (else `email`)
   * claim of the caller's token, at most 128 characters (absent: the token
   * had neither, no token, or the row predates it). Personal data: shown
   * only to the owner and approvers, never in events, logs or metrics.
   */
  requester?: string;
  /** The tool's title when the task was created (absent: the tool has none, or the row predates it): the console's heading. */
  toolTitle?: string;
  /**
   * The W3C trace context (`traceparent`, `tracestate`) of the request that
   * created the task, written with the row when tracing is on and the request
   * sampled: each run's span is its child, so one trace holds the task.
   */
  traceparent?: string;
  tracestate?: string;
  /** Who decided each question for a person, by key (absent: none decided yet, or the row predates decisions). */
  decisions?: Record<string, Decision>;
  /** Every question the handler asked, by key: where it was asked and what it asked, for replay checks. */
  questions?: Record<string, QuestionRecord>;
  /**
   * Step checkpoints the task had when `attempts` last started again from a
   * clean hand-over or from progress (absent: none). A run that finds more
   * steps than this made progress, which resets the attempt count.
   */
  progressMark?: number;
  /** What outside systems posted to the task's callbacks, by callback id (absent: nothing yet). */
  callbacks?: Record<string, CallbackSettlement>;
  /** While a run is suspended on callbacks: the open ones and their deadlines (absent otherwise). */
  callbackWait?: CallbackWait;
  /** A workflow tool's execution, its open questions' tokens and its progress (absent otherwise: `workflows-model.ts`). */
  workflow?: WorkflowRecord;
  /** A run of a repeated call past its window's first (`TaskActions.createOrJoin`); absent on every other task. */
  repeat?: RepeatRun;
  /**
   * On the first run of a repeated call's window: how many of the call's runs
   * there have ended, counted as each later run ends (absent: its own end
   * only). The one attribute written to a row after its end: it is no task
   * state, only where the call's next run goes.
   */
  runsEnded?: number;
  /**
   * The task's named moments, oldest first (`moments.ts`): what its timeline
   * is drawn from. Absent on rows written before they were recorded.
   */
  moments?: Moment[];
}

/** Where a task stands among the runs of one repeated call in one window: the first run's id, and its own number (1, 2, …). */
export interface RepeatRun {
  head: string;
  run: number;
}

/** Where a question was asked among the handler's durable calls, and a fingerprint of what it asked (method and requested schema). */
export interface QuestionRecord {
  position: number;
  fingerprint: string;
  /** When the run that asked it started (epoch ms; absent on rows from before): the start of its wait, for tracing. */
  askedAt?: number;
}

export interface WorkingTask extends TaskBase {
  status: 'working';
}
export interface InputRequiredTask extends TaskBase {
  status: 'input_required';
  /** The outstanding requests: answered keys are removed at once. */
  inputRequests: Record<string, InputRequest>;
}
export interface CompletedTask extends TaskBase {
  status: 'completed';
  /** The `CallToolResult` of the tool (also when it has `isError: true`). */
  result: Record<string, unknown>;
}
export interface FailedTask extends TaskBase {
  status: 'failed';
  error: JsonRpcErrorObject;
}
export interface CancelledTask extends TaskBase {
  status: 'cancelled';
}

/** A task as the store keeps it: a union discriminated on `status`. */
export type TaskRecord = WorkingTask | InputRequiredTask | CompletedTask | FailedTask | CancelledTask;

/** How a handler run ended, as the runner hands it to the store. */
export type TaskOutcome =
  | { status: 'completed'; result: Record<string, unknown>; statusMessage?: string }
  | { status: 'failed'; error: JsonRpcErrorObject; statusMessage?: string }
  | { status: 'cancelled'; statusMessage?: string }
  | {
      status: 'input_required';
      inputRequests: Record<string, InputRequest>;
      questions?: Record<string, QuestionRecord>;
      /** Written with the wait (absent: the message stays as it was). */
      statusMessage?: string;
    };

/** Whether a lease is live at `now` (a worker is running the handler). */
export function isRunning(task: TaskRecord, now: number): boolean {
  return task.lease !== undefined && task.lease.until > now;
}

/**
 * Whether the task must be treated as gone: terminal and past
 * `createdAt + ttlMs`. A task still working or waiting for input never expires.
 */
export function isExpired(task: Pick<TaskRecord, 'status' | 'createdAt' | 'ttlMs'>, now: number): boolean {
  return isTerminal(task.status) && task.createdAt + task.ttlMs <= now;
}

/**
 * The largest result a task may have, serialised (bytes). Above it the task
 * ends `failed`: a `tasks/get` carrying it would not fit a Lambda response
 * (6 MB) once wrapped.
 */
export const MAX_RESULT_BYTES = 5 * 1024 * 1024;
