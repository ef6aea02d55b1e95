/**
 * `list` on DynamoDB: a page of an owner's tasks from the list index
 * ({@link LIST_INDEX}, keys only), newest first, then their rows in one
 * `BatchGetItem`.
 *
 * What a page costs: one `Query` per list partition of the owner (one, or
 * the shared owner's shards), each reading at most `limit + 1` keys-only
 * entries of about 150 bytes (half a read unit, eventually consistent), and
 * one eventually consistent `BatchGetItem` of at most `limit` rows: half a
 * read unit per 4 KB of each row. A listed task whose row is a few kilobytes
 * (most are) costs half a read unit per page that shows it.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { checkPage } from '../listing.ts';
import { visible } from '../predicates.ts';
import type { ListOptions, TaskPage } from '../store-types.ts';
import { fromItem, type Item, listPartitions, readString } from './codec.ts';
import { batchGet } from './results.ts';
import { LIST_INDEX, TABLE_KEYS } from './schema.ts';
import type { StoreTable } from './update.ts';

/** One entry of the list index: the item it names and its place in the list. */
interface ListEntry {
  key: Item;
  sort: string;
}

/** `TaskStore.list` on `table`. */
export async function listPage(table: StoreTable, owner: string, now: number, options: ListOptions): Promise<TaskPage> {
  const { limit, after } = checkPage(options);
  const partitions = listPartitions(owner, table.policy);
  // One more than a page from each partition tells whether another page follows.
  const entries = (await Promise.all(partitions.map((partition) => newest(table, partition, limit + 1, after))))
    .flat()
    .sort((a, b) => (a.sort < b.sort ? 1 : -1));
  const page = entries.slice(0, limit);
  const rows = new Map<string, Item>();
  for (const item of await batchGet(
    table,
    page.map((entry) => entry.key),
    false,
  )) {
    rows.set(readString(item, TABLE_KEYS.partition), item);
  }
  const tasks = page.flatMap((entry) => {
    const item = rows.get(readString(entry.key, TABLE_KEYS.partition));
    const task = item && visible(fromItem(item), owner, now);
    return task ? [task] : [];
  });
  return { tasks, ...(entries.length > limit ? { next: page.at(-1)!.sort } : {}) };
}

/** Up to `count` entries of one list partition, newest first, before `after` when given. */
async function newest(table: StoreTable, partition: string, count: number, after: string | undefined): Promise<ListEntry[]> {
  const entries: ListEntry[] = [];
  let startKey: Item | undefined;
  do {
    const page = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: LIST_INDEX.name,
        KeyConditionExpression: after === undefined ? '#list = :list' : '#list = :list AND #sort < :after',
        ExpressionAttributeNames: { '#list': LIST_INDEX.partition, ...(after === undefined ? {} : { '#sort': LIST_INDEX.sort }) },
        ExpressionAttributeValues: { ':list': { S: partition }, ...(after === undefined ? {} : { ':after': { S: after } }) },
        ScanIndexForward: false,
        Limit: count - entries.length,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      entries.push({
        key: { [TABLE_KEYS.partition]: item[TABLE_KEYS.partition]!, [TABLE_KEYS.sort]: item[TABLE_KEYS.sort]! },
        sort: readString(item, LIST_INDEX.sort),
      });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey && entries.length < count);
  return entries;
}
