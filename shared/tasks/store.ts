import { ClientError, TasksError } from '../errors.ts';
import { IDEMPOTENCY_KEY } from '../wire.ts';
import type { AnswerOptions, Decider, WaitingPage } from './approvals-model.ts';
import type { CallbackStore } from './callbacks-store.ts';
import type { ClientCapabilities, InputRequest, JsonRpcErrorObject, TaskOutcome, TaskRecord } from './model.ts';

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
  /** The tool's declared version, recorded on the task for replay checks. */
  toolVersion?: string;
}

/** Options of `create`. */
export interface CreateOptions {
  /**
   * A second call by the same owner with the same key returns the first task
   * (`created: false`); with other arguments it throws {@link IdempotencyConflictError}.
   */
  idempotencyKey?: string;
  /**
   * The task id is derived from the call (a repeated call derives the same
   * one): when a task of that id exists, is the owner's and is unfinished,
   * it is returned (`created: false`) instead of a second one; when it has
   * ended (or is another's, or gone), {@link TaskIdTakenError} is thrown and
   * nothing is written. Costs nothing more than the create itself when the
   * id is free, and a read when it is not.
   */
  join?: boolean;
}

/** Result of `answer`: which keys were taken and whether the task can resume. */
export interface AnswerResult {
  accepted: string[];
  /** True when this call answered the last outstanding key (task is `working` again). */
  resumed: boolean;
  /** The accepted keys that were questions for a person, whose decision the row now records. */
  decided?: string[];
}

/** Options of `cancel`. */
export interface CancelOptions {
  /** Written when the task ends `cancelled` here (an operator's reason). */
  statusMessage?: string;
  /**
   * A running task ends `cancelled` now too, rather than being flagged for
   * its worker: the lease is voided, so the worker's later writes to the
   * task (progress, renewal, outcome) are refused and it stops at its next
   * check (for clients whose revision wants the task cancelled before the
   * answer).
   */
  atOnce?: boolean;
}

/** Options of `fail`. */
export interface FailOptions {
  /** The step checkpoints the task has: progress past its `progressMark` is credited, not failed. */
  steps?: number;
}

/** What `cancel` did. */
export type CancelResult =
  /** The task was not running and is now `cancelled`. */
  | 'cancelled'
  /** A worker holds the lease; it will see `cancelRequested` at its next check. */
  | 'requested'
  /** Already terminal: nothing changed. */
  | 'terminal';

/** Result of `cancel`: what it did and, when it ended the task, the record as written (what lifecycle events are derived from). */
export interface CancelOutcome {
  result: CancelResult;
  /** Present when `result` is `cancelled`. */
  task?: TaskRecord;
}

/**
 * Timing the store applies to every task it keeps.
 *
 * Let W = `leaseMs + sweepGraceMs`: the longest a task may go untouched once
 * it is due to run (a worker taking it and holding it for one lease) before
 * the sweeper looks at it.
 */
export interface StorePolicy {
  /**
   * How long past its expected next event (a lease ending, a wake-up, a
   * resume) a non-terminal task may go unnoticed before the sweeper looks at it.
   */
  sweepGraceMs: number;
  /**
   * The lease workers take (`claim`) and renew (`heartbeat`) with: the same
   * value the worker uses. The store needs it to schedule `sweepAt` past the
   * first lease of a task without touching `sweepAt` when the lease is taken.
   */
  leaseMs: number;
  /**
   * How long a task stays readable after it reaches a terminal state. While a
   * task is not terminal it never expires (see `renderedTtlMs`).
   */
  retentionMs: number;
  /** How long step checkpoints are kept after they are written (the longest a job may run). */
  stepRetentionMs: number;
  /**
   * The longest a task may wait for input. With it, a task entering
   * `input_required` is due for the sweeper at `now + maxInputWaitMs` (it
   * enters the sparse index when it starts waiting and leaves or moves when it
   * stops: no other write of the wait touches the index), and the sweeper ends
   * it `failed` then ({@link TaskStore.expireWait}). Without it a waiting task
   * never expires (the behaviour of rows written before the setting existed,
   * which carry no `sweepAt` while waiting and keep waiting until answered).
   */
  maxInputWaitMs?: number;
  /**
   * How many partitions of the sparse index of unfinished tasks the rows
   * are spread over and the sweeper reads (the DynamoDB store's; default 4,
   * see `DEFAULT_ACTIVE_INDEX_SHARDS`). It may grow between deployments, never shrink.
   */
  activeIndexShards?: number;
  /**
   * Most unfinished tasks one owner may have at once: `create` throws
   * {@link TooManyTasksError} beyond it. Absent: no cap, and no cost.
   */
  maxUnfinishedTasks?: number;
  /**
   * Whether `create` lists tasks for their owner ({@link TaskStore.list}),
   * which costs one index write per task, at creation only. Absent: tasks are
   * not listed (a deployment whose console does not list them pays nothing).
   * `sharedOwner`: the principal that owns every task of an open endpoint,
   * whose list the DynamoDB store spreads over `activeIndexShards`
   * partitions, as it spreads the unfinished tasks.
   */
  listing?: { sharedOwner?: string };
  /**
   * Whether questions for a person are listed for the deployment's approvers
   * ({@link TaskStore.listWaitingForPeople}): one list entry per question,
   * written when it is asked and removed when it is decided (the DynamoDB
   * store: two writes and two index writes per question). Absent: not listed.
   */
  approvals?: boolean;
}

