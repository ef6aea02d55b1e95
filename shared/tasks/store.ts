import type { AnswerOptions } from './approvals-model.ts';
import type { ApprovalStore } from './approvals-store.ts';
import type { CallbackStore } from './callbacks-store.ts';
import type { TaskOutcome, TaskRecord } from './model.ts';
import type { SignInNameStore } from './sign-in-names-store.ts';
import type { SignOutStore } from './sign-outs-store.ts';
import type {
  AnswerResult,
  CancelOptions,
  CancelOutcome,
  CreateOptions,
  Ending,
  Failure,
  HeartbeatOptions,
  ListOptions,
  NewTask,
  ReleaseOptions,
  StepRecord,
  StepToSave,
  TaskPage,
} from './store-types.ts';
import type { WorkflowStore } from './workflows-store.ts';

/**
 * The task store port. Every state change is a single conditional write that
 * names the state it comes from; a terminal task never changes again (its
 * state: the first run of a repeated call counts the call's later runs as
 * they end, `runsEnded`, written after the end that it counts).
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
export interface TaskStore extends CallbackStore, ApprovalStore, SignOutStore, SignInNameStore, WorkflowStore {
  /**
   * Durably creates a `working` task, due for the sweeper at
   * `now + leaseMs + sweepGraceMs`; readable by `get` as soon as this
   * resolves. With an idempotency key, a second call by the same owner with
   * the same key returns the first task (`created: false`) instead of making
   * another.
   * @throws {@link IdempotencyConflictError} when the key was used for a call with other arguments
   * @throws {@link TaskIdTakenError} with `join`, when the id is taken by a task it may not join
   * @throws {@link TooManyTasksError} when the owner has as many unfinished tasks as the cap allows
   * @throws {@link TaskRowRejectedError} when DynamoDB refuses the row (too large)
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
   * whether cancellation has been requested either way. A lease that ran
   * out while nobody took it over is still ours.
   * @throws {@link LeaseLostError} when the lease is not ours (taken over, released, never held, or the task is terminal)
   */
  heartbeat(taskId: string, leaseOwner: string, now: number, options: HeartbeatOptions): Promise<{ cancelRequested: boolean }>;

  /**
   * Records the outcome of a handler run and releases the lease: a terminal
   * outcome, or `input_required` with the new outstanding requests. `task` is
   * the record as claimed. A terminal task's TTL becomes
   * `max(ttlMs, age + retentionMs)` (never shorter than anything advertised).
   * @throws {@link LeaseLostError} when the lease is no longer ours
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
  fail(taskId: string, failure: Failure): Promise<TaskRecord | undefined>;

  /**
   * Records answers for currently outstanding keys of an `input_required`
   * task; other keys are ignored. Answering the last one moves the task back
   * to `working`, due for the sweeper at `now + leaseMs + sweepGraceMs`.
   * @throws {@link TaskNotFoundError} when the task is not the owner's (or is gone)
   */
  answer(taskId: string, owner: string, responses: Record<string, unknown>, now: number, options?: AnswerOptions): Promise<AnswerResult>;

  /**
   * Requests cancellation (see {@link CancelResult} and {@link CancelOptions}); a task it ended comes back as written.
   * @throws {@link TaskNotFoundError} when the task is not the owner's (or is gone)
   */
  cancel(taskId: string, owner: string, now: number, options?: CancelOptions): Promise<CancelOutcome>;

  /**
   * A page of `owner`'s listed tasks, newest first (creation time, then id),
   * each as `get` would show it at `now`: expired tasks are left out (a page
   * may then hold fewer than `limit`). Only tasks created under a policy with
   * `listing` are listed.
   * @throws {@link InvalidPageError} for a malformed `after` or `limit`
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
  saveStep(taskId: string, step: StepToSave): Promise<unknown>;

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
  expireWait(taskId: string, ending: Ending): Promise<TaskRecord | undefined>;

  /**
   * Moves a due `working` task's `sweepAt` to `nextAt`, if it is still due at `now`.
   * Returns false when another sweeper (or a worker) got there first. The
   * sweeper passes `now + leaseMs + sweepGraceMs`: the message it enqueues
   * is claimed about now, and that run takes a lease.
   */
  reschedule(taskId: string, now: number, nextAt: number): Promise<boolean>;
}

/** The store's operations a worker calls: its leases, its failures, the step journal, callbacks, and the cancel checks' read. */
export type WorkerStore = Pick<
  TaskStore,
  'claim' | 'heartbeat' | 'finish' | 'release' | 'fail' | 'get' | 'loadJournal' | 'saveStep' | 'awaitCallbacks'
>;
