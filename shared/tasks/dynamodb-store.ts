import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type ReturnValue,
} from '@aws-sdk/client-dynamodb';
import { TABLE_KEYS, TASK_ROW_SK, TTL_ATTRIBUTE } from './dynamodb-schema.ts';
import {
  isExpired,
  isRunning,
  isTerminal,
  type JsonRpcErrorObject,
  type TaskBase,
  type TaskOutcome,
  type TaskRecord,
  type TaskStatus,
  type WorkingTask,
} from './model.ts';
import { applyOutcome } from './outcome.ts';
import { LeaseLostError, TaskNotFoundError, type AnswerResult, type CancelResult, type NewTask, type TaskStore } from './store.ts';
import { expiresAtSeconds } from './ttl.ts';

type Item = Record<string, AttributeValue>;

/** How often `answer`, `cancel` and `fail` re-read and retry after losing a race. */
const MAX_ATTEMPTS = 5;

/**
 * `createdAt + ttlMs` in epoch milliseconds. Condition expressions cannot add
 * two attributes, so `claim` compares against this copy to refuse expired
 * tasks exactly (`expiresAt` is rounded up to whole seconds).
 */
const EXPIRES_AT_MS = 'expiresAtMs';

/** Optional attributes a write removes when the new record lacks them (`statusMessage` is never cleared). */
const CLEARABLE = ['leaseOwner', 'leaseUntil', 'inputRequests', 'result', 'error'] as const;


/**
 * {@link TaskStore} on one DynamoDB table (layout in `dynamodb-schema.ts`).
 *
 * Every state change is one conditional `PutItem`/`UpdateItem`; a failed
 * condition is translated here into the port's results and errors. Writes
 * made under a lease (`claim`, `progress`, `finish`, `release`) need no read;
 * `answer`, `cancel` and `fail` read once and write guarded by the `version`
 * they read, retrying a few times when another writer got there first.
 */
