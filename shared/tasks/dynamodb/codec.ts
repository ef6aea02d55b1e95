/**
 * The DynamoDB adapter's row codec: a {@link TaskRecord} as a task row and
 * back, the keys of every item kind (layout in `dynamodb/schema.ts`), the
 * attribute readers, and the size estimate the row budgets are measured with.
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { listSortKey } from '../listing.ts';
import { isTerminal, type TaskBase, type TaskRecord, type TaskStatus } from '../model.ts';
import { decodeMoment, encodeMoment } from '../moments.ts';
import type { Moment } from '../phases.ts';
import type { StorePolicy } from '../store-types.ts';
import { expiresAtSeconds } from '../ttl.ts';
import {
  ACTIVE_INDEX,
  activeShards,
  DEFAULT_ACTIVE_INDEX_SHARDS,
  EXPIRES_AT_MS,
  LIST_INDEX,
  RESULT_SK_PREFIX,
  SLOTS_PK_PREFIX,
  SLOTS_SK,
  STEP_SK_PREFIX,
  TABLE_KEYS,
  TASK_ROW_SK,
  TTL_ATTRIBUTE,
} from './schema.ts';

export type Item = Record<string, AttributeValue>;

export function rowKey(taskId: string): Item {
  return { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } };
}

export function chunkKey(taskId: string, id: string, index: number): Item {
  return { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: `${RESULT_SK_PREFIX}${id}#${String(index).padStart(4, '0')}` } };
}

/**
 * `step#<name>`. Any well-formed name fits that DynamoDB's sort-key limit
 * (1024 bytes) allows; a name with a lone surrogate would not survive UTF-8
 * and could collide with another, so it is refused like one too long.
 */
export function stepSortKey(name: string): string {
  const sortKey = STEP_SK_PREFIX + name;
  if (/\p{Surrogate}/u.test(name) || Buffer.byteLength(sortKey, 'utf8') > 1024) {
    throw new Error('Step names must be well-formed Unicode of at most 1019 bytes (UTF-8)');
  }
  return sortKey;
}

export function stepValue(item: Item): unknown {
  const text = item['value']?.S;
  return text === undefined ? undefined : JSON.parse(text);
}

/** The active-index partition of a task among `shards` (see {@link DEFAULT_ACTIVE_INDEX_SHARDS}): spread by a hash of its id. */
export function activeShardOf(taskId: string, shards: number = DEFAULT_ACTIVE_INDEX_SHARDS): string {
  return `s${createHash('sha256').update(taskId).digest()[0]! % shards}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What an idempotency key is bound to: the tool and its arguments. */
export function fingerprintOf(task: Pick<TaskBase, 'tool' | 'arguments'>): string {
  return sha256(JSON.stringify([task.tool, task.arguments]));
}

/** The item listing an owner's unfinished task ids (only with a cap). */
export function slotKey(owner: string): Item {
  return { [TABLE_KEYS.partition]: { S: `${SLOTS_PK_PREFIX}${sha256(owner)}` }, [TABLE_KEYS.sort]: { S: SLOTS_SK } };
}

/** What places a task in its owner's list: whether tasks are listed, and how many partitions the shared owner's list spans. */
export type ListLayout = Pick<StorePolicy, 'listing' | 'activeIndexShards'>;

/** `owner#<hash>`: the list partition of an owner's tasks (hashed: a principal may be long, and is no key of anything else). */
function ownerList(owner: string): string {
  return `owner#${sha256(owner)}`;
}

/**
 * The list partitions of `owner`'s tasks: one, or for the shared owner of an
 * open endpoint, one per index shard (`owner#<hash>#s<n>`: prefix-stable, as
 * the active index's shards, so the count may grow and every reader still
 * reads every partition an earlier count wrote).
 */
export function listPartitions(owner: string, layout: ListLayout): string[] {
  if (layout.listing?.sharedOwner !== owner) return [ownerList(owner)];
  return activeShards(layout.activeIndexShards ?? DEFAULT_ACTIVE_INDEX_SHARDS).map((shard) => `${ownerList(owner)}#${shard}`);
}

/**
 * The list index keys of a new task row (none when the layout lists no
 * tasks): written once, by the put that creates the row, and never changed.
 */
export function listKeys(task: Pick<TaskBase, 'owner' | 'taskId' | 'createdAt'>, layout: ListLayout): Item {
  if (!layout.listing) return {};
  const partition =
    layout.listing.sharedOwner === task.owner
      ? `${ownerList(task.owner)}#${activeShardOf(task.taskId, layout.activeIndexShards ?? DEFAULT_ACTIVE_INDEX_SHARDS)}`
      : ownerList(task.owner);
  return { [LIST_INDEX.partition]: { S: partition }, [LIST_INDEX.sort]: { S: listSortKey(task.createdAt, task.taskId) } };
}

/** The size of a task's row (DynamoDB's rules, slightly overestimated): what the size budgets are measured with. */
export function taskRowBytes(task: TaskRecord): number {
  return itemBytes(toItem(task));
}

/**
 * DynamoDB's size of an item (names plus values, UTF-8), slightly
 * overestimated for numbers and containers.
 */
export function itemBytes(item: Item): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  return total;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.N !== undefined) return 21;
  if (value.B !== undefined) return value.B.length;
  if (value.M !== undefined) return 3 + itemBytes(value.M);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
  return 1;
}

