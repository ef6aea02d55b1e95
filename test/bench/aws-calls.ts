/**
 * `npm run bench`: what a task costs on AWS, measured (not estimated) on the
 * local stack, which runs the unchanged handlers against dynalite and fauxqs,
 * printed side by side with the minimum the design needs (the baseline) and
 * the ratio measured / minimum.
 *
 * - DynamoDB: every call the functions' client makes is counted, with
 *   `ReturnConsumedCapacity: 'TOTAL'` added to it by a middleware and the
 *   returned `ConsumedCapacity` summed. dynalite reports the table's units
 *   only; the sparse `active-tasks` index's write units are added from the
 *   item's index attributes before and after each write, by AWS's rules (see
 *   {@link indexWriteUnits}). Units dynalite does not report at all (a failed
 *   conditional write) are computed from item sizes and flagged.
 * - SQS: the functions' sends, and the event source mapping's receives that
 *   delivered messages and its deletes. Empty long polls are left out: the
 *   mapping makes them whether or not tasks run.
 * - Worker invocations: the mapping's receives from the task queue that
 *   delivered messages (each is one invocation of the worker handler).
 *
 * Polling is left out: the bench watches tasks through a store on a client of
 * its own, which nothing counts; the cost of one `tasks/get` is printed
 * separately (the client decides how often it polls). Every wait is for a
 * condition (task status, every sent message delivered and deleted, no call
 * in flight), never for a fixed time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { readEffects } from '../../functions/tools/testing/effects.ts';
import { LOCAL_CREDENTIALS } from '../../infra/local/sqs.ts';
import { REGION, startLocalStack } from '../../infra/local/stack.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY, WORKER_BATCH_SIZE } from '../../infra/event-sources.ts';
import { startLocalStackProcess } from '../support/local-stack.ts';
import { ENV } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { ACTIVE_INDEX } from '../../shared/tasks/dynamodb-schema.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb-store.ts';
import type { TaskRecord, TaskStatus } from '../../shared/tasks/model.ts';
import { rpc } from '../support/mcp-http.ts';

type Item = Record<string, AttributeValue>;

// --- the minima: what the design needs, per scenario ------------------------------

interface Figures {
  rcu: number;
  wcu: number;
  ddbRequests: number;
  sqsRequests: number;
  invocations: number;
}

/** Units of one row write (rows stay under 1 KB) and of one strongly consistent read of it (under 4 KB). */
const ROW_WCU = 1;
const ROW_RCU = 1;
/**
 * The sparse index: entering it or leaving it is one index write, moving `sweepAt` is two (delete + put).
 * A run that ends within its first lease never moves: `create` (and `answer`, `release`, the sweeper)
 * schedule `sweepAt` one lease plus the grace ahead, and neither `claim` nor a progress write touches it;
 * only a lease renewal (a third of the way into a long run) moves it.
 */
const ENTER = 1;
const MOVE = 2;
const LEAVE = 1;

/**
 * Simple task. DynamoDB: create (put) + claim (lease) + finish (outcome) = 3 row writes, no read; index:
 * create enters it, finish leaves it (the claim leaves `sweepAt` alone). SQS: send + receive + delete.
 */
const SIMPLE_MIN: Figures = {
  ddbRequests: 3,
  rcu: 0,
  wcu: 3 * ROW_WCU + ENTER + LEAVE,
  sqsRequests: 3,
  invocations: 1,
};
/**
 * One input round: the simple task's run twice, plus the answer. DynamoDB: create + claim + suspend
 * (finish `input_required`) + answer (read the outstanding keys, then one conditional write) + second
 * claim + finish = 6 writes, 1 read; index: enter (create), move (suspend: `sweepAt` becomes the wait's
 * deadline, `TASKS_MAX_INPUT_WAIT_MS`), move (answer resumes), leave (finish); neither claim moves it.
 * The deadline costs the round two index writes (it was leave + enter before waits could end). SQS:
 * send/receive/delete for each run (the answer enqueues the second).
 */
const INPUT_ROUND_MIN: Figures = {
  ddbRequests: 7,
  rcu: 1 * ROW_RCU,
  wcu: 6 * ROW_WCU + ENTER + MOVE + MOVE + LEAVE,
  sqsRequests: 6,
  invocations: 2,
};
/**
 * A 10-step job in one invocation: the simple task plus one query of the step checkpoints (a replay
 * must see them) and one checkpoint item per step; checkpoints are not in the index. Progress writes
 * are optional (throttled heartbeats), so the minimum has none; one that is made costs its row write
 * only, since it renews no lease this early in the run (the index is keys-only and `sweepAt` stays).
 */