export class DynamoDbTaskStore implements TaskStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #retentionMs: number;

  constructor(options: { client: DynamoDBClient; tableName: string; retentionMs: number }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#retentionMs = options.retentionMs;
  }

  async create(task: NewTask): Promise<WorkingTask> {
    const record: WorkingTask = {
      taskId: task.taskId,
      owner: task.owner,
      tool: task.tool,
      arguments: task.arguments,
      clientCapabilities: task.clientCapabilities,
      status: 'working',
      createdAt: task.now,
      lastUpdatedAt: task.now,
      ttlMs: task.ttlMs,
      pollIntervalMs: task.pollIntervalMs,
      inputResponses: task.inputResponses,
      issuedKeys: [],
      cancelRequested: false,
      attempts: 0,
      version: 1,
    };
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: toItem(record),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new Error(`Task id collision: ${task.taskId}`);
      throw error;
    }
    return record;
  }

  async get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined> {
    return visible(await this.#read(taskId), owner, now);
  }

  async claim(taskId: string, leaseOwner: string, now: number, leaseMs: number): Promise<TaskRecord | undefined> {
    const item = await this.#update(taskId, {
      set: { leaseOwner: { S: leaseOwner }, leaseUntil: number(now + leaseMs) },
      increment: ['attempts'],
      condition: `#status = :working AND (attribute_not_exists(#leaseUntil) OR #leaseUntil <= :now) AND #${EXPIRES_AT_MS} > :now`,
      values: { ':working': { S: 'working' }, ':now': number(now) },
      returnValues: 'ALL_NEW',
    });
    return item && fromItem(item);
  }

  async progress(task: TaskRecord, leaseOwner: string, statusMessage: string, now: number): Promise<{ cancelRequested: boolean }> {
    const item = await this.#update(task.taskId, {
      set: { statusMessage: { S: statusMessage }, lastUpdatedAt: number(now) },
      ...leaseHeldBy(leaseOwner),
      returnValues: 'ALL_NEW',
    });
    if (!item) throw new LeaseLostError(task.taskId);
    return { cancelRequested: item['cancelRequested']?.BOOL === true };
  }

  async finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord> {
    const next = applyOutcome(task, outcome, now, this.#retentionMs);
    // Only what this outcome decides is written: `cancelRequested`, a newer
    // progress `statusMessage` and the answers stay as other writers left them.
    const forced = ['status', 'lastUpdatedAt', ...('statusMessage' in outcome && outcome.statusMessage !== undefined ? ['statusMessage'] : [])];
    const item = await this.#update(task.taskId, {
      ...changes(task, next, forced),
      ...leaseHeldBy(leaseOwner),
      returnValues: 'ALL_NEW',
    });
    if (!item) throw new LeaseLostError(task.taskId);
    return fromItem(item);
  }

  async release(taskId: string, leaseOwner: string): Promise<void> {
    // A failed condition means the lease is not ours (any more): nothing to release.
    await this.#update(taskId, {
      remove: ['leaseOwner', 'leaseUntil'],
      condition: '#leaseOwner = :leaseOwner',
      values: { ':leaseOwner': { S: leaseOwner } },
    });
  }

  async fail(taskId: string, error: JsonRpcErrorObject, statusMessage: string, now: number): Promise<boolean> {
    return this.#rewrite(taskId, (task) => {
      if (!task || isTerminal(task.status)) return { result: false };
      return { result: true, next: applyOutcome(task, { status: 'failed', error, statusMessage }, now, this.#retentionMs) };
    });
  }

  async answer(taskId: string, owner: string, responses: Record<string, unknown>, now: number): Promise<AnswerResult> {
    return this.#rewrite(taskId, (found) => {
      const task = visible(found, owner, now);
      if (!task) throw new TaskNotFoundError(taskId);
      if (task.status !== 'input_required') return { result: { accepted: [], resumed: false } };
      const accepted = Object.keys(responses).filter((key) => Object.hasOwn(task.inputRequests, key));
      if (accepted.length === 0) return { result: { accepted, resumed: false } };

      const { inputRequests, ...rest } = task;
      const outstanding = Object.fromEntries(Object.entries(inputRequests).filter(([key]) => !accepted.includes(key)));
      const inputResponses = { ...task.inputResponses, ...Object.fromEntries(accepted.map((key) => [key, responses[key]])) };
      const resumed = Object.keys(outstanding).length === 0;
      const next: TaskRecord = resumed
        ? { ...rest, status: 'working', inputResponses, lastUpdatedAt: now }
        : { ...task, inputRequests: outstanding, inputResponses, lastUpdatedAt: now };
      return { result: { accepted, resumed }, next };
    });
  }

  async cancel(taskId: string, owner: string, now: number): Promise<CancelResult> {
    return this.#rewrite<CancelResult>(taskId, (found) => {
      const task = visible(found, owner, now);
      if (!task) throw new TaskNotFoundError(taskId);
      if (isTerminal(task.status)) return { result: 'terminal' };
      if (isRunning(task, now)) return { result: 'requested', next: { ...task, cancelRequested: true } };
      return { result: 'cancelled', next: applyOutcome({ ...task, cancelRequested: true }, { status: 'cancelled' }, now, this.#retentionMs) };
    });
  }

  /** One strongly consistent read of the task row, whoever owns it and however old it is. */
  async #read(taskId: string): Promise<TaskRecord | undefined> {
    const { Item: item } = await this.#client.send(
      new GetItemCommand({ TableName: this.#tableName, Key: key(taskId), ConsistentRead: true }),
    );
    return item && fromItem(item);
  }

  /**
   * Read, decide, write `next` only if the row is still the version read;
   * when another writer got in between, decide again on a fresh read.
   */
  async #rewrite<T>(taskId: string, decide: (task: TaskRecord | undefined) => { result: T; next?: TaskRecord }): Promise<T> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      const current = await this.#read(taskId);
      const { result, next } = decide(current);
      if (!current || !next) return result;
      const written = await this.#update(taskId, {
        ...changes(current, next),
        condition: '#version = :readVersion AND #status = :readStatus',
        values: { ':readVersion': number(current.version), ':readStatus': { S: current.status } },
      });
      if (written) return result;
    }
    throw new Error(`Task ${taskId} kept changing: gave up after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * One conditional `UpdateItem` that also increments `version`. Resolves to
   * the returned attributes (`{}` without `returnValues`), or `undefined` when
   * the condition failed.
   */
  async #update(taskId: string, write: RowWrite): Promise<Item | undefined> {
    const set = Object.entries(write.set ?? {});
    const clauses = [
      set.length > 0 ? `SET ${set.map(([name]) => `#${name} = :${name}`).join(', ')}` : '',
      write.remove?.length ? `REMOVE ${write.remove.map((name) => `#${name}`).join(', ')}` : '',
      `ADD ${['version', ...(write.increment ?? [])].map((name) => `#${name} :one`).join(', ')}`,
    ];
    const updateExpression = clauses.filter(Boolean).join(' ');
    const values: Item = { ':one': number(1), ...write.values };
    for (const [name, value] of set) {
      if (`:${name}` in values) throw new Error(`Value placeholder clash: :${name}`);
      values[`:${name}`] = value;
    }
    try {
      const { Attributes } = await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: key(taskId),
          UpdateExpression: updateExpression,
          ConditionExpression: write.condition,
          ExpressionAttributeNames: attributeNames(updateExpression, write.condition),
          ExpressionAttributeValues: values,
          ReturnValues: write.returnValues ?? 'NONE',
        }),
      );
      return Attributes ?? {};
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }
}

/** A conditional update of the task row, by attribute name (placeholders are derived from the names). */
interface RowWrite {
  set?: Item;
  remove?: readonly string[];
  /** Counters incremented by one besides `version`, which every write increments. */
  increment?: readonly string[];
  /** Attribute names are written `#name`; values are passed in `values`. */
  condition: string;
  values?: Item;
  returnValues?: ReturnValue;
}

