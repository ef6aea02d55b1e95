/**
 * What the task store port (`store.ts`) takes and gives: the new task, the
 * options of its writes, its results, its policy, a page of a list.
 */
import type { ClientCapabilities, JsonRpcErrorObject, RepeatRun, TaskBase, TaskRecord } from './model.ts';
import type { ReleaseReason } from './phases.ts';

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
  /** A later run of a repeated call: its end is counted on the window's first run (`TaskRecord.runsEnded`). */
  repeat?: RepeatRun;
  /** The owner is a machine (`TaskRecord.machineOwner`). */
  machineOwner?: true;
  /** Who starts it, as a person reads it (`TaskBase.requester`). */
  requester?: string;
  /** The tool's title (`TaskBase.toolTitle`). */
  toolTitle?: string;
  /** The trace context of the request that creates it (`TaskBase.traceparent`, `TaskBase.tracestate`). */
  trace?: { traceparent: string; tracestate?: string };
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

/** How a task ends `failed` by `fail` or `expireWait`: the error, the status message, when. */
export interface Ending {
  error: JsonRpcErrorObject;
  statusMessage: string;
  now: number;
}

/** What `fail` takes. */
export interface Failure extends Ending {
  /** The step checkpoints the task has: progress past its `progressMark` is credited, not failed. */
  steps?: number;
}

/** A step's checkpoint as `saveStep` records it. */
export interface StepToSave {
  name: string;
  value: unknown;
  now: number;
  /** The step's place among the handler's durable calls. */
  position?: number;
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
  /**
   * The cancel made a suspended task due at once (a callback's `onCancel` to
   * run, a workflow's execution to stop): its resume is to be queued now.
   */
  resumes?: true;
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

/** What `release` records besides dropping the lease. */
export interface ReleaseOptions {
  /** The run ended cleanly (a continuation or a wake-up is queued): `attempts` starts again from 0. */
  handedOver?: boolean;
  /** With `handedOver`: the step checkpoints the task has now, its new `progressMark`. */
  progressMark?: number;
  /** Why the run handed over, recorded as the release's moment (absent: a continuation). */
  why?: ReleaseReason;
  /** When the run handed over: the moment's time (absent: `resumeAt`). */
  at?: number;
  /**
   * The task as the run claimed it: its moments, which the release appends
   * to (and folds past the budget) without a read. Only the lease holder
   * adds moments while a lease is held, so they are still the row's.
   * Absent: the moment is appended as it is.
   */
  claimed?: Pick<TaskBase, 'createdAt' | 'moments'>;
}
