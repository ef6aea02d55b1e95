/**
 * The sign-out records ({@link SignOutStore}) in the task table: one item a
 * principal (`principal-items.ts`), `pk` = `sign-out#<hash of the
 * principal>`, `sk` = `sign-out`, holding `signedOutAfter` (epoch ms) and the
 * TTL attribute.
 */
import type { SignOutStore } from '../sign-outs-store.ts';
import { principalItems } from './principal-items.ts';
import { SIGN_OUT_PK_PREFIX, SIGN_OUT_SK } from './schema.ts';
import type { StoreTable } from './update.ts';

export function dynamoDbSignOuts(table: Pick<StoreTable, 'client' | 'tableName'>): SignOutStore {
  const items = principalItems(table, { pkPrefix: SIGN_OUT_PK_PREFIX, sk: SIGN_OUT_SK, at: 'signedOutAfter' });
  return {
    recordSignOut: (principal, at, keepUntil) => items.putLatest(principal, at, keepUntil),
    async signedOutAfter(principal, now) {
      const after = (await items.read(principal, now))?.['signedOutAfter']?.N;
      return after === undefined ? undefined : Number(after);
    },
  };
}