const STEPS = 10;
const TEN_STEP_MIN: Figures = {
  ddbRequests: 3 + 1 + STEPS,
  rcu: 1 * ROW_RCU,
  wcu: (3 + STEPS) * ROW_WCU + ENTER + LEAVE,
  sqsRequests: 3,
  invocations: 1,
};
/** `tasks/get`: one strongly consistent read of the row. */
const GET_MIN = { ddbRequests: 1, rcu: ROW_RCU };

// --- cost per 1,000 tasks, at list prices (printed after the counts) ----------------------

/**
 * List prices (us-east-1, no free tier): DynamoDB on-demand, SQS standard, Lambda on ARM, HTTP API,
 * CloudWatch Logs (standard ingestion), X-Ray. Custom metrics are not per task (see the README).
 */
const PRICE = {
  wru: 0.625 / 1e6,
  rru: 0.125 / 1e6,
  sqsRequest: 0.4 / 1e6,
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecond: 0.0000133334,
  httpApiRequest: 1.0 / 1e6,
  logsGb: 0.5,
  xrayTrace: 5.0 / 1e6,
} as const;

/** Polls per task assumed for the client (`BENCH_POLLS_PER_TASK`): one a second for a task of ~10 s. */
const POLLS_PER_TASK = Number(process.env['BENCH_POLLS_PER_TASK'] ?? 10);
/**
 * What the bench cannot measure on this machine, assumed per invocation (warm, 512 MB, ARM): billed
 * duration of an MCP request and of a worker run besides the tool's own time; the platform's
 * START/END/REPORT lines and the API access log line.
 */
const ASSUMED = { mcpMs: 50, workerMs: 100, memoryGb: 0.5, platformLogBytes: 350, accessLogBytes: 300 } as const;


// --- metering -----------------------------------------------------------------------

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

interface Meter {
  commands: Map<string, number>;
  rcu: number;
  /** Write units of the table, as dynalite reports them. */
  tableWcu: number;
  /** Write units of the sparse index, by AWS's rules (dynalite reports none). */
  indexWcu: number;
  /** Units computed from item sizes because no `ConsumedCapacity` came back. */
  computedUnits: number;
  failedConditions: number;
  sqsRequests: number;
  invocations: number;
  /** Requests to the MCP endpoint (API Gateway + one MCP function invocation each). */
  apiRequests: number;
  /** Bytes the functions logged through the sink (what CloudWatch Logs ingests, before Lambda's own lines). */
  logBytes: number;
}

function emptyMeter(): Meter {
  return { commands: new Map(), rcu: 0, tableWcu: 0, indexWcu: 0, computedUnits: 0, failedConditions: 0, sqsRequests: 0, invocations: 0, apiRequests: 0, logBytes: 0 };
}

let meter = emptyMeter();
/** Cumulative, never reset: what quiescence is judged on. */
const flow = { sent: 0, delivered: 0, deleted: 0, inFlight: 0 };

function bump(key: string, by = 1): void {
  meter.commands.set(key, (meter.commands.get(key) ?? 0) + by);
}

/** Writes are serialised, so that the item read before and after each one is that write's own doing. */
let writeLock: Promise<unknown> = Promise.resolve();

function meterDynamoDb(client: DynamoDBClient, quiet: DynamoDBClient): void {
  client.middlewareStack.add((next, context) => async (args) => {
    const command = String(context.commandName).replace(/Command$/, '');
    const input = args.input as Record<string, unknown>;
    if (!READS.has(command) && !WRITES.has(command)) return next(args);
    const measured = { ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } };
    flow.inFlight += 1;
    try {
      if (!WRITES.has(command)) {
        const output = await next(measured);
        bump(`DynamoDB.${command}`);
        let units = consumed(output.output);
        if (units === undefined || (units === 0 && (command === 'Query' || command === 'Scan'))) {
          // dynalite reports 0 for a Query that returns nothing; AWS bills the minimum for the kind of read.
          units = input['ConsistentRead'] === true ? 1 : 0.5;
          meter.computedUnits += 1;
        }
        meter.rcu += units;
        return output;
      }
      const run = writeLock.then(() => meteredWrite(command, input, () => next(measured), quiet));
      writeLock = run.catch(() => {});
      return await run;
    } finally {
      flow.inFlight -= 1;
    }
  }, { step: 'initialize', name: 'bench-meter-dynamodb' });
}