/** Which page of an owner's tasks {@link TaskStore.list} reads. */
export interface ListOptions {
  /** At most this many tasks (1 to {@link MAX_LIST_PAGE}). */
  limit: number;
  /** The `next` of the page before: the tasks created before that page's last one. */
  after?: string;
}

/** The most tasks one page lists (`BatchGetItem` reads at most 100 items). */
export const MAX_LIST_PAGE = 100;

/** A page of an owner's tasks, newest first. */
export interface TaskPage {
  tasks: TaskRecord[];
  /** Where the next page starts (pass it as `after`); absent on the last page. */
  next?: string;
}

/** What `heartbeat` writes besides checking the lease. */
export interface HeartbeatOptions {
  /**
   * Renew the lease to `now + leaseMs`, and move `sweepAt` to
   * `now + leaseMs + sweepGraceMs` in the same write. Without it the lease
   * and `sweepAt` are left as they are.
   */
  leaseMs?: number;
  /** Written with `lastUpdatedAt = now`. */
  statusMessage?: string;
  /**
   * The run made progress (recorded steps beyond the task's `progressMark`):
   * `attempts` starts again at 1 (this run) and `progressMark` becomes this.
   */
  progressMark?: number;
}

/** A step checkpoint with its position among the handler's durable calls (absent on checkpoints written before positions were). */
export interface StepRecord {
  value: unknown;
  position?: number;
}

/**
 * The task store port. Every state change is a single conditional write that
 * names the state it comes from; a terminal task never changes again.
 *
 * Reads are strongly consistent. A task that is missing, of another owner, or
 * terminal and past `createdAt + ttlMs` is indistinguishable from the others:
 * `undefined` / {@link TaskNotFoundError}. A task that is not terminal never
 * expires.
 *
 * Non-terminal tasks that are not waiting for input carry a `sweepAt` time:
 * when no worker has touched them by then, {@link TaskStore.findDue} returns
 * them so the sweeper can enqueue them again.
 *
 * `sweepAt` is a key of the store's sweep index, so every change of it costs
 * index writes (on DynamoDB, moving an entry is a delete plus a put). It is
 * therefore set only where the time a task is next expected to be touched
 * changes, with W = `leaseMs + sweepGraceMs` (see {@link StorePolicy}):
 *
 * - `create`: `now + W`, which covers the wait for a worker and its first lease;
 * - `claim`: untouched (a task that finishes within its first lease never
 *   moves in the index: it enters it at `create` and leaves it at `finish`);
 * - `heartbeat` with `leaseMs`: `now + leaseMs + sweepGraceMs`, together with
 *   the renewed lease; a heartbeat without `leaseMs` (a progress message
 *   only) leaves it alone;
 * - `release`: `resumeAt + W` (the continuation, wake-up or retry is due at
 *   `resumeAt`, and then takes a lease);
 * - `answer` resuming the task: `now + W`;
 * - `reschedule`: `nextAt`, as the sweeper asks (`now + W`);
 * - starting to wait for input: `now + maxInputWaitMs` when the policy has
 *   it (the wait's deadline; partial answers leave it), otherwise none;
 * - terminal: no `sweepAt`.
 *
 * A task claimed late can be swept once, harmlessly, before its first
 * renewal: the trade-off, and the timeline of lease, `sweepAt` and the queue's
 * visibility timeout, are in `docs/durability.md`.
 */