export function number(value: number): AttributeValue {
  return { N: String(value) };
}

function json(value: unknown): AttributeValue {
  return { S: JSON.stringify(value) };
}

/**
 * The task row: scalars as native types, structured values as JSON text.
 * Terminal rows carry the TTL attribute (their end plus the retention), and
 * so do rows waiting for input until a deadline (the deadline plus the
 * retention, `keptUntil`); only rows with a `sweepAt` carry the
 * active-index attributes.
 */
export function toItem(task: TaskRecord, shards: number = DEFAULT_ACTIVE_INDEX_SHARDS): Item {
  const item: Item = {
    ...rowKey(task.taskId),
    status: { S: task.status },
    owner: { S: task.owner },
    tool: { S: task.tool },
    arguments: json(task.arguments),
    clientCapabilities: json(task.clientCapabilities),
    createdAt: number(task.createdAt),
    lastUpdatedAt: number(task.lastUpdatedAt),
    ttlMs: number(task.ttlMs),
    pollIntervalMs: number(task.pollIntervalMs),
    inputResponses: json(task.inputResponses),
    issuedKeys: json(task.issuedKeys),
    cancelRequested: { BOOL: task.cancelRequested },
    attempts: number(task.attempts),
    version: number(task.version),
  };
  if (isTerminal(task.status)) {
    item[TTL_ATTRIBUTE] = number(expiresAtSeconds(task.createdAt, task.ttlMs));
    item[EXPIRES_AT_MS] = number(task.createdAt + task.ttlMs);
  } else if (task.keptUntil !== undefined) {
    // A wait for input with a deadline: the row's own expiry, a backstop should the wait never end.
    item[TTL_ATTRIBUTE] = number(Math.ceil(task.keptUntil / 1000));
    item[EXPIRES_AT_MS] = number(task.keptUntil);
  }
  if (task.sweepAt !== undefined) {
    item[ACTIVE_INDEX.partition] = { S: activeShardOf(task.taskId, shards) };
    item[ACTIVE_INDEX.sort] = number(task.sweepAt);
  }
  if (task.statusMessage !== undefined) item['statusMessage'] = { S: task.statusMessage };
  if (task.cancelMessage !== undefined) item['cancelMessage'] = { S: task.cancelMessage };
  if (task.finalMessage) item['finalMessage'] = { BOOL: true };
  if (task.machineOwner) item['machineOwner'] = { BOOL: true };
  if (task.lease) {
    item['leaseOwner'] = { S: task.lease.owner };
    item['leaseUntil'] = number(task.lease.until);
  }
  if (task.toolVersion !== undefined) item['toolVersion'] = { S: task.toolVersion };
  if (task.requester !== undefined) item['requester'] = { S: task.requester };
  if (task.toolTitle !== undefined) item['toolTitle'] = { S: task.toolTitle };
  if (task.traceparent !== undefined) item['traceparent'] = { S: task.traceparent };
  if (task.tracestate !== undefined) item['tracestate'] = { S: task.tracestate };
  if (task.questions !== undefined) item['questions'] = json(task.questions);
  if (task.decisions !== undefined) item['decisions'] = json(task.decisions);
  if (task.progressMark !== undefined) item['progressMark'] = number(task.progressMark);
  if (task.callbacks !== undefined) item['callbacks'] = json(task.callbacks);
  if (task.callbackWait !== undefined) item['callbackWait'] = json(task.callbackWait);
  if (task.repeat !== undefined) item['repeat'] = { M: { head: { S: task.repeat.head }, run: number(task.repeat.run) } };
  if (task.runsEnded !== undefined) item['runsEnded'] = number(task.runsEnded);
  if (task.workflow !== undefined) item['workflow'] = json(task.workflow);
  if (task.moments !== undefined) item['moments'] = momentsValue(task.moments);
  if (task.status === 'input_required') item['inputRequests'] = json(task.inputRequests);
  if (task.status === 'completed') item['result'] = json(task.result);
  if (task.status === 'failed') item['error'] = json(task.error);
  return item;
}

/** A task row as the store reads it (operator tools read rows of any owner with it). */
export function taskFromItem(item: Item): TaskRecord {
  return fromItem(item);
}