async function meteredWrite<T extends { output?: unknown }>(command: string, input: Record<string, unknown>, send: () => Promise<T>, quiet: DynamoDBClient): Promise<T> {
  const table = String(input['TableName']);
  const key = command === 'PutItem' ? keyOf(input['Item'] as Item) : command === 'UpdateItem' || command === 'DeleteItem' ? (input['Key'] as Item) : undefined;
  const before = key ? await readItem(quiet, table, key) : undefined;
  let output: T;
  try {
    output = await send();
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') {
      // AWS bills a failed conditional write by the size of the item it checked; dynalite reports nothing.
      bump(`DynamoDB.${command} (condition failed)`);
      meter.failedConditions += 1;
      meter.tableWcu += Math.max(1, Math.ceil(itemBytes(before ?? {}) / 1024));
      meter.computedUnits += 1;
    }
    throw error;
  }
  bump(`DynamoDB.${command}`);
  const units = consumed(output.output);
  const after = key ? await readItem(quiet, table, key) : undefined;
  if (units === undefined) {
    meter.computedUnits += 1;
    meter.tableWcu += Math.max(1, Math.ceil(Math.max(itemBytes(before ?? {}), itemBytes(after ?? {})) / 1024));
  } else meter.tableWcu += units;
  if (key) meter.indexWcu += indexWriteUnits(before, after);
  else if (command === 'BatchWriteItem') {
    // Only result chunks are batch-written; a put of an item carrying the index attributes would enter the index.
    const requests = Object.values((input['RequestItems'] ?? {}) as Record<string, Array<{ PutRequest?: { Item: Item } }>>).flat();
    meter.indexWcu += requests.filter((request) => request.PutRequest?.Item[ACTIVE_INDEX.partition]).length * ENTER;
  }
  return output;
}

/**
 * Write units of the sparse, keys-only `active-tasks` index caused by one
 * write, by AWS's rules for global secondary indexes: an item gaining the
 * index key is one index write, losing it is one, changing its value is two
 * (delete + put); a write that leaves the key alone costs the index nothing
 * (keys-only projection). An index entry (keys + 100 bytes) is under 1 KB.
 */
function indexWriteUnits(before: Item | undefined, after: Item | undefined): number {
  const indexKey = (item: Item | undefined) =>
    item?.[ACTIVE_INDEX.partition] && item[ACTIVE_INDEX.sort] ? `${item[ACTIVE_INDEX.partition]!.S}/${item[ACTIVE_INDEX.sort]!.N}` : undefined;
  const was = indexKey(before);
  const is = indexKey(after);
  if (was === is) return 0;
  if (was === undefined) return ENTER;
  if (is === undefined) return LEAVE;
  return MOVE;
}

/** Summed `CapacityUnits` of a response, or `undefined` when it carries none. */
function consumed(output: unknown): number | undefined {
  const capacity = (output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
  if (capacity === undefined) return undefined;
  const entries = (Array.isArray(capacity) ? capacity : [capacity]) as Array<{ CapacityUnits?: number }>;
  return entries.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}

async function readItem(client: DynamoDBClient, table: string, key: Item): Promise<Item | undefined> {
  return (await client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
}

function keyOf(item: Item): Item {
  return { pk: item['pk']!, sk: item['sk']! };
}

/** An item's size by DynamoDB's rules (names + values, UTF-8), for units no response reported. */
function itemBytes(item: Item): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += Buffer.byteLength(name) + valueBytes(value);
  return total;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\.|e.*$/gi, '').length / 2) + 1;
  if (value.B !== undefined) return value.B.length;
  if (value.M !== undefined) return 3 + Object.keys(value.M).length + itemBytes(value.M);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
  return 1;
}

