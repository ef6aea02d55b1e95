import { createHash, randomUUID } from 'node:crypto';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type BatchGetItemCommandOutput,
  type DynamoDBClient,
  type KeysAndAttributes,
  type ReturnValue,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { ACTIVE_INDEX, TABLE_KEYS, TASK_ROW_SK, TTL_ATTRIBUTE } from './dynamodb-schema.ts';
import { isTerminal, type JsonRpcErrorObject, type TaskBase, type TaskOutcome, type TaskRecord, type TaskStatus, type WorkingTask } from './model.ts';
import {
  IdempotencyConflictError,
  LeaseLostError,
  TaskRowRejectedError,
  TooManyTasksError,
  type AnswerResult,
  type CancelResult,
  type HeartbeatOptions,
  type NewTask,
  type ReleaseOptions,
  type StepRecord,
  type StorePolicy,
  type TaskStore,
} from './store.ts';
import {
  applyOutcome,
  decideAnswer,
  decideCancel,
  decideExpireWait,
  decideFail,
  heartbeatFields,
  leaseFor,
  newTaskRecord,
  releaseFields,
  visible,
  type Decision,
} from './transitions.ts';
import { expiresAtSeconds } from './ttl.ts';

type Item = Record<string, AttributeValue>;

/**
 * How many partitions of the active-task index the rows are spread over
 * (`activeShard` = `s0` … `s<n-1>`, derived from the task id). `findDue`
 * queries each of them. Changing it strands the rows already written under
 * the old count until their next write, so it is fixed.
 */
export const ACTIVE_SHARD_COUNT = 4;

/** Sort-key prefixes of the items a task keeps besides its row (`sk = 'task'`). */
export const STEP_SK_PREFIX = 'step#';
export const RESULT_SK_PREFIX = 'result#';

/** Partition-key prefix and sort key of idempotency-key items. */
export const IDEMPOTENCY_PK_PREFIX = 'idem#';
export const IDEMPOTENCY_SK = 'idem';

/** Partition-key prefix and sort key of an owner's unfinished-task set (only with a cap). */
export const SLOTS_PK_PREFIX = 'slots#';
export const SLOTS_SK = 'slots';

/**
 * How long an idempotency key outlives the retention window of the task it
 * created. A retry of the same call comes within seconds or minutes; a day
 * leaves room for clients that retry from a persisted queue.
 */
export const IDEMPOTENCY_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * A completed row whose estimated size (inline result included) would pass
 * this many bytes keeps its result in chunk items instead. DynamoDB's item
 * limit is 400 KB; the margin covers a `statusMessage` written after the
 * claim and the estimate's rounding.
 */
export const INLINE_ROW_LIMIT_BYTES = 300 * 1024;

/** Serialised result bytes per chunk item (key, `expiresAt` and names add under 100 bytes). */
export const RESULT_CHUNK_BYTES = 350 * 1024;

/** How often `answer`, `cancel`, `fail` and idempotent `create` re-read and retry after losing a race. */
const MAX_ATTEMPTS = 5;

/** How often a batch call is repeated for items DynamoDB left unprocessed without any progress. */
const MAX_IDLE_BATCH_ROUNDS = 8;

/**
 * `createdAt + ttlMs` in epoch milliseconds, on terminal rows only (next to
 * `expiresAt`, which is rounded up to whole seconds for DynamoDB's TTL).
 */
const EXPIRES_AT_MS = 'expiresAtMs';

/** Where a chunked result lives: `{ id, chunks }` (a map attribute). */
const RESULT_REF = 'resultRef';

/** Optional attributes a write removes when the new record lacks them (`statusMessage` is never cleared). */
const CLEARABLE = ['leaseOwner', 'leaseUntil', 'inputRequests', 'result', 'error', 'sweepAt', ACTIVE_INDEX.partition] as const;

/**
 * {@link TaskStore} on one DynamoDB table (layout in `dynamodb-schema.ts`).
 *
 * Items of a task share its partition: the row (`sk = 'task'`), step
 * checkpoints (`step#<name>`) and, for a result too large for the row, its
 * chunks (`result#<id>#<n>`). Idempotency keys have partitions of their own
 * (`idem#<hash>`).
 *
 * Every state change is one conditional `PutItem`/`UpdateItem`; a failed
 * condition is translated here into the port's results and errors. What each
 * write changes is decided in `transitions.ts`, as for the in-memory store.
 * Writes made under a lease (`claim`, `heartbeat`, `finish`, `release`) and
 * `reschedule` need no read: they write the fields the decision would, under
 * a condition expression that states the decision's rule. `answer`, `cancel`
 * and `fail` read once, decide on the row read, and write the difference
 * guarded by the `version` they read, retrying a few times when another
 * writer got there first.
 *
 * Only terminal rows carry the TTL attribute: a task that is working or
 * waiting for input is never deleted by DynamoDB (a wait ends through its
 * deadline instead). Working rows, and waiting rows with a deadline, carry
 * `activeShard` and `sweepAt`, which put them in the sparse
 * {@link ACTIVE_INDEX}; every write that ends a task removes both in the
 * same request. The index is
 * keys-only, so a write costs it something only when it adds, moves or
 * removes those keys: entering and leaving are one index write each, moving
 * `sweepAt` two. `claim` and progress-only heartbeats leave `sweepAt` alone
 * (see the port's schedule), so a task that finishes within its first lease
 * enters the index once and leaves it once.
 */
