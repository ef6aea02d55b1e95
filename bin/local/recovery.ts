import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Log } from '../../shared/log.ts';
import { MAX_DELAY_SECONDS, type TaskQueue } from '../../shared/queue/queue.ts';
import {
  ACTIVE_INDEX,
  type ActiveIndexEntry,
  activeIndexEntries,
  activeShardOf,
  activeShards,
  TABLE_KEYS,
  TASK_ROW_SK,
} from '../../shared/tasks/dynamodb/index.ts';
import { removeEntry, repairListIndex } from './index-repair.ts';

type Item = Record<string, AttributeValue>;

export interface RecoveryOptions {
  client: DynamoDBClient;
  tableName: string;
  queue: TaskQueue;
  /** W = `leaseMs + sweepGraceMs`, the store's sweep window (`release` puts `sweepAt` at `resumeAt + W`). */
  sweepWindowMs: number;
  /** The functions' `TASKS_ACTIVE_INDEX_SHARDS`: the index partitions to read, and the ones rows are put in. */
  activeIndexShards: number;
  now: number;
  log: Log;
}

export interface RecoveryReport {
  /** Working tasks put back on the (empty) queue, at once or at their wake-up time. */
  requeued: number;
  /** Of those, how many were due later (sleepers, retries with a backoff). */
  delayed: number;
  /** Leases held by a previous life of the stack, voided. */
  voidedLeases: number;
  /** Terminal rows that still carried index attributes, removed. */
  staleIndexAttributes: number;
  /** Index entries that named no row (or a row that does not carry that key), removed. */
  orphansRemoved: number;
  /** Entries of the list index (owners' lists, the approvers' list) that named no item carrying their keys, removed. */
  listOrphansRemoved: number;
  /** Items carrying list keys that were missing from the list index, put back. */
  listEntriesRestored: number;
}

/**
 * What the local stack does at start-up, before it serves anything. Its queue
 * is fauxqs' memory, so it is empty now, whatever the table says:
 *
 * - every `working` task is put back on the queue: at once when it was queued
 *   or running, at its wake-up time when it was sleeping or backing off
 *   (`sweepAt − W` is the `resumeAt` its last hand-over named);
 * - a lease in the table was taken by a previous life of the stack (nothing of
 *   this one runs yet): it is voided in the same write, which also moves
 *   `sweepAt` one window past the resume time, so the sweeper does not send the
 *   task a second time;
 * - the table is reconciled with its sparse index. dynalite writes an item's
 *   index entries and then the item as separate operations, and a kill between
 *   them leaves a row missing from the index (never swept) or an orphan entry
 *   (which no API call names, and which sorts first for the sweeper). Every
 *   write of a row re-puts its current entry, so the working rows' rewrite
 *   above repairs the first kind, and a row that should not be indexed any more
 *   loses its stale attributes. An orphan is removed by writing its row with
 *   the orphan's key and then back (dynalite drops the entry of a key that
 *   changes): the emulator is repaired through its own API, not patched;
 * - the list index likewise (`index-repair.ts`): the owners' lists and the
 *   approvers' list lose their orphan entries and get their missing ones back.
 *
 * Local only, and a table scan: deployed stacks have a durable queue, and
 * DynamoDB maintains its indexes itself. Running it again is harmless.
 */