function meterSqs(client: SQSClient, role: 'functions' | 'mapping', taskQueueUrl: () => string): void {
  (client.middlewareStack as DynamoDBClient['middlewareStack']).add(
    (next, context) => async (args) => {
      const command = String(context.commandName).replace(/Command$/, '');
      const input = args.input as { QueueUrl?: string; Entries?: unknown[] };
      // The mapping always has a long poll open: receives are judged by what they deliver, not by being in flight.
      const tracked = command !== 'ReceiveMessage';
      if (tracked) flow.inFlight += 1;
      try {
        const output = await next(args);
        // Judged on return: the mapping's first long poll starts before the bench learns the queue's URL.
        const taskQueue = input.QueueUrl === taskQueueUrl();
        const result = output.output as { Messages?: unknown[]; Successful?: unknown[] };
        if (command === 'ReceiveMessage') {
          const messages = result.Messages?.length ?? 0;
          // Empty long polls cost the same whether or not tasks run: only receives that delivered work count.
          if (messages === 0) return output;
          if (taskQueue) {
            flow.delivered += messages;
            meter.invocations += 1;
          }
        }
        if (command === 'DeleteMessageBatch' && taskQueue) flow.deleted += result.Successful?.length ?? 0;
        if (command === 'DeleteMessage' && taskQueue) flow.deleted += 1;
        if (command === 'SendMessage' && taskQueue) flow.sent += 1;
        if (command === 'SendMessageBatch' && taskQueue) flow.sent += result.Successful?.length ?? 0;
        meter.sqsRequests += 1;
        bump(`SQS${role === 'mapping' ? '(mapping)' : ''}.${command}${taskQueue ? '' : ' (DLQ)'}`);
        return output;
      } finally {
        if (tracked) flow.inFlight -= 1;
      }
    },
    { step: 'initialize', name: `bench-meter-sqs-${role}` },
  );
}

// --- the stack ------------------------------------------------------------------------

const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-bench-'));
const effectsDir = join(dataDir, 'effects');
let taskQueueUrl = '';
// A client of the bench's own, never metered: watching tasks and reading items around writes.
let quiet!: DynamoDBClient;
// The step_sequence fixture lives in the test toolset and records its side effects here.
process.env['TASKS_TEST_EFFECTS_DIR'] = effectsDir;
const stack = await startLocalStack({
  port: 0,
  dataDir,
  env: {
    ...process.env,
    [ENV.toolset]: 'test',
    // No cancellation reads while a handler runs: the jobs take milliseconds, heartbeats would be noise.
    [ENV.cancelCheckMs]: process.env[ENV.cancelCheckMs] ?? '60000',
  },
  log: jsonLog((line) => void (meter.logBytes += Buffer.byteLength(line))),
  // The sweeper runs once at start-up (uncounted) and not again during the bench.
  sweepIntervalMs: 3_600_000,
  instrument: ({ dynamodb, sqs, poller, endpoints }) => {
    quiet = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: REGION, credentials: LOCAL_CREDENTIALS });
    meterDynamoDb(dynamodb, quiet);
    meterSqs(sqs, 'functions', () => taskQueueUrl);
    meterSqs(poller, 'mapping', () => taskQueueUrl);
  },
});
taskQueueUrl = stack.config.queueUrl;
const watcher = new DynamoDbTaskStore({ client: quiet, tableName: stack.config.tableName, policy: stack.config });
const principal = stack.config.localPrincipal;

