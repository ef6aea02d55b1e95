/**
 * Repairs what a kill tears between dynalite's item and its index entries
 * (it writes them as separate LevelDB operations): an entry that names no
 * item carrying its keys (an orphan, which no API call removes), and an
 * item whose entry is missing (never listed). Through dynalite's own API:
 * an orphan goes when an item at its key takes its keys and gives them back
 * (dynalite drops the entry of a key that changes); a missing entry comes
 * back when its item is written with the keys it has (every write re-puts
 * an item's entries). Nothing else of an item changes, its `version` neither.
 *
 * The local stack's start-up recovery (`recovery.ts`) runs it before it
 * serves anything. The list index ({@link LIST_INDEX}) holds both the
 * owners' lists of tasks and the approvers' list of questions for a person,
 * so one pass over it repairs both.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Log } from '../../shared/log.ts';
import { LIST_INDEX, TABLE_KEYS } from '../../shared/tasks/dynamodb/index.ts';

type Item = Record<string, AttributeValue>;

/** An index of the task table: its name and the attributes of its keys. */
export interface IndexKeys {
  name: string;
  partition: string;
  sort: string;
}

/** One entry of an index as the index holds it: the table key of the item it names, and its own keys. */
export interface IndexEntry {
  key: Item;
  partition: AttributeValue;
  sort: AttributeValue;
}

/** What {@link repairListIndex} did. */
export interface ListIndexRepair {
  /** Entries that named no item carrying their keys, removed. */
  orphansRemoved: number;
  /** Items carrying list keys whose entry was missing, put back. */
  restored: number;
}

/**
 * Reconciles the list index with the items that carry its keys: orphan
 * entries removed, missing entries re-put. A scan of the table and of the
 * index: local tables are small.
 */
export async function repairListIndex(client: DynamoDBClient, tableName: string, log: Log): Promise<ListIndexRepair> {
  const repair: ListIndexRepair = { orphansRemoved: 0, restored: 0 };
  const items = new Map<string, Item>();
  for (const item of await scanAll(client, { TableName: tableName, ConsistentRead: true, ...carrying(LIST_INDEX) })) {
    items.set(keyOf(item), item);
  }
  const indexed = new Set<string>();
  for (const found of await scanAll(client, { TableName: tableName, IndexName: LIST_INDEX.name })) {
    const entry = entryOf(found, LIST_INDEX);
    const item = items.get(keyOf(entry.key));
    if (item && same(item[LIST_INDEX.partition], entry.partition) && same(item[LIST_INDEX.sort], entry.sort)) {
      indexed.add(keyOf(entry.key));
      continue;
    }
    await removeEntry(client, tableName, LIST_INDEX, entry);
    repair.orphansRemoved += 1;
    log({ event: 'recovery-orphan-removed', index: LIST_INDEX.name, taskId: entry.key[TABLE_KEYS.partition]?.S });
  }
  for (const [key, item] of items) {
    if (indexed.has(key) || !(await rewriteKeys(client, tableName, LIST_INDEX, item))) continue;
    repair.restored += 1;
    log({ event: 'recovery-index-entry-restored', index: LIST_INDEX.name, taskId: item[TABLE_KEYS.partition]?.S });
  }
  return repair;
}

/**
 * Removes an index entry that no item carries: the item at the entry's key
 * (or a placeholder, when there is none) takes the entry's keys, then gets
 * its own back (or loses them), so that dynalite deletes the entry of the
 * key that changed. The item's other attributes and its `version` are
 * untouched; its own entry, if it has one, is re-put by the second write.
 */
export async function removeEntry(client: DynamoDBClient, tableName: string, index: IndexKeys, entry: IndexEntry): Promise<void> {
  const { Item: item } = await client.send(new GetItemCommand({ TableName: tableName, Key: entry.key, ConsistentRead: true }));
  const names = { '#partition': index.partition, '#sort': index.sort };
  if (!item) {
    // No item to borrow (a put torn before its item was written): a placeholder with the entry's keys, deleted at once, takes it along.
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { ...entry.key, [index.partition]: entry.partition, [index.sort]: entry.sort },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition },
      }),
    );
    await client.send(new DeleteItemCommand({ TableName: tableName, Key: entry.key }));
    return;
  }
  await client.send(
    new UpdateItemCommand({
      TableName: tableName,
      Key: entry.key,
      UpdateExpression: 'SET #partition = :partition, #sort = :sort',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':partition': entry.partition, ':sort': entry.sort },
    }),
  );
  const partition = item[index.partition];
  const sort = item[index.sort];
  await client.send(
    new UpdateItemCommand({
      TableName: tableName,
      Key: entry.key,
      ...(partition && sort
        ? {
            UpdateExpression: 'SET #partition = :partition, #sort = :sort',
            ExpressionAttributeValues: { ':partition': partition, ':sort': sort },
          }
        : { UpdateExpression: 'REMOVE #partition, #sort' }),
      ExpressionAttributeNames: names,
    }),
  );
}

/** Writes an item's index keys as they are, which re-puts its entry; false when the item no longer has them. */
async function rewriteKeys(client: DynamoDBClient, tableName: string, index: IndexKeys, item: Item): Promise<boolean> {
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { [TABLE_KEYS.partition]: item[TABLE_KEYS.partition]!, [TABLE_KEYS.sort]: item[TABLE_KEYS.sort]! },
        UpdateExpression: 'SET #partition = :partition, #sort = :sort',
        ConditionExpression: '#partition = :partition AND #sort = :sort',
        ExpressionAttributeNames: { '#partition': index.partition, '#sort': index.sort },
        ExpressionAttributeValues: { ':partition': item[index.partition]!, ':sort': item[index.sort]! },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** A scan's filter and projection for the items that carry `index`'s keys: their table keys and index keys only. */
function carrying(index: IndexKeys) {
  return {
    FilterExpression: 'attribute_exists(#partition) AND attribute_exists(#sort)',
    ProjectionExpression: '#pk, #sk, #partition, #sort',
    ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition, '#sk': TABLE_KEYS.sort, '#partition': index.partition, '#sort': index.sort },
  };
}

/** Every item a scan returns, page after page. */
async function scanAll(client: DynamoDBClient, input: ConstructorParameters<typeof ScanCommand>[0]): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await client.send(new ScanCommand({ ...input, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

function entryOf(found: Item, index: IndexKeys): IndexEntry {
  return {
    key: { [TABLE_KEYS.partition]: found[TABLE_KEYS.partition]!, [TABLE_KEYS.sort]: found[TABLE_KEYS.sort]! },
    partition: found[index.partition]!,
    sort: found[index.sort]!,
  };
}

function keyOf(item: Item): string {
  return JSON.stringify([item[TABLE_KEYS.partition], item[TABLE_KEYS.sort]]);
}

function same(a: AttributeValue | undefined, b: AttributeValue): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}
