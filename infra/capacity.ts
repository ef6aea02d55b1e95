/**
 * The capacity model of the deployed stack: for a workload (tasks a second,
 * how long each runs, how often its client polls, its input rounds and
 * steps, the share of calls that wait inside the request), what each
 * component receives a second, the concurrency each function needs, which
 * limit is reached first and which setting moves it, and what a month costs
 * at list prices.
 *
 * Every figure comes from the constants the stack and the functions use:
 * the context defaults (`context.ts`), the timings (`timings.ts`), the event
 * source settings (`event-sources.ts`), the functions' settings
 * (`shared/config.ts`), the index layout (`dynamodb/schema.ts`) and the
 * sweeper's paging (`shared/runtime/sweeper.ts`). What a task costs in AWS
 * calls is counted per write and read the store makes (`per-task.ts`);
 * `test/integration/capacity-model.test.ts` compares those counts with the
 * ones the AWS-calls bench measures on the local stack. What cannot be
 * measured here (Lambda billed time per request) comes from `prices.ts`;
 * `npm run bench:load` prints the CPU time the handlers take locally.
 *
 * Read by a terminal command (`npm run capacity`), never bundled into a
 * function.
 */
import { DEFAULT_SETTINGS, unfinishedTaskCap } from '../shared/config.ts';
import { SWEEP_DEADLINE_MARGIN_MS, SWEEP_MAX_PARALLELISM, SWEEP_PAGE } from '../shared/runtime/sweeper.ts';
import { DEFAULT_ACTIVE_INDEX_SHARDS, MAX_ACTIVE_INDEX_SHARDS } from '../shared/tasks/dynamodb/index.ts';
import { AWS_LIMITS } from './aws-limits.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY, WORKER_BATCH_SIZE } from './event-sources.ts';
import { type PerTask, perTask, slotItemBytes, unfinishedPerOwner, type Workload } from './per-task.ts';
import { ASSUMED, PRICE } from './prices.ts';
import { REFERENCE_WORKLOAD, throttleFor } from './sizing.ts';
import { DEFAULT_SWEEP_INTERVAL, SWEEPER_TIMEOUT } from './timings.ts';

/** The settings a deployment moves its limits with (context keys, and the account quotas a request raises). */
export interface Deployment {
  throttleRateLimit: number;
  throttleBurstLimit: number;
  workerMaxConcurrency: number;
  activeIndexShards: number;
  sweepIntervalMinutes: number;
  /** The account's concurrent Lambda executions in the region (a Service Quotas request raises it). */
  accountConcurrency: number;
  /** The account's HTTP API requests a second in the region (a Service Quotas request raises it). */
  apiQuota: number;
  /**
   * `-c maxUnfinishedTasks=N` (`0`: no cap): each capped task takes and frees a slot in its owner's set
   * (one item per owner). Unset: the default of {@link Deployment.issuer}'s rule (`unfinishedTaskCap`).
   */
  maxUnfinishedTasks?: number;
  /**
   * The endpoint has an issuer (`-c authIssuer`, `cognito`, `jwtIssuer`): people and clients sign
   * in, and the cap on unfinished tasks is on by default (100 per principal).
   */
  issuer?: boolean;
  /** Lifecycle events published (`-c events`, on by default). */
  events: boolean;
  /**
   * The console lists each person's tasks (an issuer, or `-c console=open`):
   * each task's list-index entry, one index write at creation. Off on an open
   * endpoint whose console shows tasks by id only (the default).
   */
  listed: boolean;
  /**
   * Approvers are named (`-c approvers=…`): each question for a person has an
   * entry in the approvers' list, put when it is asked and taken out when it is
   * decided: two writes and two index writes per question.
   */
  approvals?: boolean;
}

/** One due task: a conditional write and an SQS send, assumed 25 ms together on AWS. */
const SWEEP_TASK_MS = 25;
const SECONDS_A_MONTH = 30 * 24 * 3600;