const TIMEOUT_MS = 20_000;

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${TIMEOUT_MS} ms waiting for ${what} (${JSON.stringify(flow)}; ${detail(meter)})`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The task once it has one of `statuses`, read through the unmetered client (polling is not the task's cost). */
function statusOf(taskId: string, statuses: TaskStatus[]): Promise<TaskRecord> {
  return until(`task ${taskId} to be ${statuses.join(' or ')}`, async () => {
    const task = await watcher.get(taskId, principal, Date.now());
    return task && statuses.includes(task.status) ? task : undefined;
  });
}

/** Every message sent has been delivered and deleted, and no call is in flight. */
function quiescent(): Promise<true> {
  return until('the queue to drain', () => (flow.inFlight === 0 && flow.delivered >= flow.sent && flow.deleted === flow.delivered ? true : undefined));
}

async function createTask(name: string, args: Record<string, unknown>): Promise<string> {
  meter.apiRequests += 1;
  const created = await rpc(stack.url, 'tools/call', { name, arguments: args });
  const taskId = created.body?.result?.['taskId'];
  if (typeof taskId !== 'string') throw new Error(`bench: ${name} did not create a task: ${created.text}`);
  return taskId;
}

interface Row {
  scenario: string;
  measured: Figures;
  minimum: Figures;
  meter: Meter;
  taskId: string;
}
const rows: Row[] = [];

function figuresOf(m: Meter): Figures {
  const ddbRequests = [...m.commands].filter(([key]) => key.startsWith('DynamoDB.')).reduce((sum, [, n]) => sum + n, 0);
  return { rcu: m.rcu, wcu: m.tableWcu + m.indexWcu, ddbRequests, sqsRequests: m.sqsRequests, invocations: m.invocations };
}

async function scenario(name: string, minimum: Figures, run: () => Promise<string>): Promise<void> {
  await quiescent();
  meter = emptyMeter();
  const taskId = await run();
  await quiescent();
  rows.push({ scenario: name, measured: figuresOf(meter), minimum, meter, taskId });
}

try {
  await scenario('simple task', SIMPLE_MIN, async () => {
    const taskId = await createTask('slow_compute', { seconds: 0.01 });
    await statusOf(taskId, ['completed']);
    return taskId;
  });

  await scenario('one input round', INPUT_ROUND_MIN, async () => {
    const taskId = await createTask('confirm_delete', { filename: 'bench.txt' });
    const waiting = await statusOf(taskId, ['input_required']);
    if (waiting.status !== 'input_required') throw new Error('unreachable');
    const [key] = Object.keys(waiting.inputRequests);
    meter.apiRequests += 1;
    const answered = await rpc(stack.url, 'tasks/update', { taskId, inputResponses: { [String(key)]: { action: 'accept', content: { confirm: true } } } });
    if (answered.body?.error) throw new Error(`bench: tasks/update failed: ${answered.text}`);
    await statusOf(taskId, ['completed']);
    return taskId;
  });

  const label = `bench-${Date.now()}`;
  await scenario(`${STEPS}-step job`, TEN_STEP_MIN, async () => {
    const taskId = await createTask('step_sequence', { label, steps: STEPS, stepMs: 0 });
    const done = await statusOf(taskId, ['completed', 'failed']);
    const sum = done.status === 'completed' ? (done.result['structuredContent'] as { sum?: number } | undefined)?.sum : undefined;
    if (sum !== (STEPS * (STEPS + 1)) / 2) throw new Error(`bench: step_sequence ended wrong: ${JSON.stringify(done)}`);
    const effects = readEffects(label, effectsDir);
    if (effects.length !== STEPS) throw new Error(`bench: expected each step to run once, got ${effects.join(', ')}`);
    return taskId;
  });

  // One tasks/get of each finished task: the price of a poll.
  const gets: Array<{ scenario: string; ddbRequests: number; rcu: number; commands: string; logBytes: number }> = [];
  for (const row of rows) {
    await quiescent();
    meter = emptyMeter();
    const polls = 5;
    for (let i = 0; i < polls; i++) {
      const got = await rpc(stack.url, 'tasks/get', { taskId: row.taskId });
      if (got.body?.result?.['status'] !== 'completed') throw new Error(`bench: tasks/get returned ${got.text}`);
    }
    const f = figuresOf(meter);
    gets.push({ scenario: row.scenario, ddbRequests: f.ddbRequests / polls, rcu: f.rcu / polls, commands: detail(meter, polls), logBytes: meter.logBytes / polls });
  }

  report(gets);
  await localConcurrency();
} finally {
  quiet.destroy();
  await stack.close();
}
try {
  await restartRecovery();
} finally {
  await rm(dataDir, { recursive: true, force: true });
}

// --- the local stack's concurrency and restart recovery -----------------------------------

/**
 * 20 one-second tasks created at once: with the deployed event source
 * settings (batches of WORKER_BATCH_SIZE, DEFAULT_WORKER_MAX_CONCURRENCY
 * batches at once) they run side by side, so the wall time is about one
 * task's, not twenty.
 */
async function localConcurrency(): Promise<void> {
  const count = 20;
  const seconds = 1;
  await quiescent();
  const started = Date.now();
  const ids = await Promise.all(Array.from({ length: count }, () => createTask('slow_compute', { seconds })));
  await Promise.all(ids.map((taskId) => statusOf(taskId, ['completed'])));
  const wall = Date.now() - started;
  console.log('');
  console.log('Local stack (npm start settings), measured here:');
  console.log(
    `- concurrency: ${count} tasks of ${seconds} s created at once finished in ${wall} ms (ideal ${seconds * 1000} ms, ${(wall / (seconds * 1000)).toFixed(2)}×; ` +
      `fully serialised would be ${count * seconds * 1000} ms); at most ${stack.workerStats().peak} worker batches at once ` +
      `(batch size ${WORKER_BATCH_SIZE}, max concurrency ${DEFAULT_WORKER_MAX_CONCURRENCY})`,
  );
}

/**
 * A task running when the stack process is killed (SIGKILL), then the stack
 * started again on the same data: how long until it is ready, and until the
 * interrupted task is finished (its run starts over: a 2 s task without steps).
 */
async function restartRecovery(): Promise<void> {
  const restartDir = join(dataDir, 'restart');
  const env = { [ENV.toolset]: 'all' };
  const first = await startLocalStackProcess({ dataDir: restartDir, env });
  let second: Awaited<ReturnType<typeof startLocalStackProcess>> | undefined;
  try {
    const created = await rpc(first.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 2 } });
    const taskId = created.body?.result?.['taskId'];
    if (typeof taskId !== 'string') throw new Error(`bench: no task: ${created.text}`);
    await until('the task to be running', () => (first.output().includes('"event":"task-created"') ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.kill('SIGKILL');
    await first.stop();
    const restarted = Date.now();
    second = await startLocalStackProcess({ dataDir: restartDir, env });
    const ready = Date.now() - restarted;
    for (;;) {
      const got = await rpc(second.url, 'tasks/get', { taskId });
      const status = got.body?.result?.['status'];
      if (status === 'completed') break;
      if (status !== 'working' || Date.now() - restarted > 60_000) throw new Error(`bench: interrupted task ended ${got.text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const done = Date.now() - restarted;
    const recovery = /"event":"recovery"[^\n]*"ms":(\d+)/.exec(second.output())?.[1];
    console.log(
      `- restart recovery: after a SIGKILL with a task running, the restarted stack was ready in ${ready} ms (start-up recovery ${recovery ?? '?'} ms of it) ` +
        `and had the task completed ${done} ms after the restart began (its 2 s run included; before start-up recovery: minutes)`,
    );
  } finally {
    await second?.stop();
    await first.stop();
  }
}