export async function recoverAtStart(options: RecoveryOptions): Promise<RecoveryReport> {
  const { client, tableName, now, log } = options;
  const report: RecoveryReport = {
    requeued: 0,
    delayed: 0,
    voidedLeases: 0,
    staleIndexAttributes: 0,
    orphansRemoved: 0,
    listOrphansRemoved: 0,
    listEntriesRestored: 0,
  };

  const rows = await scanTaskRows(client, tableName);
  for (const entry of await indexEntries(client, tableName, options.activeIndexShards)) {
    const row = rows.get(entry.taskId);
    if (
      row &&
      entry.sortKey === TASK_ROW_SK &&
      row[ACTIVE_INDEX.partition]?.S === entry.shard &&
      row[ACTIVE_INDEX.sort]?.N === String(entry.sweepAt)
    )
      continue;
    const key = { [TABLE_KEYS.partition]: { S: entry.taskId }, [TABLE_KEYS.sort]: { S: entry.sortKey } };
    await removeEntry(client, tableName, ACTIVE_INDEX, { key, partition: { S: entry.shard }, sort: { N: String(entry.sweepAt) } });
    report.orphansRemoved += 1;
    log({ event: 'recovery-orphan-removed', index: ACTIVE_INDEX.name, taskId: entry.taskId });
  }

  for (const [taskId, row] of rows) {
    const status = row['status']?.S;
    if (status === 'input_required') {
      // A wait is on the index until its deadline (rows from before deadlines are not):
      // rewriting the same key re-puts an entry a torn write may have lost. Nothing to enqueue.
      const shard = row[ACTIVE_INDEX.partition];
      const deadline = row[ACTIVE_INDEX.sort];
      if (shard && deadline)
        await update(client, tableName, taskId, row, 'SET #activeShard = :shard, #sweepAt = :sweepAt', {
          ':shard': shard,
          ':sweepAt': deadline,
        });
      continue;
    }
    if (status !== 'working') {
      // Terminal: off the index. Attributes left by a torn write (or by an orphan's removal cut short) go.
      if (row[ACTIVE_INDEX.partition] || row[ACTIVE_INDEX.sort]) {
        await update(client, tableName, taskId, row, 'REMOVE #activeShard, #sweepAt', {});
        report.staleIndexAttributes += 1;
      }
      continue;
    }
    const indexedAt = row[ACTIVE_INDEX.sort]?.N;
    const sweepAt = indexedAt === undefined ? undefined : Number(indexedAt);
    const leased = row['leaseOwner'] !== undefined;
    // A leased task was running: resume at once. Otherwise its last hand-over
    // (or creation, or answer) placed `sweepAt` one window past its resume time.
    const resumeAt = leased || sweepAt === undefined ? now : Math.max(now, sweepAt - options.sweepWindowMs);
    const written = await update(
      client,
      tableName,
      taskId,
      row,
      `SET #activeShard = :shard, #sweepAt = :sweepAt${leased ? ' REMOVE #leaseOwner, #leaseUntil' : ''}`,
      { ':shard': { S: activeShardOf(taskId, options.activeIndexShards) }, ':sweepAt': { N: String(resumeAt + options.sweepWindowMs) } },
    );
    if (!written) continue; // changed since the scan: whoever changed it owns it
    if (leased) report.voidedLeases += 1;
    const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.ceil((resumeAt - now) / 1000));
    await options.queue.send({ taskId, reason: 'sweep' }, delaySeconds > 0 ? { delaySeconds } : undefined);
    report.requeued += 1;
    if (delaySeconds > 0) report.delayed += 1;
    log({ event: 'recovered', taskId, ...(leased ? { voidedLease: true } : {}), ...(delaySeconds > 0 ? { delaySeconds } : {}) });
  }
  const listed = await repairListIndex(client, tableName, log);
  return { ...report, listOrphansRemoved: listed.orphansRemoved, listEntriesRestored: listed.restored };
}

/** The task rows (`sk = 'task'`), by task id: one scan, local tables are small. */
async function scanTaskRows(client: DynamoDBClient, tableName: string): Promise<Map<string, Item>> {
  const rows = new Map<string, Item>();
  let startKey: Item | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: '#sk = :task',
        ExpressionAttributeNames: { '#sk': TABLE_KEYS.sort },
        ExpressionAttributeValues: { ':task': { S: TASK_ROW_SK } },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) rows.set(item[TABLE_KEYS.partition]!.S!, item);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows;
}

/** An entry of the active-task index, with the shard it is in. */
interface IndexEntry extends ActiveIndexEntry {
  shard: string;
}

/** Every entry of the active-task index, as the index itself holds them (no bound on `sweepAt`, no limit). */
async function indexEntries(client: DynamoDBClient, tableName: string, shards: number): Promise<IndexEntry[]> {
  const entries: IndexEntry[] = [];
  for (const shard of activeShards(shards)) {
    for (const entry of await activeIndexEntries({ client, tableName }, shard)) entries.push({ ...entry, shard });
  }
  return entries;
}

/** One write of a task row, guarded by the `version` scanned (and incrementing it); false when the row changed since. */
async function update(
  client: DynamoDBClient,
  tableName: string,
  taskId: string,
  row: Item,
  expression: string,
  values: Item,
): Promise<boolean> {
  const names: Record<string, string> = { '#version': 'version' };
  for (const [, name] of expression.matchAll(/#(\w+)/g)) names[`#${name}`] = name!;
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } },
        UpdateExpression: `${expression} ADD #version :one`,
        ConditionExpression: '#version = :read',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ':one': { N: '1' }, ':read': row['version'] ?? { N: '0' } },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
