/**
 * Reading the sparse index of unfinished tasks ({@link ACTIVE_INDEX}), one
 * shard at a time: the store's `findDue`, the operator tools' listings and
 * the local stack's start-up reconciliation all read it through here. The
 * index is keys-only, so an entry is all a query returns: the keys of the
 * item it names and its `sweepAt`; a caller that needs the row reads it.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { type Item, number, readNumber, readString } from './codec.ts';
import { ACTIVE_INDEX, TABLE_KEYS } from './schema.ts';
import type { StoreTable } from './update.ts';

/** One entry of the active-task index. */
export interface ActiveIndexEntry {
  /** The partition key of the item the entry names: a task id. */
  taskId: string;
  /** Its sort key: `task` for a task row; anything else is an entry no row carries. */
  sortKey: string;
  /** When the sweeper is next due to look at the task (epoch ms). */
  sweepAt: number;
}

/** Which entries of a shard to read. */
export interface ActiveIndexRange {
  /** Only entries with `sweepAt <= upTo` (absent: every entry of the shard). */
  upTo?: number;
  /**
   * At most this many entries: each page asks for no more than are still
   * missing, and no page is read once there are enough (absent: every page).
   */
  limit?: number;
}

/**
 * The entries of one shard of the index, earliest `sweepAt` first, paged
 * until the range is read (or `limit` entries are in). One `Query` per page.
 */
export async function activeIndexEntries(
  table: Pick<StoreTable, 'client' | 'tableName'>,
  shard: string,
  range: ActiveIndexRange = {},
): Promise<ActiveIndexEntry[]> {
  const { upTo, limit } = range;
  const entries: ActiveIndexEntry[] = [];
  let startKey: Item | undefined;
  do {
    const page = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: ACTIVE_INDEX.name,
        ...(upTo === undefined
          ? {
              KeyConditionExpression: '#shard = :shard',
              ExpressionAttributeNames: { '#shard': ACTIVE_INDEX.partition },
              ExpressionAttributeValues: { ':shard': { S: shard } },
            }
          : {
              KeyConditionExpression: '#shard = :shard AND #sweepAt <= :upTo',
              ExpressionAttributeNames: { '#shard': ACTIVE_INDEX.partition, '#sweepAt': ACTIVE_INDEX.sort },
              ExpressionAttributeValues: { ':shard': { S: shard }, ':upTo': number(upTo) },
            }),
        ...(limit === undefined ? {} : { Limit: limit - entries.length }),
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      entries.push({
        taskId: readString(item, TABLE_KEYS.partition),
        sortKey: readString(item, TABLE_KEYS.sort),
        sweepAt: readNumber(item, ACTIVE_INDEX.sort),
      });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey && (limit === undefined || entries.length < limit));
  return entries;
}