/**
 * The record of a task row. A result kept in chunks is not in the row: the
 * record has `{}` in its place until the store reads the chunks (`get`).
 */
export function fromItem(item: Item): TaskRecord {
  const base: TaskBase = {
    taskId: readString(item, TABLE_KEYS.partition),
    owner: readString(item, 'owner'),
    tool: readString(item, 'tool'),
    arguments: readJson(item, 'arguments'),
    clientCapabilities: readJson(item, 'clientCapabilities'),
    createdAt: readNumber(item, 'createdAt'),
    lastUpdatedAt: readNumber(item, 'lastUpdatedAt'),
    ttlMs: readNumber(item, 'ttlMs'),
    pollIntervalMs: readNumber(item, 'pollIntervalMs'),
    inputResponses: readJson(item, 'inputResponses'),
    issuedKeys: readJson(item, 'issuedKeys'),
    cancelRequested: item['cancelRequested']?.BOOL === true,
    attempts: readNumber(item, 'attempts'),
    version: readNumber(item, 'version'),
  };
  if (item['statusMessage']) base.statusMessage = readString(item, 'statusMessage');
  if (item['cancelMessage']) base.cancelMessage = readString(item, 'cancelMessage');
  if (item['finalMessage']?.BOOL === true) base.finalMessage = true;
  if (item['machineOwner']?.BOOL === true) base.machineOwner = true;
  if (item['leaseOwner']) base.lease = { owner: readString(item, 'leaseOwner'), until: readNumber(item, 'leaseUntil') };
  if (item[ACTIVE_INDEX.sort]) base.sweepAt = readNumber(item, ACTIVE_INDEX.sort);
  // An unfinished row's expiry is the wait's backstop; a terminal row's is its TTL, `ttlMs`.
  if (item[EXPIRES_AT_MS] && readString(item, 'status') === 'input_required') base.keptUntil = readNumber(item, EXPIRES_AT_MS);
  // Rows written before these attributes existed lack them: no version, no recorded questions, no mark.
  if (item['toolVersion']) base.toolVersion = readString(item, 'toolVersion');
  if (item['requester']) base.requester = readString(item, 'requester');
  if (item['toolTitle']) base.toolTitle = readString(item, 'toolTitle');
  if (item['traceparent']) base.traceparent = readString(item, 'traceparent');
  if (item['tracestate']) base.tracestate = readString(item, 'tracestate');
  if (item['questions']) base.questions = readJson(item, 'questions');
  if (item['decisions']) base.decisions = readJson(item, 'decisions');
  if (item['progressMark']) base.progressMark = readNumber(item, 'progressMark');
  if (item['callbacks']) base.callbacks = readJson(item, 'callbacks');
  if (item['callbackWait']) base.callbackWait = readJson(item, 'callbackWait');
  const repeat = item['repeat']?.M;
  if (repeat) base.repeat = { head: readString(repeat, 'head'), run: readNumber(repeat, 'run') };
  if (item['runsEnded']) base.runsEnded = readNumber(item, 'runsEnded');
  if (item['workflow']) base.workflow = readJson(item, 'workflow');
  if (item['moments']?.L) base.moments = item['moments'].L.flatMap((value) => readMoment(value));

  const status = readString(item, 'status') as TaskStatus;
  switch (status) {
    case 'working':
    case 'cancelled':
      return { ...base, status };
    case 'input_required':
      return { ...base, status, inputRequests: readJson(item, 'inputRequests') };
    case 'completed':
      return { ...base, status, result: item['result'] ? readJson(item, 'result') : {} };
    case 'failed':
      return { ...base, status, error: readJson(item, 'error') };
    default:
      throw new Error(`Task row with unknown status: ${String(status)}`);
  }
}

/**
 * Moments as the row keeps them: a list of short strings, so that the
 * writes made without a read (a claim) append to it (`list_append`).
 */
export function momentsValue(moments: readonly Moment[]): AttributeValue {
  return { L: moments.map((moment) => ({ S: encodeMoment(moment) })) };
}

/** One moment of the row's list (none for a kind this release does not know). */
function readMoment(value: AttributeValue): Moment[] {
  const moment = value.S === undefined ? undefined : decodeMoment(value.S);
  return moment ? [moment] : [];
}

export function readString(item: Item, name: string): string {
  const value = item[name]?.S;
  if (value === undefined) throw new Error(`Attribute ${name} is missing or not a string`);
  return value;
}

export function readNumber(item: Item, name: string): number {
  const value = item[name]?.N;
  if (value === undefined) throw new Error(`Attribute ${name} is missing or not a number`);
  return Number(value);
}

function readJson<T>(item: Item, name: string): T {
  return JSON.parse(readString(item, name)) as T;
}