/** The defaults of a deployment: `cdk deploy` without context. */
export function defaultDeployment(): Deployment {
  const throttle = throttleFor(DEFAULT_WORKER_MAX_CONCURRENCY);
  return {
    throttleRateLimit: throttle.rateLimit,
    throttleBurstLimit: throttle.burstLimit,
    workerMaxConcurrency: DEFAULT_WORKER_MAX_CONCURRENCY,
    activeIndexShards: DEFAULT_ACTIVE_INDEX_SHARDS,
    sweepIntervalMinutes: DEFAULT_SWEEP_INTERVAL.toMinutes(),
    accountConcurrency: AWS_LIMITS.accountConcurrency,
    apiQuota: AWS_LIMITS.httpApiRequestsPerSecond,
    events: true,
    listed: false,
  };
}

/** The workload the defaults are sized for ({@link REFERENCE_WORKLOAD}) at `tasksPerSecond`. */
export function referenceWorkload(tasksPerSecond: number): Workload {
  return { tasksPerSecond, ...REFERENCE_WORKLOAD, inputRounds: 0, steps: 0, waitingShare: 0 };
}

/** Index writes of the approvers' list per task (its one partition, not the active index's shards). */
function approvalIndexWcu(workload: Workload, deployment: Deployment): number {
  return deployment.approvals ? 2 * (workload.personQuestions ?? 0) : 0;
}

/** One limit: what the workload asks of it, what it allows, and what moves it. */
export interface Limit {
  name: string;
  demand: number;
  capacity: number;
  unit: string;
  /** demand / capacity: 1 is the limit reached. */
  utilisation: number;
  /** The settings (or quota requests) that move it. */
  moveWith: string;
}

/** What the model says of a workload on a deployment. */
export interface CapacityReport {
  workload: Workload;
  deployment: Deployment;
  perTask: PerTask;
  /** Requests (or units) a second per component. */
  rates: {
    apiRequests: number;
    mcpInvocations: number;
    workerRuns: number;
    ddbWrites: number;
    ddbReads: number;
    /** Write units of the table (the index's are its own, {@link CapacityReport.rates.indexWcuPerShard}). */
    tableWcu: number;
    rcu: number;
    /** Index write units a second on each index partition (the rows spread evenly over the shards). */
    indexWcuPerShard: number;
    sqsRequests: number;
    /** `PutEvents` requests (one event each). */
    events: number;
  };
  concurrency: {
    /** MCP function executions in flight. */
    mcp: number;
    /** Tasks running in workers at once (Little's law: rate × worker seconds). */
    workerRecords: number;
    /** Worker invocations in flight, with full batches (fewer records per batch need more, up to one per record). */
    workerInvocations: number;
    /** Every function together, against the account's concurrency. */
    total: number;
  };
  /** Every limit checked, the most used first. */
  limits: Limit[];
  /** The first limit reached, if the workload reaches any (utilisation ≥ 1). */
  firstReached?: Limit;
  /** The most tasks a second of this shape the deployment serves (the busiest limit at 100%). */
  maxTasksPerSecond: number;
  /** How many stuck tasks one sweeper run re-enqueues at most (a backlog after an incident). */
  sweepPerRun: number;
  /** Monthly cost at list prices (30 days), by service, and its total. */
  monthlyUsd: { dynamodb: number; sqs: number; lambda: number; api: number; logs: number; events: number; sweeper: number; total: number };
}

/** The model: a workload on a deployment (default: {@link defaultDeployment}). */
export function capacity(workload: Workload, deployment: Deployment = defaultDeployment()): CapacityReport {
  const task = perTaskOn(workload, deployment);
  const rates = ratesOf(workload, deployment, task);
  const concurrency = concurrencyOf(workload, task);
  const limits = limitsOf(workload, deployment, rates, concurrency);
  const busiest = limits[0]!;
  return {
    workload,
    deployment,
    perTask: task,
    rates,
    concurrency,
    limits,
    ...(busiest.utilisation >= 1 ? { firstReached: busiest } : {}),
    maxTasksPerSecond: workload.tasksPerSecond / busiest.utilisation,
    sweepPerRun: sweepPerRun(),
    monthlyUsd: monthlyCost(workload, deployment, task),
  };
}

