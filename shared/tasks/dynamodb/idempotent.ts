/**
 * `create` with an idempotency key, on DynamoDB: a key item of its own
 * (`idem#<hash>`) names the task the first call created.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { TaskRecord, WorkingTask } from '../model.ts';
import { visible } from '../predicates.ts';
import { IdempotencyConflictError } from '../store-errors.ts';
import { fingerprintOf, fromItem, type Item, number, readNumber, readString, sha256, toItem } from './codec.ts';
import { readRow, withResult } from './results.ts';
import { IDEMPOTENCY_GRACE_MS, IDEMPOTENCY_PK_PREFIX, IDEMPOTENCY_SK, TABLE_KEYS, TTL_ATTRIBUTE } from './schema.ts';
import { MAX_ATTEMPTS, putItem, putRow, type StoreTable, shardsOf } from './update.ts';

/**
 * `create` with an idempotency key: the key item (naming the task id and the
 * call's fingerprint) is written first, then the row. A call that finds the
 * key taken returns the task it names, writing the row itself when the call
 * that took the key died before doing so.
 */
export async function createOnce(
  table: StoreTable,
  record: WorkingTask,
  idempotencyKey: string,
  now: number,
): Promise<{ task: TaskRecord; created: boolean }> {
  const keyPk = IDEMPOTENCY_PK_PREFIX + sha256(`${record.owner}\u0000${idempotencyKey}`);
  const fingerprint = fingerprintOf(record);
  const keyItem: Item = {
    [TABLE_KEYS.partition]: { S: keyPk },
    [TABLE_KEYS.sort]: { S: IDEMPOTENCY_SK },
    taskId: { S: record.taskId },
    fingerprint: { S: fingerprint },
    createdAt: number(now),
    [TTL_ATTRIBUTE]: number(Math.ceil((now + table.policy.retentionMs + IDEMPOTENCY_GRACE_MS) / 1000)),
  };
  const names = { '#pk': TABLE_KEYS.partition, '#expiresAt': TTL_ATTRIBUTE };
  // DynamoDB deletes expired items late: an expired key is as good as none.
  const nowSeconds = { ':nowSeconds': number(Math.floor(now / 1000)) };

  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    if (await putItem(table, keyItem, 'attribute_not_exists(#pk) OR #expiresAt <= :nowSeconds', names, nowSeconds)) {
      return putRowOrFind(table, record, fingerprint);
    }
    const { Item: earlier } = await table.client.send(
      new GetItemCommand({
        TableName: table.tableName,
        Key: { [TABLE_KEYS.partition]: { S: keyPk }, [TABLE_KEYS.sort]: { S: IDEMPOTENCY_SK } },
        ConsistentRead: true,
      }),
    );
    if (!earlier || readNumber(earlier, TTL_ATTRIBUTE) * 1000 <= now) continue;
    if (readString(earlier, 'fingerprint') !== fingerprint) throw new IdempotencyConflictError();
    const earlierTaskId = readString(earlier, 'taskId');

    if (now < readNumber(earlier, 'createdAt') + table.policy.retentionMs) {
      // The first task cannot have expired yet (a row lives at least
      // `retentionMs`): if its row is missing, the call that took the key
      // died before writing it, and this call writes it instead.
      return putRowOrFind(table, { ...record, taskId: earlierTaskId }, fingerprint);
    }
    const item = await readRow(table, earlierTaskId);
    const existing = item && visible(fromItem(item), record.owner, now);
    if (existing && item) return { task: await withResult(table, existing, item), created: false };
    // The first task has expired: the key starts over with this call's task.
    const replaced = await putItem(
      table,
      keyItem,
      '#taskId = :earlierTaskId',
      { '#taskId': 'taskId' },
      { ':earlierTaskId': { S: earlierTaskId } },
    );
    if (replaced) return putRowOrFind(table, record, fingerprint);
  }
  throw new Error(`Idempotency key of task ${record.taskId} kept changing: gave up after ${MAX_ATTEMPTS} attempts`);
}

/**
 * Writes the row of a task whose idempotency key names it. When the row
 * exists already, it is the same call's task (written by a concurrent
 * retry) unless owner or fingerprint differ, which is a task id collision.
 */
async function putRowOrFind(table: StoreTable, record: WorkingTask, fingerprint: string): Promise<{ task: TaskRecord; created: boolean }> {
  if (await putRow(table, record)) return { task: fromItem(toItem(record, shardsOf(table.policy))), created: true };
  const item = await readRow(table, record.taskId);
  const existing = item && fromItem(item);
  if (!item || !existing || existing.owner !== record.owner || fingerprintOf(existing) !== fingerprint) {
    throw new Error('Task id collision');
  }
  return { task: await withResult(table, existing, item), created: false };
}