export interface TaskStore extends CallbackStore {
  /**
   * Durably creates a `working` task, due for the sweeper at
   * `now + leaseMs + sweepGraceMs`; readable by `get` as soon as this
   * resolves. With an idempotency key, a second call by the same owner with
   * the same key returns the first task (`created: false`) instead of making
   * another; with other arguments it throws {@link IdempotencyConflictError}.
   */
  create(task: NewTask, options?: CreateOptions): Promise<{ task: TaskRecord; created: boolean }>;

  /** One strongly consistent read (plus the chunks of a large result); `undefined` when not found. */
  get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined>;

  /**
   * Takes the run lease (until `now + leaseMs`, the policy's) on a `working`
   * task that no live lease holds. Returns the task as leased (check
   * `cancelRequested` on it), or `undefined` when it is gone, terminal,
   * waiting for input or held by another live lease. Leaves `sweepAt` as it
   * is (see the interface's comment).
   */
  claim(taskId: string, leaseOwner: string, now: number): Promise<TaskRecord | undefined>;

  /**
   * One conditional write under the lease. With `options.leaseMs`, renews the
   * lease to `now + leaseMs` and moves `sweepAt` to `now + leaseMs +
   * sweepGraceMs`; without it, leaves both alone (no index write). With
   * `options.statusMessage`, writes it and `lastUpdatedAt = now`. Returns
   * whether cancellation has been requested either way. Throws
   * {@link LeaseLostError} when the lease is not ours (taken over, released,
   * never held, or the task is terminal); a lease that ran out while nobody
   * took it over is still ours.
   */
  heartbeat(taskId: string, leaseOwner: string, now: number, options: HeartbeatOptions): Promise<{ cancelRequested: boolean }>;

  /**
   * Records the outcome of a handler run and releases the lease: a terminal
   * outcome, or `input_required` with the new outstanding requests. `task` is
   * the record as claimed. A terminal task's TTL becomes
   * `max(ttlMs, age + retentionMs)` (never shorter than anything advertised).
   * Throws {@link LeaseLostError} when the lease is no longer ours.
   */
  finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord>;

  /**
   * Releases the lease; the task stays `working` and is due for the sweeper
   * at `resumeAt + leaseMs + sweepGraceMs` (the caller enqueues its own
   * continuation or retry for `resumeAt`, whose run takes a lease then).
   * With `handedOver` the run ended cleanly (a continuation or a wake-up is
   * queued) and `attempts` starts again from 0. A lease that is no longer
   * ours is left alone.
   */
  release(taskId: string, leaseOwner: string, resumeAt: number, options?: ReleaseOptions): Promise<void>;

  /**
   * Marks a task `failed` that is not terminal and that no live lease holds
   * (used once every delivery attempt is exhausted). Given `steps` (the step
   * checkpoints the task has), a task with more than its `progressMark` made
   * progress since its attempts last started again and stays `working`: its
   * progress is credited (`progressMark` becomes `steps`, `attempts` 0), so
   * the worker's attempt cap decides on it, and the next `fail` without new
   * steps ends it. Returns the record as it ended `failed`, or `undefined`
   * when it did not end here.
   */
  fail(
    taskId: string,
    error: JsonRpcErrorObject,
    statusMessage: string,
    now: number,
    options?: FailOptions,
  ): Promise<TaskRecord | undefined>;

  /**
   * Records answers for currently outstanding keys of an `input_required`
   * task; other keys are ignored. Answering the last one moves the task back
   * to `working`, due for the sweeper at `now + leaseMs + sweepGraceMs`.
   */
  answer(taskId: string, owner: string, responses: Record<string, unknown>, now: number, options?: AnswerOptions): Promise<AnswerResult>;

  /** The task when it waits on a question for a person (what an approver may open), whoever owns it; else `undefined`. */
  getWaitingForPerson(taskId: string, now: number): Promise<TaskRecord | undefined>;

  /** A page of the questions for a person waiting for a decision, of every owner, oldest first (only with `StorePolicy.approvals`). */
  listWaitingForPeople(now: number, options: ListOptions): Promise<WaitingPage>;

  /** Records `decider`'s answers given on a task's page, and who decided each question for a person (`approvals-rules.ts`). */
  decide(taskId: string, decider: Decider, responses: Record<string, unknown>, now: number): Promise<AnswerResult>;

  /** Requests cancellation (see {@link CancelResult} and {@link CancelOptions}); a task it ended comes back as written. */
  cancel(taskId: string, owner: string, now: number, options?: CancelOptions): Promise<CancelOutcome>;

  /**
   * A page of `owner`'s listed tasks, newest first (creation time, then id),
   * each as `get` would show it at `now`: expired tasks are left out (a page
   * may then hold fewer than `limit`). Only tasks created under a policy with
   * `listing` are listed. Throws {@link InvalidPageError} for a malformed
   * `after` or `limit`.
   */
  list(owner: string, now: number, options: ListOptions): Promise<TaskPage>;