export class DynamoDbTaskStore implements TaskStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #policy: StorePolicy;

  constructor(options: { client: DynamoDBClient; tableName: string; policy: StorePolicy }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#policy = options.policy;
  }

  async create(task: NewTask, options: { idempotencyKey?: string } = {}): Promise<{ task: TaskRecord; created: boolean }> {
    const record = newTaskRecord(task, this.#policy);
    const capped = this.#policy.maxUnfinishedTasks !== undefined;
    if (capped) await this.#takeSlot(record.owner, record.taskId, task.now);
    try {
      let created: { task: TaskRecord; created: boolean };
      if (options.idempotencyKey === undefined) {
        if (!(await this.#putRow(record))) throw new Error('Task id collision');
        created = { task: fromItem(toItem(record)), created: true };
      } else {
        created = await this.#createOnce(record, options.idempotencyKey, task.now);
      }
      // An idempotent retry returned the first call's task: this call's slot goes back.
      if (capped && created.task.taskId !== record.taskId) await this.#freeSlot(record.owner, record.taskId);
      return created;
    } catch (error) {
      if (capped) await this.#freeSlot(record.owner, record.taskId);
      throw error;
    }
  }

  async get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined> {
    const item = await this.#readItem(taskId);
    const task = item && visible(fromItem(item), owner, now);
    return task && item && this.#withResult(task, item);
  }

  async claim(taskId: string, leaseOwner: string, now: number, leaseMs: number): Promise<TaskRecord | undefined> {
    // A blind write of what `decideClaim` decides; its condition is the
    // `claimable` rule. No expiry check: only terminal tasks expire, and those
    // are never `working`. `sweepAt` (an index key) is left alone: create,
    // release and answer scheduled it past one lease, so the claim costs the
    // index nothing.
    const lease = leaseFor(leaseOwner, now, leaseMs);
    const item = await this.#update(taskId, {
      set: {
        leaseOwner: { S: lease.owner },
        leaseUntil: number(lease.until),
      },
      increment: ['attempts'],
      condition: '#status = :working AND (attribute_not_exists(#leaseUntil) OR #leaseUntil <= :now)',
      values: { ':working': { S: 'working' }, ':now': number(now) },
      returnValues: 'ALL_NEW',
    });
    return item && fromItem(item);
  }

  async heartbeat(taskId: string, leaseOwner: string, now: number, options: HeartbeatOptions): Promise<{ cancelRequested: boolean }> {
    // A blind write of what `decideHeartbeat` decides, under the `leaseHeld` rule.
    const { renewal, progress, restart } = heartbeatFields(leaseOwner, now, options, this.#policy);
    const item = await this.#update(taskId, {
      set: {
        // Only a renewal moves `sweepAt`, so only a renewal writes the index;
        // a progress message changes non-key attributes (keys-only index).
        // The lease stays in `leaseOwner`'s name: only its end is written.
        ...(renewal === undefined ? {} : { leaseUntil: number(renewal.lease.until), sweepAt: number(renewal.sweepAt) }),
        ...(progress === undefined ? {} : { statusMessage: { S: progress.statusMessage }, lastUpdatedAt: number(progress.lastUpdatedAt) }),
        ...(restart === undefined ? {} : { attempts: number(restart.attempts), progressMark: number(restart.progressMark) }),
      },
      // A no-op assignment, so that `UPDATED_NEW` reports `cancelRequested`
      // without sending back the whole row.
      setExpressions: ['#cancelRequested = if_not_exists(#cancelRequested, :false)'],
      ...leaseHeldBy(leaseOwner, { ':false': { BOOL: false } }),
      returnValues: 'UPDATED_NEW',
    });
    if (!item) throw new LeaseLostError(taskId);
    return { cancelRequested: item['cancelRequested']?.BOOL === true };
  }

  async finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord> {
    // What `decideFinish` decides, computed on the record as claimed (no read):
    // the write's condition checks the `leaseHeld` rule on the row instead.
    // A record that is already terminal holds no lease, and its row is
    // terminal for good, so that condition could only fail: the outcome is
    // not applied to it (the table forbids that) and nothing is sent.
    if (isTerminal(task.status)) throw new LeaseLostError(task.taskId);
    const next = applyOutcome(task, outcome, now, this.#policy.retentionMs, this.#policy.maxInputWaitMs);
    // Only what this outcome decides is written: `cancelRequested`, a newer
    // heartbeat `statusMessage` and the answers stay as other writers left them.
    const forced = ['status', 'lastUpdatedAt', ...('statusMessage' in outcome && outcome.statusMessage !== undefined ? ['statusMessage'] : [])];
    const write = changes(task, next, forced);

    let chunkedResult: Record<string, unknown> | undefined;
    const text = write.set['result']?.S;
    if (next.status === 'completed' && text !== undefined && itemBytes(toItem(next)) > INLINE_ROW_LIMIT_BYTES) {
      // The chunks go first, under an id of this call's own: a row only ever
      // names chunks that were complete before it was written, and chunks of
      // an attempt whose write below fails are never named (their TTL removes them).
      const id = randomUUID();
      const chunks = await this.#putChunks(task.taskId, id, Buffer.from(text, 'utf8'), expiresAtSeconds(next.createdAt, next.ttlMs));
      delete write.set['result'];
      write.set[RESULT_REF] = { M: { id: { S: id }, chunks: number(chunks) } };
      chunkedResult = JSON.parse(text) as Record<string, unknown>;
    }

    let item: Item | undefined;
    try {
      item = await this.#update(task.taskId, { ...write, ...leaseHeldBy(leaseOwner), returnValues: 'ALL_NEW' });
    } catch (error) {
      if (!(error instanceof TaskRowRejectedError)) throw error;
      // The outcome cannot be stored (e.g. a row at the size limit): the task
      // ends `failed` through a minimal write that says why.
      const message = rejectedMessage(error, 'its outcome was written');
      const ended = await this.#endMinimal(task, { status: 'failed', error: ROW_REJECTED_ERROR }, message, now, leaseHeldBy(leaseOwner));
      if (!ended) throw new LeaseLostError(task.taskId);
      return ended;
    }
    if (!item) throw new LeaseLostError(task.taskId);
    const finished = fromItem(item);
    if (isTerminal(finished.status)) await this.#freeSlot(finished.owner, finished.taskId);
    return chunkedResult && finished.status === 'completed' ? { ...finished, result: chunkedResult } : finished;
  }

  async release(taskId: string, leaseOwner: string, _now: number, resumeAt: number, options: ReleaseOptions = {}): Promise<void> {
    // A blind write of what `decideRelease` decides, under the `leaseHeld`
    // rule. A failed condition means the lease is not ours (any more):
    // nothing to release.
    const fields = releaseFields(resumeAt, options, this.#policy);
    await this.#update(taskId, {
      set: {
        sweepAt: number(fields.sweepAt),
        ...(fields.attempts === undefined ? {} : { attempts: number(fields.attempts) }),
        ...(fields.progressMark === undefined ? {} : { progressMark: number(fields.progressMark) }),
      },
      remove: ['leaseOwner', 'leaseUntil'],
      ...leaseHeldBy(leaseOwner),
    });
  }

  async fail(taskId: string, error: JsonRpcErrorObject, statusMessage: string, now: number): Promise<boolean> {
    return this.#rewrite(taskId, (task) => decideFail(task, error, statusMessage, now, this.#policy));
  }

  async answer(taskId: string, owner: string, responses: Record<string, unknown>, now: number): Promise<AnswerResult> {
    return this.#rewrite(taskId, (task) => decideAnswer(taskId, task, owner, responses, now, this.#policy));
  }

  async cancel(taskId: string, owner: string, now: number, options: { statusMessage?: string } = {}): Promise<CancelResult> {
    return this.#rewrite(taskId, (task) => decideCancel(taskId, task, owner, now, this.#policy, options), (current, decision) => {
      if (decision.result !== 'requested') return undefined;
      // Requesting cancellation of a running task only ever sets one flag:
      // concurrent cancels (and the worker's heartbeats) need not be ordered,
      // so the write is guarded by the rule (still this status, lease still
      // live), not by the version read. Already requested: nothing to write.
      if (current.cancelRequested) return 'skip';
      return {
        set: { cancelRequested: { BOOL: true } },
        condition: '#status = :readStatus AND #leaseUntil > :now',
        values: { ':readStatus': { S: current.status }, ':now': number(now) },
      };
    });
  }

  async loadSteps(taskId: string): Promise<Map<string, unknown>> {
    return new Map([...(await this.loadJournal(taskId))].map(([name, step]) => [name, step.value]));
  }

  async loadJournal(taskId: string): Promise<Map<string, StepRecord>> {
    const steps = new Map<string, StepRecord>();
    let startKey: Item | undefined;
    do {
      const page = await this.#client.send(
        new QueryCommand({
          TableName: this.#tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition, '#sk': TABLE_KEYS.sort },
          ExpressionAttributeValues: { ':pk': { S: taskId }, ':prefix': { S: STEP_SK_PREFIX } },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        const position = item['position']?.N;
        steps.set(readString(item, TABLE_KEYS.sort).slice(STEP_SK_PREFIX.length), {
          value: stepValue(item),
          ...(position === undefined ? {} : { position: Number(position) }),
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return steps;
  }

  async saveStep(taskId: string, name: string, value: unknown, now: number, position?: number): Promise<unknown> {
    const stepKey = { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: stepSortKey(name) } };
    const text = JSON.stringify(value);
    const item: Item = {
      ...stepKey,
      [TTL_ATTRIBUTE]: number(Math.ceil((now + this.#policy.stepRetentionMs) / 1000)),
      // `undefined` (a step that returns nothing) is stored as no `value` at all.
      ...(text === undefined ? {} : { value: { S: text } }),
      // Checkpoints written before positions existed have none: they replay by name only.
      ...(position === undefined ? {} : { position: number(position) }),
    };
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      if (await this.#put(item, 'attribute_not_exists(#sk)', { '#sk': TABLE_KEYS.sort })) return stepValue(item);
      // Another run recorded it first: its value is the one to go on with.
      const { Item: stored } = await this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: stepKey, ConsistentRead: true }));
      if (stored) return stepValue(stored);
    }
    throw new Error(`Step ${name} of task ${taskId} could be neither written nor read`);
  }

  async findDue(now: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const shards = Array.from({ length: ACTIVE_SHARD_COUNT }, (_, index) => `s${index}`);
    const due = (await Promise.all(shards.map((shard) => this.#dueIn(shard, now, limit)))).flat();
    return due
      .sort((a, b) => a.sweepAt - b.sweepAt)
      .slice(0, limit)
      .map((entry) => entry.taskId);
  }

  async reschedule(taskId: string, now: number, nextAt: number): Promise<boolean> {
    // A blind write of what `decideReschedule` decides; the condition is the
    // `isDueToRun` rule (a row has `activeShard` exactly when it has `sweepAt`;
    // waiting tasks are on the index too, at their wait's deadline).
    const item = await this.#update(taskId, {
      set: { sweepAt: number(nextAt) },
      condition: 'attribute_exists(#activeShard) AND #sweepAt <= :now AND #status = :working',
      values: { ':now': number(now), ':working': { S: 'working' } },
    });
    return item !== undefined;
  }

  async expireWait(taskId: string, error: JsonRpcErrorObject, statusMessage: string, now: number): Promise<TaskRecord | undefined> {
    return this.#rewrite(taskId, (task) => decideExpireWait(task, error, statusMessage, now, this.#policy));
  }

  // --- creation with an idempotency key ---------------------------------------

  /**
   * `create` with an idempotency key: the key item (naming the task id and the
   * call's fingerprint) is written first, then the row. A call that finds the
   * key taken returns the task it names, writing the row itself when the call
   * that took the key died before doing so.
   */
  async #createOnce(record: WorkingTask, idempotencyKey: string, now: number): Promise<{ task: TaskRecord; created: boolean }> {
    const keyPk = IDEMPOTENCY_PK_PREFIX + sha256(`${record.owner}\u0000${idempotencyKey}`);
    const fingerprint = fingerprintOf(record);
    const keyItem: Item = {
      [TABLE_KEYS.partition]: { S: keyPk },
      [TABLE_KEYS.sort]: { S: IDEMPOTENCY_SK },
      taskId: { S: record.taskId },
      fingerprint: { S: fingerprint },
      createdAt: number(now),
      [TTL_ATTRIBUTE]: number(Math.ceil((now + this.#policy.retentionMs + IDEMPOTENCY_GRACE_MS) / 1000)),
    };
    const names = { '#pk': TABLE_KEYS.partition, '#expiresAt': TTL_ATTRIBUTE };
    // DynamoDB deletes expired items late: an expired key is as good as none.
    const nowSeconds = { ':nowSeconds': number(Math.floor(now / 1000)) };

    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      if (await this.#put(keyItem, 'attribute_not_exists(#pk) OR #expiresAt <= :nowSeconds', names, nowSeconds)) {
        return this.#putRowOrFind(record, fingerprint);
      }
      const { Item: earlier } = await this.#client.send(
        new GetItemCommand({
          TableName: this.#tableName,
          Key: { [TABLE_KEYS.partition]: { S: keyPk }, [TABLE_KEYS.sort]: { S: IDEMPOTENCY_SK } },
          ConsistentRead: true,
        }),
      );
      if (!earlier || readNumber(earlier, TTL_ATTRIBUTE) * 1000 <= now) continue;
      if (readString(earlier, 'fingerprint') !== fingerprint) throw new IdempotencyConflictError();
      const earlierTaskId = readString(earlier, 'taskId');

      if (now < readNumber(earlier, 'createdAt') + this.#policy.retentionMs) {
        // The first task cannot have expired yet (a row lives at least
        // `retentionMs`): if its row is missing, the call that took the key
        // died before writing it, and this call writes it instead.
        return this.#putRowOrFind({ ...record, taskId: earlierTaskId }, fingerprint);
      }
      const item = await this.#readItem(earlierTaskId);
      const existing = item && visible(fromItem(item), record.owner, now);
      if (existing && item) return { task: await this.#withResult(existing, item), created: false };
      // The first task has expired: the key starts over with this call's task.
      const replaced = await this.#put(keyItem, '#taskId = :earlierTaskId', { '#taskId': 'taskId' }, { ':earlierTaskId': { S: earlierTaskId } });
      if (replaced) return this.#putRowOrFind(record, fingerprint);
    }
    throw new Error(`Idempotency key of task ${record.taskId} kept changing: gave up after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * Writes the row of a task whose idempotency key names it. When the row
   * exists already, it is the same call's task (written by a concurrent
   * retry) unless owner or fingerprint differ, which is a task id collision.
   */
  async #putRowOrFind(record: WorkingTask, fingerprint: string): Promise<{ task: TaskRecord; created: boolean }> {
    if (await this.#putRow(record)) return { task: fromItem(toItem(record)), created: true };
    const item = await this.#readItem(record.taskId);
    const existing = item && fromItem(item);
    if (!item || !existing || existing.owner !== record.owner || fingerprintOf(existing) !== fingerprint) {
      throw new Error('Task id collision');
    }
    return { task: await this.#withResult(existing, item), created: false };
  }

  // --- items -------------------------------------------------------------------

  /** The row, if absent: false when a row with this task id exists. */
  #putRow(record: TaskRecord): Promise<boolean> {
    return this.#put(toItem(record), 'attribute_not_exists(#pk)', { '#pk': TABLE_KEYS.partition });
  }

  /** One conditional `PutItem`; false when the condition failed. */
  async #put(item: Item, condition: string, names: Record<string, string>, values?: Item): Promise<boolean> {
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw rejection(error, item[TABLE_KEYS.partition]?.S ?? '');
    }
  }

  /** One strongly consistent read of the task row, whoever owns it and however old it is. */
  async #readItem(taskId: string): Promise<Item | undefined> {
    const { Item: item } = await this.#client.send(
      new GetItemCommand({ TableName: this.#tableName, Key: rowKey(taskId), ConsistentRead: true }),
    );
    return item;
  }

  /** `task` read from `item`, with its result put together from its chunks when the row only points to them. */
  async #withResult(task: TaskRecord, item: Item): Promise<TaskRecord> {
    const ref = item[RESULT_REF]?.M;
    if (task.status !== 'completed' || !ref) return task;
    const id = readString(ref, 'id');
    const count = readNumber(ref, 'chunks');
    const keys = Array.from({ length: count }, (_, index) => chunkKey(task.taskId, id, index));
    const found = new Map<string, Uint8Array>();
    for (const item of await this.#batchGet(keys)) {
      const data = item['data']?.B;
      if (data) found.set(readString(item, TABLE_KEYS.sort), data);
    }
    const parts = keys.map((key) => found.get(key[TABLE_KEYS.sort]!.S!));
    if (parts.some((part) => part === undefined)) throw new Error(`Task ${task.taskId}: result chunks of ${id} are missing`);
    const text = Buffer.concat(parts as Uint8Array[]).toString('utf8');
    return { ...task, result: JSON.parse(text) as Record<string, unknown> };
  }

  /** Writes `data` as chunk items `result#<id>#<n>`; resolves to the number of chunks. */
  async #putChunks(taskId: string, id: string, data: Buffer, expiresAt: number): Promise<number> {
    const count = Math.max(1, Math.ceil(data.length / RESULT_CHUNK_BYTES));
    const requests: WriteRequest[] = Array.from({ length: count }, (_, index) => ({
      PutRequest: {
        Item: {
          ...chunkKey(taskId, id, index),
          data: { B: data.subarray(index * RESULT_CHUNK_BYTES, (index + 1) * RESULT_CHUNK_BYTES) },
          [TTL_ATTRIBUTE]: number(expiresAt),
        },
      },
    }));
    for (let start = 0; start < requests.length; start += 25) {
      let pending: WriteRequest[] = requests.slice(start, start + 25);
      for (let idle = 0; pending.length > 0; ) {
        const { UnprocessedItems } = await this.#client.send(new BatchWriteItemCommand({ RequestItems: { [this.#tableName]: pending } }));
        const left = UnprocessedItems?.[this.#tableName] ?? [];
        idle = left.length < pending.length ? 0 : idle + 1;
        if (idle >= MAX_IDLE_BATCH_ROUNDS) throw new Error(`Task ${taskId}: result chunks could not be written`);
        if (idle > 0) await backoff(idle);
        pending = left;
      }
    }
    return count;
  }

  /** Strongly consistent `BatchGetItem` of `keys` (all of this table), repeated for what DynamoDB leaves unprocessed. */
  async #batchGet(keys: Item[]): Promise<Item[]> {
    const items: Item[] = [];
    for (let start = 0; start < keys.length; start += 100) {
      let pending: KeysAndAttributes | undefined = { Keys: keys.slice(start, start + 100), ConsistentRead: true };
      for (let idle = 0; pending?.Keys?.length; ) {
        const requested: number = pending.Keys.length;
        const output: BatchGetItemCommandOutput = await this.#client.send(new BatchGetItemCommand({ RequestItems: { [this.#tableName]: pending } }));
        items.push(...(output.Responses?.[this.#tableName] ?? []));
        pending = output.UnprocessedKeys?.[this.#tableName];
        idle = (pending?.Keys?.length ?? 0) < requested ? 0 : idle + 1;
        if (idle >= MAX_IDLE_BATCH_ROUNDS) throw new Error('Result chunks could not be read');
        if (idle > 0) await backoff(idle);
      }
    }
    return items;
  }

  /** The due rows of one index partition, earliest first, at most `limit`. */
  async #dueIn(shard: string, now: number, limit: number): Promise<Array<{ taskId: string; sweepAt: number }>> {
    const due: Array<{ taskId: string; sweepAt: number }> = [];
    let startKey: Item | undefined;
    do {
      const page = await this.#client.send(
        new QueryCommand({
          TableName: this.#tableName,
          IndexName: ACTIVE_INDEX.name,
          KeyConditionExpression: '#shard = :shard AND #sweepAt <= :now',
          ExpressionAttributeNames: { '#shard': ACTIVE_INDEX.partition, '#sweepAt': ACTIVE_INDEX.sort },
          ExpressionAttributeValues: { ':shard': { S: shard }, ':now': number(now) },
          Limit: limit - due.length,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        due.push({ taskId: readString(item, TABLE_KEYS.partition), sweepAt: readNumber(item, ACTIVE_INDEX.sort) });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey && due.length < limit);
    return due;
  }

  /**
   * Read, decide, write `next` only if the row is still the version read;
   * when another writer got in between, decide again on a fresh read. The
   * result of a chunked row is not loaded: terminal rows are never rewritten.
   */
  async #rewrite<T>(
    taskId: string,
    decide: (task: TaskRecord | undefined) => Decision<T>,
    /** A write that needs no version guard for this decision (or `skip`: none at all). */
    unordered?: (current: TaskRecord, decision: Decision<T>) => RowWrite | 'skip' | undefined,
  ): Promise<T> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      if (attempt > 1) await backoff(attempt - 1, true);
      const item = await this.#readItem(taskId);
      const current = item && fromItem(item);
      const decision = decide(current);
      const { result, next } = decision;
      if (!current || !next) return result;
      const own = unordered?.(current, decision);
      if (own === 'skip') return result;
      const write: RowWrite = own ?? { ...changes(current, next), ...versionOf(current) };
      let written: Item | undefined;
      try {
        written = await this.#update(taskId, write);
      } catch (error) {
        if (!(error instanceof TaskRowRejectedError) || !isTerminal(next.status)) throw error;
        // The row cannot take this change (e.g. it is at the size limit):
        // end the task as decided through a write that also slims the row.
        const outcome = next.status === 'failed' ? { status: 'failed' as const, error: next.error } : { status: 'cancelled' as const };
        const message = rejectedMessage(error, next.status === 'cancelled' ? 'it was cancelled' : 'it failed');
        if (await this.#endMinimal(current, outcome, message, next.lastUpdatedAt, versionOf(current))) return result;
        continue;
      }
      if (written) {
        if (isTerminal(next.status)) await this.#freeSlot(current.owner, taskId);
        return result;
      }
    }
    throw new Error(`Task kept changing: gave up after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * Ends a task through the smallest write that can: status, error and
   * message, the TTL attributes, and the client's bulky attributes
   * (arguments, answers, capabilities, outstanding requests, any result)
   * replaced by empty values, which only ever shrinks the row. Used when
   * DynamoDB refused the regular write. Resolves to the ended record, or
   * `undefined` when `guard` failed.
   */
  async #endMinimal(
    task: TaskRecord,
    outcome: { status: 'failed'; error: JsonRpcErrorObject } | { status: 'cancelled' },
    statusMessage: string,
    now: number,
    guard: Pick<RowWrite, 'condition' | 'values'>,
  ): Promise<TaskRecord | undefined> {
    const slim = { ...task, arguments: {}, inputResponses: {}, clientCapabilities: {} } as TaskRecord;
    const next = applyOutcome(slim, { ...outcome, statusMessage }, now, this.#policy.retentionMs);
    const item = toItem(next);
    const set: Item = {};
    for (const name of ['status', 'statusMessage', 'error', 'arguments', 'inputResponses', 'clientCapabilities', 'lastUpdatedAt', 'ttlMs', TTL_ATTRIBUTE, EXPIRES_AT_MS]) {
      if (item[name]) set[name] = item[name];
    }
    const written = await this.#update(task.taskId, {
      set,
      remove: ['leaseOwner', 'leaseUntil', 'inputRequests', 'result', RESULT_REF, ACTIVE_INDEX.sort, ACTIVE_INDEX.partition],
      ...guard,
      returnValues: 'ALL_NEW',
    });
    if (!written) return undefined;
    await this.#freeSlot(task.owner, task.taskId);
    return fromItem(written);
  }

  // --- the cap on unfinished tasks (only with `maxUnfinishedTasks`) -----------

  /**
   * Adds a task to its owner's set of unfinished task ids (one item per
   * owner), unless the set is full. A full set is checked against the rows
   * once: ids of tasks that ended are dropped, which also repairs a slot
   * leaked by a process that died between a task's terminal write and
   * {@link #freeSlot}.
   */
  async #takeSlot(owner: string, taskId: string, now: number): Promise<void> {
    const cap = this.#policy.maxUnfinishedTasks!;
    for (let round = 0; round < 2; round += 1) {
      const taken = await this.#updateItem(slotKey(owner), {
        UpdateExpression: 'ADD #ids :id SET #updatedAt = :now',
        ConditionExpression: 'attribute_not_exists(#ids) OR size(#ids) < :cap OR contains(#ids, :taskId)',
        ExpressionAttributeNames: { '#ids': 'ids', '#updatedAt': 'updatedAt' },
        ExpressionAttributeValues: { ':id': { SS: [taskId] }, ':cap': number(cap), ':taskId': { S: taskId }, ':now': number(now) },
      });
      if (taken) return;
      if (round === 0 && !(await this.#dropEnded(owner, now))) break;
    }
    throw new TooManyTasksError(cap);
  }

  /** Removes ids of ended (or long missing) tasks from an owner's set; whether any was removed. */
  async #dropEnded(owner: string, now: number): Promise<boolean> {
    const { Item: slots } = await this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: slotKey(owner), ConsistentRead: true }));
    const ids = slots?.['ids']?.SS ?? [];
    const rows = new Map((await this.#batchGet(ids.map(rowKey))).map((item) => [readString(item, TABLE_KEYS.partition), item]));
    // A missing row may be a create still in progress, unless the set is older than a minute.
    const settled = slots?.['updatedAt']?.N !== undefined && now - Number(slots['updatedAt'].N) > 60_000;
    const stale = ids.filter((id) => {
      const row = rows.get(id);
      return row ? isTerminal(readString(row, 'status') as TaskStatus) : settled;
    });
    if (stale.length === 0) return false;
    await this.#updateItem(slotKey(owner), { UpdateExpression: 'DELETE #ids :stale', ExpressionAttributeNames: { '#ids': 'ids' }, ExpressionAttributeValues: { ':stale': { SS: stale } } });
    return true;
  }

  /** Frees a task's slot (idempotent; nothing without a cap). */
  async #freeSlot(owner: string, taskId: string): Promise<void> {
    if (this.#policy.maxUnfinishedTasks === undefined) return;
    await this.#updateItem(slotKey(owner), { UpdateExpression: 'DELETE #ids :id', ExpressionAttributeNames: { '#ids': 'ids' }, ExpressionAttributeValues: { ':id': { SS: [taskId] } } });
  }

  /** One conditional `UpdateItem` of any item; false when the condition failed. */
  async #updateItem(
    key: Item,
    update: { UpdateExpression: string; ConditionExpression?: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Item },
  ): Promise<boolean> {
    try {
      await this.#client.send(new UpdateItemCommand({ TableName: this.#tableName, Key: key, ...update }));
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * One conditional `UpdateItem` of the task row that also increments
   * `version`. Resolves to the returned attributes (`{}` without
   * `returnValues`), or `undefined` when the condition failed.
   */
  async #update(taskId: string, write: RowWrite): Promise<Item | undefined> {
    const set = Object.entries(write.set ?? {});
    const assignments = [...set.map(([name]) => `#${name} = :${name}`), ...(write.setExpressions ?? [])];
    const clauses = [
      assignments.length > 0 ? `SET ${assignments.join(', ')}` : '',
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
          Key: rowKey(taskId),
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
      throw rejection(error, taskId);
    }
  }
}

/** A conditional update of the task row, by attribute name (placeholders are derived from the names). */
interface RowWrite {
  /** `SET #name = :name` for each entry. */
  set?: Item;
  /** Further `SET` assignments, written out (their values go in `values`). */
  setExpressions?: readonly string[];
  remove?: readonly string[];
  /** Counters incremented by one besides `version`, which every write increments. */
  increment?: readonly string[];
  /** Attribute names are written `#name`; values are passed in `values`. */
  condition: string;
  values?: Item;
  returnValues?: ReturnValue;
}

/** The condition of every write made under a lease: the `leaseHeld` rule of `transitions.ts` (still ours, and the task not terminal). */
function leaseHeldBy(leaseOwner: string, extraValues: Item = {}): Pick<RowWrite, 'condition' | 'values'> {
  return {
    condition: '#leaseOwner = :leaseOwner AND #status IN (:working, :input_required)',
    values: { ':leaseOwner': { S: leaseOwner }, ':working': { S: 'working' }, ':input_required': { S: 'input_required' }, ...extraValues },
  };
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

function rowKey(taskId: string): Item {
  return { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } };
}

function chunkKey(taskId: string, id: string, index: number): Item {
  return { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: `${RESULT_SK_PREFIX}${id}#${String(index).padStart(4, '0')}` } };
}

/**
 * `step#<name>`. Any well-formed name fits that DynamoDB's sort-key limit
 * (1024 bytes) allows; a name with a lone surrogate would not survive UTF-8
 * and could collide with another, so it is refused like one too long.
 */
function stepSortKey(name: string): string {
  const sortKey = STEP_SK_PREFIX + name;
  if (/\p{Surrogate}/u.test(name) || Buffer.byteLength(sortKey, 'utf8') > 1024) {
    throw new Error('Step names must be well-formed Unicode of at most 1019 bytes (UTF-8)');
  }
  return sortKey;
}

function stepValue(item: Item): unknown {
  const text = item['value']?.S;
  return text === undefined ? undefined : JSON.parse(text);
}

/** The active-index partition of a task: spread by a hash of its id. */
export function activeShardOf(taskId: string): string {
  return `s${createHash('sha256').update(taskId).digest()[0]! % ACTIVE_SHARD_COUNT}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What an idempotency key is bound to: the tool and its arguments. */
function fingerprintOf(task: Pick<TaskBase, 'tool' | 'arguments'>): string {
  return sha256(JSON.stringify([task.tool, task.arguments]));
}

function backoff(round: number, jitter = false): Promise<void> {
  const ceiling = Math.min(1000, 25 * 2 ** round);
  return new Promise((resolve) => setTimeout(resolve, jitter ? Math.random() * ceiling : ceiling));
}

/** The error a task ends with when DynamoDB refuses its row. */
const ROW_REJECTED_ERROR = { code: -32603, message: 'Internal error' } as const;

/**
 * DynamoDB's refusal of a write as a domain error: `ValidationException`
 * (item too large, or an invalid value) can never succeed on a retry.
 */
function rejection(error: unknown, taskId: string): unknown {
  if (!(error instanceof Error) || error.name !== 'ValidationException') return error;
  return new TaskRowRejectedError(taskId, /item size/i.test(error.message) ? 'size' : 'validation');
}

/** The `statusMessage` of a task ended through the minimal write. */
function rejectedMessage(error: TaskRowRejectedError, when: string): string {
  return error.reason === 'size'
    ? `The task row reached DynamoDB's item size limit when ${when}: its arguments and answers were removed to record this ending`
    : `DynamoDB rejected the task row when ${when}: its arguments and answers were removed to record this ending`;
}

/** Guard of a write on the version read (as `#rewrite`'s own writes). */
function versionOf(task: TaskRecord): Pick<RowWrite, 'condition' | 'values'> {
  return {
    condition: '#version = :readVersion AND #status = :readStatus',
    values: { ':readVersion': number(task.version), ':readStatus': { S: task.status } },
  };
}

/** The item listing an owner's unfinished task ids (only with a cap). */
function slotKey(owner: string): Item {
  return { [TABLE_KEYS.partition]: { S: `${SLOTS_PK_PREFIX}${sha256(owner)}` }, [TABLE_KEYS.sort]: { S: SLOTS_SK } };
}

/** The size of a task's row (DynamoDB's rules, slightly overestimated): what the size budgets are measured with. */
export function taskRowBytes(task: TaskRecord): number {
  return itemBytes(toItem(task));
}

/**
 * DynamoDB's size of an item (names plus values, UTF-8), slightly
 * overestimated for numbers and containers.
 */
function itemBytes(item: Item): number {
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

function number(value: number): AttributeValue {
  return { N: String(value) };
}

function json(value: unknown): AttributeValue {
  return { S: JSON.stringify(value) };
}

/**
 * The task row: scalars as native types, structured values as JSON text.
 * Only terminal rows carry the TTL attribute; only rows with a `sweepAt`
 * (working ones) carry the active-index attributes.
 */
function toItem(task: TaskRecord): Item {
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
  }
  if (task.sweepAt !== undefined) {
    item[ACTIVE_INDEX.partition] = { S: activeShardOf(task.taskId) };
    item[ACTIVE_INDEX.sort] = number(task.sweepAt);
  }
  if (task.statusMessage !== undefined) item['statusMessage'] = { S: task.statusMessage };
  if (task.lease) {
    item['leaseOwner'] = { S: task.lease.owner };
    item['leaseUntil'] = number(task.lease.until);
  }
  if (task.toolVersion !== undefined) item['toolVersion'] = { S: task.toolVersion };
  if (task.questions !== undefined) item['questions'] = json(task.questions);
  if (task.progressMark !== undefined) item['progressMark'] = number(task.progressMark);
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
  if (item[ACTIVE_INDEX.sort]) base.sweepAt = readNumber(item, ACTIVE_INDEX.sort);
  // Rows written before these attributes existed lack them: no version, no recorded questions, no mark.
  if (item['toolVersion']) base.toolVersion = readString(item, 'toolVersion');
  if (item['questions']) base.questions = readJson(item, 'questions');
  if (item['progressMark']) base.progressMark = readNumber(item, 'progressMark');

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

function readString(item: Item, name: string): string {
  const value = item[name]?.S;
  if (value === undefined) throw new Error(`Attribute ${name} is missing or not a string`);
  return value;
}

function readNumber(item: Item, name: string): number {
  const value = item[name]?.N;
  if (value === undefined) throw new Error(`Attribute ${name} is missing or not a number`);
  return Number(value);
}

function readJson<T>(item: Item, name: string): T {
  return JSON.parse(readString(item, name)) as T;
}
