/**
 * What one task asks of AWS, create → result, for a workload: the calls and
 * units the store, the queue and the worker make per task (the AWS-calls
 * bench measures the same on the local stack, and
 * `test/integration/capacity-model.test.ts` compares the two). The capacity
 * model (`capacity.ts`) multiplies them by the tasks a second.
 */
import { DEFAULT_SETTINGS } from '../shared/config.ts';
import { callbackCounts } from './capacity-callbacks.ts';
import { ASSUMED } from './prices.ts';
import { durableTimings } from './timings.ts';

/** Billed time per request not measured here (`prices.ts`). */
const MCP_SECONDS = ASSUMED.mcpMs / 1000;
const WORKER_OVERHEAD_SECONDS = ASSUMED.workerMs / 1000;

/** What the clients do. */
export interface Workload {
  /** Tasks created a second. */
  tasksPerSecond: number;
  /** The tool's own running time per task, in seconds (all runs together). */
  taskSeconds: number;
  /** `tasks/get` calls per task. */
  pollsPerTask: number;
  /** Questions answered per task (`tasks/update`), each a suspension and a second run. */
  inputRounds: number;
  /** Of those, questions only a person may answer: each publishes a `Task Waiting For Person` event (default 0). */
  personQuestions?: number;
  /** Step checkpoints per task (0: a tool without steps). */
  steps: number;
  /** Waits on an outside system's callback per task (`ctx.callback`; default 0): see `capacity-callbacks.ts`. */
  callbacks?: number;
  /**
   * Share (0–1) of `tools/call` requests that wait inside the request for the
   * result (the synchronous budget, or a client without tasks), holding an
   * MCP invocation for the task's time, at most `TASKS_SYNC_BUDGET_MS`.
   */
  waitingShare: number;
  /**
   * Principals creating the tasks, evenly (default 1: an open endpoint has
   * one). Matters only with a cap on unfinished tasks, whose set is one item
   * per principal.
   */
  owners?: number;
}

/**
 * One task's AWS calls, create → result, as the store and the worker make
 * them (the AWS-calls bench measures the same on the local stack):
 *
 * - DynamoDB writes: create 1; each run claims and ends (finishes, suspends
 *   or hands over) = 2; each answer 1 (after 1 read); each step checkpoint 1;
 *   progress writes (steps report progress, throttled to one per
 *   `TASKS_PROGRESS_INTERVAL_MS`); a lease renewal every third of the lease.
 * - DynamoDB reads: each `tasks/get` 1 (strongly consistent, rows under
 *   4 KB); each answer 1; a step-structured run queries its checkpoints
 *   once; a cancellation check every `TASKS_CANCEL_CHECK_MS` of running
 *   time (except the ticks that renew the lease instead).
 * - Index writes (the sparse index, keys only): entering 1, leaving 1,
 *   moving `sweepAt` 2: twice per input round (the wait's deadline, the
 *   answer), once per renewal and per hand-over.
 * - SQS: send, receive and delete per run (a batch shares a receive and a
 *   delete; the model counts batches of one, as a quiet queue delivers).
 * - A run hands over to a continuation every invocation budget
 *   (`TASKS_INVOCATION_BUDGET_MS`).
 * - Lifecycle events: one at the end, one per question for a person; each
 *   is one `PutEvents` request and one billed event (under 64 KB).
 */
export interface PerTask {
  apiRequests: number;
  ddbWrites: number;
  ddbReads: number;
  /** Table write units (one per write of a row under 1 KB; a row carrying a question and the task's moments is over it: two). */
  tableWcu: number;
  indexWcu: number;
  /** Read units (one per strongly consistent read under 4 KB; a checkpoint query is counted as one). */
  rcu: number;
  sqsRequests: number;
  workerRuns: number;
  /** Worker seconds per task: the tool's time plus the per-run overhead. */
  workerSeconds: number;
  /** MCP seconds per task: every request's billed time, and the waiting calls' wait. */
  mcpSeconds: number;
  /** Lifecycle events published (`PutEvents` requests); 0 with events off. */
  events: number;
}

