import type { ClientCapabilities, InputRequest, JsonRpcErrorObject, TaskOutcome, TaskRecord, WorkingTask } from './model.ts';

/** What `create` needs; the store fills in the bookkeeping fields. */
export interface NewTask {
  taskId: string;
  owner: string;
  tool: string;
  arguments: Record<string, unknown>;
  clientCapabilities: ClientCapabilities;
  /** Answers gathered before the task was created (keyed like `inputResponses`). */
  inputResponses: Record<string, unknown>;
  now: number;
  ttlMs: number;
  pollIntervalMs: number;
}

/** Result of `answer`: which keys were taken and whether the task can resume. */
export interface AnswerResult {
  accepted: string[];
  /** True when this call answered the last outstanding key (task is `working` again). */
  resumed: boolean;
}

/** Result of `cancel`. */
export type CancelResult =
  /** The task was not running and is now `cancelled`. */
  | 'cancelled'
  /** A worker holds the lease; it will see `cancelRequested` at its next check. */
  | 'requested'
  /** Already terminal: nothing changed. */
  | 'terminal';

/**
 * The task store port. Every state change is a single conditional write that
 * names the state it comes from; a terminal task never changes again.
 *
 * Reads are strongly consistent. Tasks past `createdAt + ttlMs`, missing tasks
 * and tasks of another owner are indistinguishable: all are `undefined` /
 * {@link TaskNotFoundError}.
 */
export interface TaskStore {
  /** Durably creates a `working` task; readable by `get` as soon as this resolves. */
  create(task: NewTask): Promise<WorkingTask>;

  /** One strongly consistent read; `undefined` when missing, expired or not the owner's. */
  get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined>;

  /**
   * Takes the run lease on a `working` task that no live lease holds. Returns
   * the task as leased (check `cancelRequested` on it), or `undefined` when it
   * is gone, expired, terminal, waiting for input or held by another live lease.
   */
  claim(taskId: string, leaseOwner: string, now: number, leaseMs: number): Promise<TaskRecord | undefined>;

  /**
   * Writes `statusMessage` while the lease is held. Returns whether
   * cancellation has been requested (so progress doubles as a cancel check).
   * Throws {@link LeaseLostError} when the lease is no longer ours.
   */
  progress(task: TaskRecord, leaseOwner: string, statusMessage: string, now: number): Promise<{ cancelRequested: boolean }>;

  /**
   * Records the outcome of a handler run and releases the lease: a terminal
   * outcome, or `input_required` with the new outstanding requests. `task` is
   * the record as claimed; the TTL grows so the outcome stays readable for the
   * store's retention window (it is never shortened).
   * Throws {@link LeaseLostError} when the lease is no longer ours.
   */
  finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord>;

  /** Releases the lease without changing the status (the run will be retried). */
  release(taskId: string, leaseOwner: string): Promise<void>;

  /**
   * Marks a non-terminal task `failed` without a lease (used once every
   * delivery attempt is exhausted). Returns false if it was already terminal.
   */
  fail(taskId: string, error: JsonRpcErrorObject, statusMessage: string, now: number): Promise<boolean>;

  /**
   * Records answers for currently outstanding keys of an `input_required`
   * task; other keys are ignored. Answering the last one moves the task back
   * to `working`.
   */
  answer(taskId: string, owner: string, responses: Record<string, unknown>, now: number): Promise<AnswerResult>;

  /** Requests cancellation (see {@link CancelResult}). */
  cancel(taskId: string, owner: string, now: number): Promise<CancelResult>;
}

/** The task does not exist for this caller (missing, expired or foreign). */
export class TaskNotFoundError extends Error {
  constructor(readonly taskId: string) {
    super('Task not found');
    this.name = 'TaskNotFoundError';
  }
}

/** A worker tried to write under a lease it no longer holds. */
export class LeaseLostError extends Error {
  constructor(readonly taskId: string) {
    super('Lease lost');
    this.name = 'LeaseLostError';
  }
}

export type { InputRequest };
