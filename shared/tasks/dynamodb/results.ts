/**
 * Reading task rows, and results too large for their row: those are kept
 * in chunk items (`result#<id>#<n>`) written and read in batches, repeated
 * for whatever DynamoDB leaves unprocessed.
 */
import {
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  BatchWriteItemCommand,
  GetItemCommand,
  type KeysAndAttributes,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import type { TaskRecord } from '../model.ts';
import { chunkKey, type Item, number, readNumber, readString, rowKey } from './codec.ts';
import { RESULT_CHUNK_BYTES, RESULT_REF, TABLE_KEYS, TTL_ATTRIBUTE } from './schema.ts';
import { backoff, type StoreTable } from './update.ts';

/** How often a batch call is repeated for items DynamoDB left unprocessed without any progress. */
const MAX_IDLE_BATCH_ROUNDS = 8;

/** One strongly consistent read of the task row, whoever owns it and however old it is. */
export async function readRow(table: StoreTable, taskId: string): Promise<Item | undefined> {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: rowKey(taskId), ConsistentRead: true }),
  );
  return item;
}

/** `task` read from `item`, with its result put together from its chunks when the row only points to them. */
export async function withResult(table: StoreTable, task: TaskRecord, item: Item): Promise<TaskRecord> {
  const ref = item[RESULT_REF]?.M;
  if (task.status !== 'completed' || !ref) return task;
  const id = readString(ref, 'id');
  const count = readNumber(ref, 'chunks');
  const keys = Array.from({ length: count }, (_, index) => chunkKey(task.taskId, id, index));
  const found = new Map<string, Uint8Array>();
  for (const item of await batchGet(table, keys)) {
    const data = item['data']?.B;
    if (data) found.set(readString(item, TABLE_KEYS.sort), data);
  }
  const parts = keys.map((key) => found.get(key[TABLE_KEYS.sort]!.S!));
  if (parts.some((part) => part === undefined)) throw new Error(`Task ${task.taskId}: result chunks of ${id} are missing`);
  const text = Buffer.concat(parts as Uint8Array[]).toString('utf8');
  return { ...task, result: JSON.parse(text) as Record<string, unknown> };
}

/** Writes `data` as chunk items `result#<id>#<n>`; resolves to the number of chunks. */
export async function putChunks(table: StoreTable, taskId: string, id: string, data: Buffer, expiresAt: number): Promise<number> {
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
      const { UnprocessedItems } = await table.client.send(new BatchWriteItemCommand({ RequestItems: { [table.tableName]: pending } }));
      const left = UnprocessedItems?.[table.tableName] ?? [];
      idle = left.length < pending.length ? 0 : idle + 1;
      if (idle >= MAX_IDLE_BATCH_ROUNDS) throw new Error(`Task ${taskId}: result chunks could not be written`);
      if (idle > 0) await backoff(idle);
      pending = left;
    }
  }
  return count;
}

/**
 * `BatchGetItem` of `keys` (all of this table), repeated for what DynamoDB
 * leaves unprocessed: strongly consistent unless `consistent` is false (half
 * the read units, for reads that may lag a write by a moment).
 */
export async function batchGet(table: StoreTable, keys: Item[], consistent = true): Promise<Item[]> {
  const items: Item[] = [];
  for (let start = 0; start < keys.length; start += 100) {
    let pending: KeysAndAttributes | undefined = { Keys: keys.slice(start, start + 100), ConsistentRead: consistent };
    for (let idle = 0; pending?.Keys?.length; ) {
      const requested: number = pending.Keys.length;
      const output: BatchGetItemCommandOutput = await table.client.send(
        new BatchGetItemCommand({ RequestItems: { [table.tableName]: pending } }),
      );
      items.push(...(output.Responses?.[table.tableName] ?? []));
      pending = output.UnprocessedKeys?.[table.tableName];
      idle = (pending?.Keys?.length ?? 0) < requested ? 0 : idle + 1;
      if (idle >= MAX_IDLE_BATCH_ROUNDS) throw new Error('Batch read could not be completed');
      if (idle > 0) await backoff(idle);
    }
  }
  return items;
}