/** Bytes of an owner's slot set: its key and attributes, and a task id (a UUID) per unfinished task. */
export function slotItemBytes(unfinished: number): number {
  return 100 + 37 * unfinished;
}

/**
 * The per-task counts of {@link PerTask} for a workload; with a cap on
 * unfinished tasks (`maxUnfinishedTasks`), each task also writes its owner's
 * slot set twice (take, free), in units of the set's size; where the console
 * lists tasks (`listed`, default on: the local stack's), its create writes the
 * list index once.
 */
export function perTask(workload: Workload, options: { maxUnfinishedTasks?: number; listed?: boolean; approvals?: boolean } = {}): PerTask {
  const { maxUnfinishedTasks, listed = true } = options;
  const timings = durableTimings();
  const runMs = workload.taskSeconds * 1000;
  const budgetMs = timings.invocationBudget.toMilliseconds();
  const handOvers = Math.max(0, Math.ceil(runMs / budgetMs) - 1);
  const called = callbackCounts(workload.callbacks ?? 0);
  const runs = 1 + workload.inputRounds + handOvers + called.runs;
  const leaseMs = timings.lease.toMilliseconds();
  const renewals = Math.floor(runMs / (leaseMs / 3));
  const cancelReads = Math.max(0, Math.floor(runMs / DEFAULT_SETTINGS.cancelCheckMs) - renewals);
  const progressWrites = workload.steps > 0 ? Math.min(workload.steps, 1 + Math.floor(runMs / DEFAULT_SETTINGS.progressIntervalMs)) : 0;
  const slotWrites = maxUnfinishedTasks === undefined ? 0 : 2;
  const slotWcu = slotWrites * Math.ceil(slotItemBytes(unfinishedPerOwner(workload, maxUnfinishedTasks)) / 1024);
  // The approvers' list: per question for a person, its entry put and taken out (one unit each, and one index write each).
  const approvalWrites = options.approvals ? 2 * (workload.personQuestions ?? 0) : 0;
  const ddbWrites =
    1 + 2 * runs + workload.inputRounds + workload.steps + progressWrites + renewals + slotWrites + called.ddbWrites + approvalWrites;
  const checkpointQueries = workload.steps > 0 || called.runs > 0 ? runs : 0;
  const ddbReads = workload.pollsPerTask + workload.inputRounds + checkpointQueries + cancelReads + called.ddbReads;
  const apiRequests = 1 + workload.pollsPerTask + workload.inputRounds + called.apiRequests;
  const waitSeconds = Math.min(workload.taskSeconds + WORKER_OVERHEAD_SECONDS, DEFAULT_SETTINGS.syncBudgetMs / 1000);
  return {
    apiRequests,
    ddbWrites,
    ddbReads,
    // The two writes that carry a question on the row (the ask, the answer) pass 1 KB with its moments: two units each.
    tableWcu: ddbWrites - slotWrites + slotWcu + 2 * workload.inputRounds,
    indexWcu: 1 + 1 + 4 * workload.inputRounds + 2 * renewals + 2 * handOvers + (listed ? 1 : 0) + called.indexWcu + approvalWrites,
    rcu: ddbReads,
    sqsRequests: 3 * runs,
    workerRuns: runs,
    workerSeconds: workload.taskSeconds + runs * WORKER_OVERHEAD_SECONDS,
    mcpSeconds: apiRequests * MCP_SECONDS + workload.waitingShare * waitSeconds,
    events: 1 + (workload.personQuestions ?? 0),
  };
}

/** Unfinished tasks per owner at a time (Little's law over the task's run and a second of queueing), at most the cap. */
export function unfinishedPerOwner(workload: Workload, cap = Number.POSITIVE_INFINITY): number {
  const unfinished = (workload.tasksPerSecond * (workload.taskSeconds + 1)) / (workload.owners ?? 1);
  return Math.min(cap, Math.ceil(unfinished));
}
