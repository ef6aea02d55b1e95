/**
 * The task table's physical layout, shared by the DynamoDB adapter, the local
 * stack (which creates the table) and the CDK stack (which declares it).
 *
 * One table: `pk` = task id; `sk` = `task` for the task row itself (later
 * item kinds of a task use other sort keys). `expiresAt` (epoch seconds) is
 * the table's TTL attribute. DynamoDB deletes lazily, so reads do not rely on
 * it: a task row's expiry is decided from its `createdAt + ttlMs`
 * (`isExpired`), and an idempotency key is checked against its `expiresAt`.
 */
export const TABLE_KEYS = { partition: 'pk', sort: 'sk' } as const;
export const TTL_ATTRIBUTE = 'expiresAt';
export const TASK_ROW_SK = 'task';

/**
 * Sparse index of non-terminal tasks, for the sweeper: only rows that carry
 * `activeShard` appear in it (the attribute is removed when a task ends), so
 * finding stuck work never scans the table. `sweepAt` (epoch ms) orders rows
 * by when they are next due for a look.
 */
export const ACTIVE_INDEX = { name: 'active-tasks', partition: 'activeShard', sort: 'sweepAt' } as const;

/**
 * How many partitions of the active-task index the rows are spread over
 * unless the deployment says otherwise (`-c activeIndexShards=N`, the
 * functions' `TASKS_ACTIVE_INDEX_SHARDS`): `activeShard` = `s0` … `s<n-1>`,
 * from a hash of the task id, and `findDue` queries each of them. Each index
 * partition takes about 1,000 writes a second, and a task makes two (enter,
 * leave): four shards serve about 2,000 task creations a second.
 *
 * The names are prefix-stable: the shards of a count are the first shards of
 * every larger count. So the count may grow at any time: the readers, which
 * follow the new count, also read every shard the old count wrote (a row
 * keeps its shard until it leaves the index; its next full write may move
 * it). Lowering the count would hide the rows in the dropped shards from
 * the sweeper: don't.
 */
export const DEFAULT_ACTIVE_INDEX_SHARDS = 4;

/** The most index shards a deployment may ask for: 64,000 index writes a second, ~32,000 task creations. */
export const MAX_ACTIVE_INDEX_SHARDS = 64;

/** The index partitions a store with `count` shards writes and its readers query: `s0` … `s<count-1>`. */
export function activeShards(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `s${index}`);
}

/**
 * The list index: entries a person's pages list, newest first. Its keys are
 * generic so that every kind of entry a page lists shares this one index (a
 * table takes one new index per CloudFormation update): `listKey` names the
 * list (`owner#<hash of the principal>` for the tasks a principal owns,
 * `owner#<hash>#s<n>` for the one principal that owns every task of an open
 * endpoint), `listSort` orders it (`<createdAt, 15 digits>#<task id>`).
 *
 * Keys only, and both keys are written once, by the put that creates the
 * row, and never change: no later write of the row touches the index, so a
 * task costs it one write in its whole life (DynamoDB writes an index only
 * when a write adds, changes or removes its keys or projected attributes).
 * A page of entries is read in one query per list partition and its rows in
 * one `BatchGetItem`. Rows written before the index existed carry no
 * `listKey` and are simply not listed.
 */
export const LIST_INDEX = { name: 'ListIndex', partition: 'listKey', sort: 'listSort' } as const;

/** Sort-key prefixes of the items a task keeps besides its row (`sk = 'task'`). */
export const STEP_SK_PREFIX = 'step#';
export const RESULT_SK_PREFIX = 'result#';

/** Partition-key prefix and sort key of idempotency-key items. */
export const IDEMPOTENCY_PK_PREFIX = 'idem#';
export const IDEMPOTENCY_SK = 'idem';

/** Partition-key prefix and sort key of a principal's sign-out record (the console's, `sign-outs.ts`). */
export const SIGN_OUT_PK_PREFIX = 'sign-out#';
export const SIGN_OUT_SK = 'sign-out';

/** Partition-key prefix and sort key of a principal's name from their last console sign-in (`sign-in-names.ts`). */
export const SIGN_IN_NAME_PK_PREFIX = 'sign-in-name#';
export const SIGN_IN_NAME_SK = 'sign-in-name';

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

/**
 * `createdAt + ttlMs` in epoch milliseconds, on terminal rows only (next to
 * `expiresAt`, which is rounded up to whole seconds for DynamoDB's TTL).
 * Written for operators and queries only: the store itself never reads it.
 */
export const EXPIRES_AT_MS = 'expiresAtMs';

/** Where a chunked result lives: `{ id, chunks }` (a map attribute). */
export const RESULT_REF = 'resultRef';

/** Optional attributes a write removes when the new record lacks them (`statusMessage` is never cleared). */
export const CLEARABLE = [
  'leaseOwner',
  'leaseUntil',
  'inputRequests',
  'result',
  'error',
  'sweepAt',
  'callbackWait',
  ACTIVE_INDEX.partition,
] as const;