/** The cap on unfinished tasks the deployment's functions apply: as set, else the default where there is an issuer. */
export function unfinishedCapOf(deployment: Deployment): number | undefined {
  return unfinishedTaskCap(deployment.maxUnfinishedTasks, deployment.issuer === true);
}

/** One task's calls on this deployment: listed or not, approvers or not, capped or not, events or not. */
function perTaskOn(workload: Workload, deployment: Deployment): PerTask {
  const cap = unfinishedCapOf(deployment);
  return {
    ...perTask(workload, {
      listed: deployment.listed,
      ...(deployment.approvals ? { approvals: true } : {}),
      ...(cap === undefined ? {} : { maxUnfinishedTasks: cap }),
    }),
    ...(deployment.events ? {} : { events: 0 }),
  };
}

function ratesOf(workload: Workload, deployment: Deployment, task: PerTask): CapacityReport['rates'] {
  const r = workload.tasksPerSecond;
  return {
    apiRequests: r * task.apiRequests,
    mcpInvocations: r * task.apiRequests,
    workerRuns: r * task.workerRuns,
    ddbWrites: r * task.ddbWrites,
    ddbReads: r * task.ddbReads,
    tableWcu: r * task.tableWcu,
    rcu: r * task.rcu,
    // The sparse index's share: the list index's entries are on their owner's partition, and the approvers' list on its own.
    indexWcuPerShard:
      (r * (task.indexWcu - (deployment.listed ? 1 : 0) - approvalIndexWcu(workload, deployment))) / deployment.activeIndexShards,
    sqsRequests: r * task.sqsRequests,
    events: r * task.events,
  };
}

function concurrencyOf(workload: Workload, task: PerTask): CapacityReport['concurrency'] {
  const mcp = workload.tasksPerSecond * task.mcpSeconds;
  const workerRecords = workload.tasksPerSecond * task.workerSeconds;
  const workerInvocations = workerRecords / WORKER_BATCH_SIZE;
  const sweeper = 1;
  return { mcp, workerRecords, workerInvocations, total: mcp + workerInvocations + sweeper };
}

function limit(name: string, demand: number, capacity: number, unit: string, moveWith: string): Limit {
  return { name, demand, capacity, unit, utilisation: demand / capacity, moveWith };
}

/** Every limit the workload meets on the deployment, the most used first. */
function limitsOf(
  workload: Workload,
  deployment: Deployment,
  rates: CapacityReport['rates'],
  concurrency: CapacityReport['concurrency'],
): Limit[] {
  const { workerRecords } = concurrency;
  const throttleMove = '`-c throttleRateLimit=…` (default: sized from `workerMaxConcurrency`)';
  const workersMove = `\`-c workerMaxConcurrency=…\` (batches of ${WORKER_BATCH_SIZE}; at most 1000)`;
  const cap = unfinishedCapOf(deployment);
  return [
    limit('API stage throttle', rates.apiRequests, deployment.throttleRateLimit, 'requests/s', throttleMove),
    limit(
      'HTTP API account quota',
      rates.apiRequests,
      deployment.apiQuota,
      'requests/s',
      'a Service Quotas increase (API Gateway: throttle rate)',
    ),
    limit('worker concurrency', workerRecords, deployment.workerMaxConcurrency * WORKER_BATCH_SIZE, 'tasks running at once', workersMove),
    limit(
      'account Lambda concurrency',
      concurrency.total,
      deployment.accountConcurrency,
      'executions',
      'a Service Quotas increase (Lambda: concurrent executions); fewer waiting calls',
    ),
    limit(
      'index partition (per shard)',
      rates.indexWcuPerShard,
      AWS_LIMITS.partitionWcu,
      'WCU/s',
      `\`-c activeIndexShards=…\` (at most ${MAX_ACTIVE_INDEX_SHARDS}; grow only)`,
    ),
    limit(
      'table write throughput',
      rates.tableWcu,
      AWS_LIMITS.tableUnitsPerSecond,
      'WCU/s',
      'a Service Quotas increase (DynamoDB: table-level on-demand throughput)',
    ),
    limit(
      'table read throughput',
      rates.rcu,
      AWS_LIMITS.tableUnitsPerSecond,
      'RCU/s',
      'a Service Quotas increase; fewer polls (`TASKS_POLL_INTERVAL_MS`)',
    ),
    limit(
      'task row (per task)',
      1000 / DEFAULT_SETTINGS.pollIntervalMs,
      AWS_LIMITS.partitionRcu,
      'RCU/s',
      'none: one client polls its task at most once a second (`TASKS_POLL_INTERVAL_MS`)',
    ),
    ...(cap === undefined ? [] : [slotSetLimit(workload, cap)]),
    limit('SQS messages in flight', workerRecords, AWS_LIMITS.sqsInFlight, 'messages', 'none needed before the worker limits'),
    limit('EventBridge PutEvents', rates.events, AWS_LIMITS.putEventsPerSecond, 'requests/s', 'a Service Quotas increase (PutEvents)'),
  ].sort((a, b) => b.utilisation - a.utilisation);
}