// --- the report -------------------------------------------------------------------------

function ratio(measured: number, minimum: number): string {
  if (minimum === 0) return measured === 0 ? '—' : `+${measured}`;
  return `${(measured / minimum).toFixed(2)}×`;
}

function detail(m: Meter, per = 1): string {
  return [...m.commands]
    .filter(([, n]) => n > 0)
    .map(([key, n]) => `${key}×${n / per}`)
    .join(', ');
}

function report(gets: Array<{ scenario: string; ddbRequests: number; rcu: number; commands: string; logBytes: number }>): void {
  const columns: Array<[string, keyof Figures]> = [
    ['DynamoDB RCU', 'rcu'],
    ['DynamoDB WCU', 'wcu'],
    ['DynamoDB requests', 'ddbRequests'],
    ['SQS requests', 'sqsRequests'],
    ['worker invocations', 'invocations'],
  ];
  const out: string[] = [];
  out.push('', 'AWS cost per task, create → result, measured on the local stack (polling excluded), next to the design minimum', '');
  out.push(`| scenario | ${columns.map(([title]) => `${title} | min | ratio`).join(' | ')} |`);
  out.push(`|---|${columns.map(() => '--:|--:|--:').join('|')}|`);
  for (const row of rows) {
    const cells = columns.map(([, key]) => `${row.measured[key]} | ${row.minimum[key]} | ${ratio(row.measured[key], row.minimum[key])}`);
    out.push(`| ${row.scenario} | ${cells.join(' | ')} |`);
  }
  out.push('');
  out.push('Where the units come from (WCU = table, as dynalite reports it, + the sparse index, by AWS rules):');
  for (const row of rows) {
    const computed = row.meter.computedUnits > 0 ? `; ${row.meter.computedUnits} figure(s) computed by AWS rules where dynalite reports none or 0` : '';
    out.push(`- ${row.scenario}: WCU ${row.meter.tableWcu} table + ${row.meter.indexWcu} index${computed}; ${detail(row.meter)}`);
  }
  out.push('');
  out.push('One tasks/get (per call, the client chooses how often to poll):');
  for (const get of gets) {
    out.push(`- of the ${get.scenario}'s finished task: ${get.rcu} RCU in ${get.ddbRequests} DynamoDB request(s) (min ${GET_MIN.rcu} RCU, ${GET_MIN.ddbRequests} request; ratio ${ratio(get.rcu, GET_MIN.rcu)}); ${get.commands}`);
  }
  out.push('');
  out.push('Minimum = what the design needs: rows under 1 KB (1 WCU per write) and 4 KB (1 RCU per strongly consistent read);');
  out.push('simple = create + claim + finish, SQS send + receive + delete, 1 invocation; input round = simple + suspend + answer');
  out.push('(read + write) + second claim, SQS and invocation ×2; 10-step = simple + 1 checkpoint query + 10 checkpoint puts.');
  out.push('Index writes: enter 1 (create), leave 1 (finish); moving sweepAt costs 2: a lease renewal (claims and progress');
  out.push('writes leave sweepAt alone, so a run within its first lease never moves), and a wait for input starting (sweepAt');
  out.push('becomes its deadline) and ending by an answer; partial answers leave it alone.');
  out.push('Not counted: the mapping\'s empty long polls (constant, not per task). Corrected: dynalite reports 0 RCU for a');
  out.push('Query that returns nothing (a first run\'s checkpoint query); AWS bills the minimum read (1 RCU, strongly consistent).');
  out.push(...costReport(gets));
  console.log(out.join('\n'));
}

