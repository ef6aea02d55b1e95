/**
 * The names people signed in to the console with ({@link SignInNameStore})
 * in the task table: one item a principal (`principal-items.ts`), `pk` =
 * `sign-in-name#<hash of the principal>`, `sk` = `sign-in-name`, holding
 * `name`, `signedInAt` (epoch ms) and the TTL attribute.
 */
import type { SignInNameStore } from '../sign-in-names-store.ts';
import { principalItems } from './principal-items.ts';
import { SIGN_IN_NAME_PK_PREFIX, SIGN_IN_NAME_SK } from './schema.ts';
import type { StoreTable } from './update.ts';

export function dynamoDbSignInNames(table: Pick<StoreTable, 'client' | 'tableName'>): SignInNameStore {
  const items = principalItems(table, { pkPrefix: SIGN_IN_NAME_PK_PREFIX, sk: SIGN_IN_NAME_SK, at: 'signedInAt' });
  return {
    recordSignInName: (principal, name, at, keepUntil) => items.putLatest(principal, at, keepUntil, { name: { S: name } }),
    async signInNameOf(principal, now) {
      return (await items.read(principal, now))?.['name']?.S;
    },
  };
}
