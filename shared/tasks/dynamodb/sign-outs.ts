/**
 * The sign-out records ({@link SignOutStore}) in the task table: one item a
 * principal, `pk` = `sign-out#<hash of the principal>` (no task id has a
 * `#`), `sk` = `sign-out`, holding `signedOutAfter` (epoch ms) and the TTL
 * attribute. No index key: the item is in no index.
 */
import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { SignOutStore } from '../sign-outs-store.ts';
import { sha256 } from './codec.ts';
import { SIGN_OUT_PK_PREFIX, SIGN_OUT_SK, TABLE_KEYS, TTL_ATTRIBUTE } from './schema.ts';
import type { StoreTable } from './update.ts';

const key = (principal: string) => ({
  [TABLE_KEYS.partition]: { S: `${SIGN_OUT_PK_PREFIX}${sha256(principal)}` },
  [TABLE_KEYS.sort]: { S: SIGN_OUT_SK },
});

export function dynamoDbSignOuts(table: Pick<StoreTable, 'client' | 'tableName'>): SignOutStore {
  return {
    async recordSignOut(principal, at, keepUntil) {
      try {
        await table.client.send(
          new PutItemCommand({
            TableName: table.tableName,
            Item: { ...key(principal), signedOutAfter: { N: String(at) }, [TTL_ATTRIBUTE]: { N: String(Math.ceil(keepUntil / 1000)) } },
            // A later sign-out already recorded stays (two devices signing out at once).
            ConditionExpression: 'attribute_not_exists(signedOutAfter) OR signedOutAfter < :at',
            ExpressionAttributeValues: { ':at': { N: String(at) } },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
    async signedOutAfter(principal, now) {
      const { Item } = await table.client.send(
        new GetItemCommand({ TableName: table.tableName, Key: key(principal), ConsistentRead: false }),
      );
      const after = Item?.['signedOutAfter']?.N;
      const keptUntil = Number(Item?.[TTL_ATTRIBUTE]?.N ?? 0) * 1000;
      return after === undefined || keptUntil <= now ? undefined : Number(after);
    },
  };
}