/** A principal's set of unfinished task ids (with a cap): two writes per task on one item, as large as the set. */
function slotSetLimit(workload: Workload, cap: number): Limit {
  const writeUnits = 2 * Math.ceil(slotItemBytes(unfinishedPerOwner(workload, cap)) / 1024);
  return limit(
    'slot set (per principal, with maxUnfinishedTasks)',
    (workload.tasksPerSecond / (workload.owners ?? 1)) * writeUnits,
    AWS_LIMITS.partitionWcu,
    'WCU/s',
    'more principals (authentication), a smaller cap, or `-c maxUnfinishedTasks=0`',
  );
}

/** How many stuck tasks one sweeper run re-enqueues at most: its time budget over the time per task, in parallel. */
function sweepPerRun(): number {
  const runBudgetMs = SWEEPER_TIMEOUT.toMilliseconds() - SWEEP_DEADLINE_MARGIN_MS;
  return Math.max(SWEEP_PAGE, Math.floor((runBudgetMs / SWEEP_TASK_MS) * SWEEP_MAX_PARALLELISM));
}

/** A month (30 days) at the workload's rate, at list prices, by service. */
function monthlyCost(workload: Workload, deployment: Deployment, task: PerTask): CapacityReport['monthlyUsd'] {
  const month = workload.tasksPerSecond * SECONDS_A_MONTH;
  const gbSeconds = ASSUMED.memoryGb * (task.mcpSeconds + task.workerSeconds);
  const invocations = task.apiRequests + task.workerRuns;
  const logBytes = invocations * ASSUMED.platformLogBytes + task.apiRequests * ASSUMED.accessLogBytes;
  const runsAMonth = SECONDS_A_MONTH / (deployment.sweepIntervalMinutes * 60);
  const sweeperUsd =
    runsAMonth *
    (PRICE.lambdaRequest +
      2 * PRICE.lambdaRequest + // the dead-letter handler runs on the same schedule
      deployment.activeIndexShards * 0.5 * PRICE.rru +
      ASSUMED.memoryGb * (ASSUMED.workerMs / 1000) * PRICE.lambdaGbSecond);
  const monthly = {
    dynamodb: month * ((task.tableWcu + task.indexWcu) * PRICE.wru + task.rcu * PRICE.rru),
    sqs: month * task.sqsRequests * PRICE.sqsRequest,
    lambda: month * (invocations * PRICE.lambdaRequest + gbSeconds * PRICE.lambdaGbSecond),
    api: month * task.apiRequests * PRICE.httpApiRequest,
    logs: (month * logBytes * PRICE.logsGb) / 1024 ** 3,
    events: month * task.events * PRICE.eventBridgeEvent,
    sweeper: sweeperUsd,
  };
  return { ...monthly, total: Object.values(monthly).reduce((a, b) => a + b, 0) };
}

/**
 * The tasks a second of {@link REFERENCE_WORKLOAD} a default deployment
 * serves with no limit reached (rounded down): what `docs/capacity.md` states.
 */
export function defaultServedLoad(): number {
  return Math.floor(capacity(referenceWorkload(1)).maxTasksPerSecond);
}