  /**
   * The step checkpoints recorded for a task, by name (one query). The
   * operator's `ops inspect` and the console's task page read them this way;
   * workers read `loadJournal`.
   */
  loadSteps(taskId: string): Promise<Map<string, unknown>>;

  /** The step checkpoints with their positions, by name (one query, the same as `loadSteps`). */
  loadJournal(taskId: string): Promise<Map<string, StepRecord>>;

  /**
   * Records a step's value once: the first write wins, and what is stored is
   * returned (a replay that raced another worker gets the other's value).
   * `position` (the step's place among the handler's durable calls) is
   * recorded with it, in the same write.
   */
  saveStep(taskId: string, name: string, value: unknown, now: number, position?: number): Promise<unknown>;

  /**
   * Non-terminal tasks whose `sweepAt` has passed (no table scan): working
   * tasks nobody touched in time, and tasks whose wait for input passed
   * `maxInputWaitMs`.
   */
  findDue(now: number, limit: number): Promise<string[]>;

  /**
   * Ends an `input_required` task whose wait deadline (`sweepAt`) has passed
   * at `now`: `failed` with `error` and `statusMessage`, off the sweep index.
   * Returns the failed record, or `undefined` when the task is not such a task
   * (answered, cancelled, gone, or still within its wait).
   */
  expireWait(taskId: string, error: JsonRpcErrorObject, statusMessage: string, now: number): Promise<TaskRecord | undefined>;

  /**
   * Moves a due `working` task's `sweepAt` to `nextAt`, if it is still due at `now`.
   * Returns false when another sweeper (or a worker) got there first. The
   * sweeper passes `now + leaseMs + sweepGraceMs`: the message it enqueues
   * is claimed about now, and that run takes a lease.
   */
  reschedule(taskId: string, now: number, nextAt: number): Promise<boolean>;
}

/** What `release` records besides dropping the lease. */
export interface ReleaseOptions {
  /** The run ended cleanly (a continuation or a wake-up is queued): `attempts` starts again from 0. */
  handedOver?: boolean;
  /** With `handedOver`: the step checkpoints the task has now, its new `progressMark`. */
  progressMark?: number;
}

/** The task does not exist for this caller (missing, expired or foreign): all three answer alike (spec items 41, 42, 56). */
export class TaskNotFoundError extends ClientError {
  constructor(readonly taskId: string) {
    super('Task not found');
    this.name = 'TaskNotFoundError';
  }
}

/** A worker tried to write under a lease it no longer holds. */
export class LeaseLostError extends TasksError {
  constructor(readonly taskId: string) {
    super('Lease lost');
    this.name = 'LeaseLostError';
  }
}

export type { InputRequest };

/** An idempotency key reused by the same owner for a call with other arguments. */
export class IdempotencyConflictError extends ClientError {
  constructor() {
    super(`${IDEMPOTENCY_KEY} was already used for a call with other arguments`);
    this.name = 'IdempotencyConflictError';
  }
}

/**
 * DynamoDB refused to store a task row (too large, or otherwise invalid).
 * The stores end such a task `failed` through a minimal write rather than
 * retry a write that can never succeed.
 */
export class TaskRowRejectedError extends TasksError {
  constructor(
    readonly taskId: string,
    readonly reason: 'size' | 'validation',
    options?: ErrorOptions,
  ) {
    super(reason === 'size' ? 'Task row over the item size limit' : 'Task row rejected', options);
    this.name = 'TaskRowRejectedError';
  }
}

/** `create` with `join` found the derived id taken by a task it may not join (ended, another's, or expired). */
export class TaskIdTakenError extends TasksError {
  constructor(readonly taskId: string) {
    super('Task id taken by a task that cannot be joined');
    this.name = 'TaskIdTakenError';
  }
}

/** A page cursor or size that {@link TaskStore.list} cannot take (a caller's mistake: cursors are opaque). */
export class InvalidPageError extends ClientError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPageError';
  }
}

/** The owner already has as many unfinished tasks as the configured cap allows. */
export class TooManyTasksError extends ClientError {
  constructor(readonly limit: number) {
    super(`Too many unfinished tasks: the limit is ${limit} per principal: wait for one of your tasks to finish, or cancel one`, {
      data: { reason: 'unfinished-task-limit', limit },
    });
    this.name = 'TooManyTasksError';
  }
}
