/**
 * Items of the task table that hold one fact about a principal rather than a
 * task (the console's sign-out and sign-in name records): one item a
 * principal and kind, `pk` = `<kind's prefix><hash of the principal>` (no
 * task id has a `#`), `sk` = the kind's sort key, with the time the fact was
 * recorded and the TTL attribute. No index key: such an item is in no index.
 * Each write keeps the latest fact: an earlier one never replaces a later.
 */
import { type AttributeValue, ConditionalCheckFailedException, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { sha256 } from './codec.ts';
import { TABLE_KEYS, TTL_ATTRIBUTE } from './schema.ts';
import type { StoreTable } from './update.ts';

/** One kind of principal item: its keys, and the attribute holding when its fact was recorded (epoch ms). */
interface PrincipalItemKind {
  pkPrefix: string;
  sk: string;
  at: string;
}

interface PrincipalItems {
  /** Records the fact of `at` (epoch ms) with `fields`, kept until `keepUntil` (epoch ms), unless a later one is recorded. One write. */
  putLatest(principal: string, at: number, keepUntil: number, fields?: Record<string, AttributeValue>): Promise<void>;
  /** The principal's item while it is kept at `now`, else `undefined`. One eventually consistent read. */
  read(principal: string, now: number): Promise<Record<string, AttributeValue> | undefined>;
}

export function principalItems(table: Pick<StoreTable, 'client' | 'tableName'>, kind: PrincipalItemKind): PrincipalItems {
  const key = (principal: string) => ({
    [TABLE_KEYS.partition]: { S: `${kind.pkPrefix}${sha256(principal)}` },
    [TABLE_KEYS.sort]: { S: kind.sk },
  });
  return {
    async putLatest(principal, at, keepUntil, fields = {}) {
      try {
        await table.client.send(
          new PutItemCommand({
            TableName: table.tableName,
            Item: {
              ...fields,
              ...key(principal),
              [kind.at]: { N: String(at) },
              [TTL_ATTRIBUTE]: { N: String(Math.ceil(keepUntil / 1000)) },
            },
            // A later fact already recorded stays (two devices at once).
            ConditionExpression: 'attribute_not_exists(#at) OR #at < :at',
            ExpressionAttributeNames: { '#at': kind.at },
            ExpressionAttributeValues: { ':at': { N: String(at) } },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
    async read(principal, now) {
      const { Item } = await table.client.send(
        new GetItemCommand({ TableName: table.tableName, Key: key(principal), ConsistentRead: false }),
      );
      const keptUntil = Number(Item?.[TTL_ATTRIBUTE]?.N ?? 0) * 1000;
      return Item?.[kind.at] === undefined || keptUntil <= now ? undefined : Item;
    },
  };
}