// --- cost per 1,000 tasks, at list prices ------------------------------------------------

function costReport(gets: Array<{ scenario: string; rcu: number; logBytes: number }>): string[] {
  const usd = (value: number) => `$${value.toFixed(4)}`;
  const out = ['', `Cost per 1,000 tasks at list prices (us-east-1, no free tier), including ${POLLS_PER_TASK} tasks/get polls per task (BENCH_POLLS_PER_TASK):`, ''];
  out.push('| scenario | DynamoDB | SQS | Lambda | HTTP API | Logs | total | of which polls | X-Ray if tracing on |');
  out.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const row of rows) {
    const get = gets.find((g) => g.scenario === row.scenario);
    const m = row.meter;
    const f = row.measured;
    const polls = POLLS_PER_TASK;
    const pollRcu = (get?.rcu ?? ROW_RCU) * polls;
    const apiRequests = m.apiRequests + polls;
    const invocations = apiRequests + f.invocations;
    const gbSeconds = ASSUMED.memoryGb * ((apiRequests * ASSUMED.mcpMs + f.invocations * ASSUMED.workerMs) / 1000);
    const logBytes = m.logBytes + (get?.logBytes ?? 0) * polls + invocations * ASSUMED.platformLogBytes + apiRequests * ASSUMED.accessLogBytes;
    const parts = {
      dynamodb: f.wcu * PRICE.wru + (f.rcu + pollRcu) * PRICE.rru,
      sqs: f.sqsRequests * PRICE.sqsRequest,
      lambda: invocations * PRICE.lambdaRequest + gbSeconds * PRICE.lambdaGbSecond,
      api: apiRequests * PRICE.httpApiRequest,
      logs: (logBytes / 1024 ** 3) * PRICE.logsGb,
    };
    const pollShare =
      pollRcu * PRICE.rru +
      polls * (PRICE.lambdaRequest + PRICE.httpApiRequest + (ASSUMED.memoryGb * ASSUMED.mcpMs * PRICE.lambdaGbSecond) / 1000) +
      (((get?.logBytes ?? 0) + ASSUMED.platformLogBytes + ASSUMED.accessLogBytes) * polls * PRICE.logsGb) / 1024 ** 3;
    const total = Object.values(parts).reduce((a, b) => a + b, 0);
    // Traced, every API request and every worker invocation is a trace (low volumes are sampled in full).
    const xray = invocations * PRICE.xrayTrace;
    const k = 1000;
    out.push(
      `| ${row.scenario} | ${usd(parts.dynamodb * k)} | ${usd(parts.sqs * k)} | ${usd(parts.lambda * k)} | ${usd(parts.api * k)} | ${usd(parts.logs * k)} | ${usd(total * k)} | ${usd(pollShare * k)} | +${usd(xray * k)} |`,
    );
  }
  out.push('');
  out.push(`Assumed (not measurable here): ${ASSUMED.mcpMs} ms per MCP request and ${ASSUMED.workerMs} ms per worker run besides the tool's`);
  out.push(`own time, at ${ASSUMED.memoryGb * 1024} MB; ${ASSUMED.platformLogBytes} bytes of Lambda platform lines per invocation, ${ASSUMED.accessLogBytes} bytes of access log`);
  out.push('per request. Measured: DynamoDB units, SQS requests, invocations, requests and the bytes the functions log.');
  return out;
}
