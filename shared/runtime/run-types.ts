/** What one run of a handler (`runTool`, `run.ts`) takes and how it ends. */
import { TasksError } from '../errors.ts';
import type { CallbackWait } from '../tasks/callbacks-model.ts';
import type { ClientCapabilities, Decision, InputRequest, JsonRpcErrorObject, QuestionRecord } from '../tasks/model.ts';
import type { CallbackState } from './callbacks.ts';
import type { ReplayError } from './replay-checks.ts';
import type { ProgressAmount, RetryableError, ToolResult } from './tool.ts';

/** How one run of a handler ended. Unexpected exceptions are rethrown, not mapped. */
export type RunOutcome =
  /** `statusMessage`: the final message the tool returned with its result (`ToolResult.statusMessage`), taken off the result. */
  | { kind: 'result'; result: ToolResult; statusMessage?: string }
  /** `replay` is the failed replay check when there was one; `error` is then its wire form. */
  | { kind: 'protocol-error'; error: JsonRpcErrorObject; replay?: ReplayError }
  /** `statusMessage`: why, when not the client's request (a {@link StoppedError}). */
  | { kind: 'cancelled'; statusMessage?: string }
  /**
   * Waiting for answers: the task goes `input_required`. With a journal,
   * `questions` records where each new question was asked and what it asked.
   */
  | { kind: 'input'; inputRequests: Record<string, InputRequest>; questions?: Record<string, QuestionRecord> }
  /** Waiting for a durable timer: run again at `wakeAt` (epoch ms). */
  | { kind: 'sleep'; wakeAt: number }
  /** Waiting for outside systems (`ctx.callback`): the worker records the wait, and no message is queued. */
  | { kind: 'callbacks'; wait: CallbackWait; statusMessage: string }
  /** Out of invocation time at a step boundary: run again at once, in a new invocation. */
  | { kind: 'continue' }
  /** The handler asked to be retried later. */
  | { kind: 'retry'; error: RetryableError };

/** A step as the journal holds it: its value and, when recorded since positions exist, its position. */
export interface JournalEntry {
  value: unknown;
  /** 1-based index of the step among the run's durable calls (steps, sleeps, questions), in call order. */
  position?: number;
}

/** Durable state a run replays from, and how it records new state. */
export interface Journal {
  /** The value recorded for a step, if any. */
  lookup(name: string): Promise<JournalEntry | undefined>;
  /** Records a step's value once; resolves to the value stored (which wins on a race). */
  record(name: string, value: unknown, position?: number): Promise<unknown>;
  /** Every recorded step, for the order checks and to tell replay from new work (optional: without it order is not checked). */
  entries?(): Promise<ReadonlyMap<string, JournalEntry>>;
}

export interface RunOptions {
  taskId: string | undefined;
  clientCapabilities: ClientCapabilities;
  /** Answers recorded so far, by key. */
  answers: Record<string, unknown>;
  /** Questions recorded so far (position and fingerprint), by key: replays are checked against them. */
  questions?: Record<string, QuestionRecord>;
  /** Aborted when the task is cancelled. */
  cancel: AbortSignal;
  progress: (message: string, amount?: ProgressAmount) => Promise<void>;
  /** Steps and sleeps; without one (inline calls) steps simply run and sleeps wait in-process. */
  journal?: Journal;
  /**
   * True when nothing can have been recorded before this run (the task's
   * first run): progress is then written without consulting the journal.
   */
  fresh?: boolean;
  /** The tool version recorded on the task, if any; checked against the tool's own before recorded work is replayed. */
  recordedVersion?: string;
  /** The task's callbacks (`ctx.callback`); without them (inline calls) a callback is a tool error. */
  callbacks?: CallbackState;
  /** True once the invocation should hand over to a continuation at the next step boundary. */
  shouldYield?: () => boolean;
  /** Who decided the questions for a person answered so far, by key: handed to the handler with each answer. */
  decisions?: Record<string, Decision>;
  /** Whether the deployment names approvers; without them a question needing another approver is refused at once. */
  approvers?: boolean;
  /** The task's owner is a machine (`TaskRecord.machineOwner`): its questions for a person need an approver, as four-eyes ones. */
  machineOwner?: boolean;
  now?: () => number;
}

/**
 * The task ends `cancelled`, with this error's message as its status: what
 * the handler waited on was stopped from outside (a workflow's execution
 * stopped by someone else). Thrown by engine-supplied handlers; not part of
 * the tool author's API.
 */
export class StoppedError extends TasksError {
  constructor(statusMessage: string) {
    super(statusMessage);
    this.name = 'StoppedError';
  }
}