/** The condition of every write made under a lease: still ours, and the task not terminal. */
function leaseHeldBy(leaseOwner: string): Pick<RowWrite, 'condition' | 'values'> {
  return {
    condition: '#leaseOwner = :leaseOwner AND #status IN (:working, :input_required)',
    values: { ':leaseOwner': { S: leaseOwner }, ':working': { S: 'working' }, ':input_required': { S: 'input_required' } },
  };
}

/** The task as its owner may see it at `now`: missing, expired and foreign tasks look the same. */
function visible(task: TaskRecord | undefined, owner: string, now: number): TaskRecord | undefined {
  return task && task.owner === owner && !isExpired(task, now) ? task : undefined;
}

/**
 * The attribute writes that turn row `before` into row `after`: attributes
 * that differ (or are `forced`) are set, optional ones `after` lacks are
 * removed. `version` is left to the write, which increments it.
 */
function changes(before: TaskRecord, after: TaskRecord, forced: readonly string[] = []): { set: Item; remove: string[] } {
  const old = toItem(before);
  const next = toItem(after);
  const set: Item = {};
  for (const [name, value] of Object.entries(next)) {
    if (name === 'version' || name === TABLE_KEYS.partition || name === TABLE_KEYS.sort) continue;
    if (forced.includes(name) || JSON.stringify(old[name]) !== JSON.stringify(value)) set[name] = value;
  }
  const remove = CLEARABLE.filter((name) => !(name in next));
  return { set, remove };
}

/** `ExpressionAttributeNames` for every `#name` the expressions use (DynamoDB rejects unused ones). */
function attributeNames(...expressions: string[]): Record<string, string> {
  const names: Record<string, string> = {};
  for (const [placeholder, name] of expressions.join(' ').matchAll(/#(\w+)/g)) names[placeholder] = name!;
  return names;
}

function key(taskId: string): Item {
  return { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } };
}

function number(value: number): AttributeValue {
  return { N: String(value) };
}

function json(value: unknown): AttributeValue {
  return { S: JSON.stringify(value) };
}

/** The task row: scalars as native types, structured values as JSON text. */
function toItem(task: TaskRecord): Item {
  const item: Item = {
    ...key(task.taskId),
    status: { S: task.status },
    owner: { S: task.owner },
    tool: { S: task.tool },
    arguments: json(task.arguments),
    clientCapabilities: json(task.clientCapabilities),
    createdAt: number(task.createdAt),
    lastUpdatedAt: number(task.lastUpdatedAt),
    ttlMs: number(task.ttlMs),
    [TTL_ATTRIBUTE]: number(expiresAtSeconds(task.createdAt, task.ttlMs)),
    [EXPIRES_AT_MS]: number(task.createdAt + task.ttlMs),
    pollIntervalMs: number(task.pollIntervalMs),
    inputResponses: json(task.inputResponses),
    issuedKeys: json(task.issuedKeys),
    cancelRequested: { BOOL: task.cancelRequested },
    attempts: number(task.attempts),
    version: number(task.version),
  };
  if (task.statusMessage !== undefined) item['statusMessage'] = { S: task.statusMessage };
  if (task.lease) {
    item['leaseOwner'] = { S: task.lease.owner };
    item['leaseUntil'] = number(task.lease.until);
  }
  if (task.status === 'input_required') item['inputRequests'] = json(task.inputRequests);
  if (task.status === 'completed') item['result'] = json(task.result);
  if (task.status === 'failed') item['error'] = json(task.error);
  return item;
}

function fromItem(item: Item): TaskRecord {
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
  if (item['leaseOwner']) base.lease = { owner: readString(item, 'leaseOwner'), until: readNumber(item, 'leaseUntil') };

  const status = readString(item, 'status') as TaskStatus;
  switch (status) {
    case 'working':
    case 'cancelled':
      return { ...base, status };
    case 'input_required':
      return { ...base, status, inputRequests: readJson(item, 'inputRequests') };
    case 'completed':
      return { ...base, status, result: readJson(item, 'result') };
    case 'failed':
      return { ...base, status, error: readJson(item, 'error') };
    default:
      throw new Error(`Task row with unknown status: ${String(status)}`);
  }
}

function readString(item: Item, name: string): string {
  const value = item[name]?.S;
  if (value === undefined) throw new Error(`Task row attribute ${name} is missing or not a string`);
  return value;
}

function readNumber(item: Item, name: string): number {
  const value = item[name]?.N;
  if (value === undefined) throw new Error(`Task row attribute ${name} is missing or not a number`);
  return Number(value);
}

function readJson<T>(item: Item, name: string): T {
  return JSON.parse(readString(item, name)) as T;
}
