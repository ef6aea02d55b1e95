/**
 * Counting the AWS calls the functions make on the local stack, by
 * middleware on their SDK clients:
 *
 * - DynamoDB: every call the functions' client makes is counted, with
 *   `ReturnConsumedCapacity: 'TOTAL'` added to it by a middleware and the
 *   returned `ConsumedCapacity` summed. dynalite reports the table's units
 *   only; the write units of the indexes (the sparse `active-tasks` one and
 *   the list index) are added from the item's index attributes before and
 *   after each write, by AWS's rules (see {@link indexWriteUnits}). Units dynalite does not report at all (a failed
 *   conditional write) are computed from item sizes and flagged.
 * - SQS: the functions' sends, and the event source mapping's receives that
 *   delivered messages and its deletes. Empty long polls are left out: the
 *   mapping makes them whether or not tasks run.
 * - Worker invocations: the mapping's receives from the task queue that
 *   delivered messages (each is one invocation of the worker handler).
 * - EventBridge: every `PutEvents` the functions' client makes, and the
 *   events (entries) it carries: what EventBridge bills.
 */
import { type AttributeValue, type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ACTIVE_INDEX, LIST_INDEX } from '../../shared/tasks/dynamodb/index.ts';

type Item = Record<string, AttributeValue>;

/** What a scenario costs, measured or at the design's minimum. */
export interface Figures {
  rcu: number;
  wcu: number;
  ddbRequests: number;
  sqsRequests: number;
  invocations: number;
  /** Lifecycle events published (`PutEvents` entries; each is billed as one custom event). */
  events: number;
}

/**
 * The sparse index: entering it or leaving it is one index write, moving `sweepAt` is two (delete + put).
 * A run that ends within its first lease never moves: `create` (and `answer`, `release`, the sweeper)
 * schedule `sweepAt` one lease plus the grace ahead, and neither `claim` nor a progress write touches it;
 * only a lease renewal (a third of the way into a long run) moves it.
 */
export const ENTER = 1;
export const MOVE = 2;
export const LEAVE = 1;

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** What the functions used since the last {@link resetMeter}. */
export interface Meter {
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
  /** `PutEvents` entries the functions sent (lifecycle events). */
  events: number;
  /** Requests to the MCP endpoint (API Gateway + one MCP function invocation each). */
  apiRequests: number;
  /** Bytes the functions logged through the sink (what CloudWatch Logs ingests, before Lambda's own lines). */
  logBytes: number;
}

function emptyMeter(): Meter {
  return {
    commands: new Map(),
    rcu: 0,
    tableWcu: 0,
    indexWcu: 0,
    computedUnits: 0,
    failedConditions: 0,
    sqsRequests: 0,
    invocations: 0,
    events: 0,
    apiRequests: 0,
    logBytes: 0,
  };
}

/** The meter of the current measurement (a live binding: {@link resetMeter} replaces it). */
export let meter = emptyMeter();

/** Starts a measurement: a fresh, empty meter. */
export function resetMeter(): Meter {
  meter = emptyMeter();
  return meter;
}

/** Cumulative, never reset: what quiescence is judged on. */
export const flow = { sent: 0, delivered: 0, deleted: 0, inFlight: 0 };

function bump(key: string, by = 1): void {
  meter.commands.set(key, (meter.commands.get(key) ?? 0) + by);
}

/** Writes are serialised, so that the item read before and after each one is that write's own doing. */
let writeLock: Promise<unknown> = Promise.resolve();

export function meterDynamoDb(client: DynamoDBClient, quiet: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
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
    },
    { step: 'initialize', name: 'bench-meter-dynamodb' },
  );
}

async function meteredWrite<T extends { output?: unknown }>(
  command: string,
  input: Record<string, unknown>,
  send: () => Promise<T>,
  quiet: DynamoDBClient,
): Promise<T> {
  const table = String(input['TableName']);
  const key =
    command === 'PutItem'
      ? keyOf(input['Item'] as Item)
      : command === 'UpdateItem' || command === 'DeleteItem'
        ? (input['Key'] as Item)
        : undefined;
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
  if (key) meter.indexWcu += INDEXES.reduce((sum, index) => sum + indexWriteUnits(index, before, after), 0);
  else if (command === 'BatchWriteItem') {
    // Only result chunks are batch-written; a put of an item carrying the index attributes would enter the index.
    const requests = Object.values((input['RequestItems'] ?? {}) as Record<string, Array<{ PutRequest?: { Item: Item } }>>).flat();
    meter.indexWcu += requests.filter((request) => INDEXES.some((index) => request.PutRequest?.Item[index.partition])).length * ENTER;
  }
  return output;
}

/** The table's keys-only indexes: the sparse one of unfinished tasks, and the list index (keys written once, at creation). */
const INDEXES = [ACTIVE_INDEX, LIST_INDEX] as const;

/**
 * Write units of one keys-only index caused by one write, by AWS's rules for
 * global secondary indexes: an item gaining the index key is one index
 * write, losing it is one, changing its value is two (delete + put); a write
 * that leaves the key alone costs the index nothing (keys-only projection).
 * An index entry (keys + 100 bytes) is under 1 KB.
 */
function indexWriteUnits(index: (typeof INDEXES)[number], before: Item | undefined, after: Item | undefined): number {
  const value = (attribute: AttributeValue | undefined) => attribute?.S ?? attribute?.N;
  const indexKey = (item: Item | undefined) =>
    item?.[index.partition] && item[index.sort] ? `${value(item[index.partition])}/${value(item[index.sort])}` : undefined;
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

export function meterSqs(client: SQSClient, role: 'functions' | 'mapping', taskQueueUrl: () => string): void {
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

/** Counts the functions' `PutEvents` requests and the events (entries) they carry. */
export function meterEventBridge(client: EventBridgeClient): void {
  (client.middlewareStack as DynamoDBClient['middlewareStack']).add(
    (next, context) => async (args) => {
      const command = String(context.commandName).replace(/Command$/, '');
      flow.inFlight += 1;
      try {
        const output = await next(args);
        bump(`EventBridge.${command}`);
        if (command === 'PutEvents') meter.events += ((args.input as { Entries?: unknown[] }).Entries ?? []).length;
        return output;
      } finally {
        flow.inFlight -= 1;
      }
    },
    { step: 'initialize', name: 'bench-meter-eventbridge' },
  );
}

/** The figures of a meter, to set next to the minimum. */
export function figuresOf(m: Meter): Figures {
  const ddbRequests = [...m.commands].filter(([key]) => key.startsWith('DynamoDB.')).reduce((sum, [, n]) => sum + n, 0);
  return {
    rcu: m.rcu,
    wcu: m.tableWcu + m.indexWcu,
    ddbRequests,
    sqsRequests: m.sqsRequests,
    invocations: m.invocations,
    events: m.events,
  };
}

/** The commands a meter counted, as `Service.Command×n` (per call when `per` calls were made). */
export function detail(m: Meter, per = 1): string {
  return [...m.commands]
    .filter(([, n]) => n > 0)
    .map(([key, n]) => `${key}×${n / per}`)
    .join(', ');
}

/** One scenario as measured. */
export interface Row {
  scenario: string;
  measured: Figures;
  minimum: Figures;
  meter: Meter;
  taskId: string;
}

/** One `tasks/get` of a scenario's finished task, per call. */
export interface PollCost {
  scenario: string;
  ddbRequests: number;
  rcu: number;
  commands: string;
  logBytes: number;
}
