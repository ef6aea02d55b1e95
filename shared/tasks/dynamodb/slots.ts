/**
 * The cap on unfinished tasks per owner (only with `maxUnfinishedTasks`):
 * one item per owner (`slots#<hash>`) lists the ids of its unfinished tasks.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { isTerminal, type TaskStatus } from '../model.ts';
import { TooManyTasksError } from '../store-errors.ts';
import { type Item, number, readNumber, readString, rowKey, slotKey } from './codec.ts';
import { batchGet } from './results.ts';
import { TABLE_KEYS } from './schema.ts';
import { type StoreTable, updateItem } from './update.ts';

/**
 * Adds a task to its owner's set of unfinished task ids (one item per
 * owner), unless the set is full. A full set is checked against the rows
 * once: ids of tasks that ended are dropped, which also repairs a slot
 * leaked by a process that died between a task's terminal write and
 * {@link freeSlot}.
 */
export async function takeSlot(table: StoreTable, owner: string, taskId: string, now: number): Promise<void> {
  const cap = table.policy.maxUnfinishedTasks!;
  let unfinished: Item[] = [];
  for (let round = 0; round < 2; round += 1) {
    const taken = await updateItem(table, slotKey(owner), {
      UpdateExpression: 'ADD #ids :id SET #updatedAt = :now',
      ConditionExpression: 'attribute_not_exists(#ids) OR size(#ids) < :cap OR contains(#ids, :taskId)',
      ExpressionAttributeNames: { '#ids': 'ids', '#updatedAt': 'updatedAt' },
      ExpressionAttributeValues: { ':id': { SS: [taskId] }, ':cap': number(cap), ':taskId': { S: taskId }, ':now': number(now) },
    });
    if (taken) return;
    if (round > 0) break;
    const checked = await dropEnded(table, owner, now);
    unfinished = checked.unfinished;
    if (!checked.dropped) break;
  }
  throw new TooManyTasksError(
    cap,
    unfinished.map((row) => readNumber(row, 'pollIntervalMs')),
  );
}

/** Removes ids of ended (or long missing) tasks from an owner's set: whether any was removed, and the rows of the others. */
async function dropEnded(table: StoreTable, owner: string, now: number): Promise<{ dropped: boolean; unfinished: Item[] }> {
  const { Item: slots } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: slotKey(owner), ConsistentRead: true }),
  );
  const ids = slots?.['ids']?.SS ?? [];
  const rows = new Map((await batchGet(table, ids.map(rowKey))).map((item) => [readString(item, TABLE_KEYS.partition), item]));
  // A missing row may be a create still in progress, unless the set is older than a minute.
  const settled = slots?.['updatedAt']?.N !== undefined && now - Number(slots['updatedAt'].N) > 60_000;
  const stale = ids.filter((id) => {
    const row = rows.get(id);
    return row ? isTerminal(readString(row, 'status') as TaskStatus) : settled;
  });
  const unfinished = [...rows.values()].filter((row) => !isTerminal(readString(row, 'status') as TaskStatus));
  if (stale.length === 0) return { dropped: false, unfinished };
  await updateItem(table, slotKey(owner), {
    UpdateExpression: 'DELETE #ids :stale',
    ExpressionAttributeNames: { '#ids': 'ids' },
    ExpressionAttributeValues: { ':stale': { SS: stale } },
  });
  return { dropped: true, unfinished };
}

/** Frees a task's slot (idempotent; nothing without a cap). */
export async function freeSlot(table: StoreTable, owner: string, taskId: string): Promise<void> {
  if (table.policy.maxUnfinishedTasks === undefined) return;
  await updateItem(table, slotKey(owner), {
    UpdateExpression: 'DELETE #ids :id',
    ExpressionAttributeNames: { '#ids': 'ids' },
    ExpressionAttributeValues: { ':id': { SS: [taskId] } },
  });
}
