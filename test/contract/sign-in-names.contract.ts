/** TaskStore contract: the names people signed in to the console with (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { type ContractKit, OWNER, STRANGER, T0 } from './kit.ts';

const HOUR = 3_600_000;

/** The `recordSignInName` / `signInNameOf` cases. */
export function describeSignInNames(kit: ContractKit): void {
  const { store } = kit;
  describe('sign-in names', () => {
    it("records a principal's name, for them only, until its keep runs out", async () => {
      const principal = `${OWNER}-${randomUUID()}`;
      assert.equal(await store().signInNameOf(principal, T0), undefined, 'nobody signed in yet');
      await store().recordSignInName(principal, 'Ada Lovelace', T0 + 5, T0 + 8 * HOUR);
      assert.equal(await store().signInNameOf(principal, T0 + 10), 'Ada Lovelace');
      assert.equal(await store().signInNameOf(`${STRANGER}-${randomUUID()}`, T0 + 10), undefined, 'another principal has no name');
      assert.equal(await store().signInNameOf(principal, T0 + 9 * HOUR), undefined, 'past its keep the record is none');
    });

    it("a later sign-in's name replaces it; an earlier one's never does", async () => {
      const principal = `${OWNER}-${randomUUID()}`;
      await store().recordSignInName(principal, 'Ada', T0 + 100, T0 + HOUR);
      await store().recordSignInName(principal, 'Ada (older)', T0 + 50, T0 + HOUR);
      assert.equal(await store().signInNameOf(principal, T0 + 200), 'Ada');
      await store().recordSignInName(principal, 'Ada King', T0 + 300, T0 + 2 * HOUR);
      assert.equal(await store().signInNameOf(principal, T0 + 400), 'Ada King');
      assert.equal(await store().signInNameOf(principal, T0 + HOUR + 1), 'Ada King', "the later sign-in's keep counts");
    });

    it('a name record is neither a task nor a sign-out', async () => {
      const principal = `${OWNER}-${randomUUID()}`;
      await store().recordSignInName(principal, 'Ada', T0, T0 + HOUR);
      assert.equal(await store().get(`sign-in-name#${principal}`, principal, T0 + 1), undefined);
      assert.equal(await store().signedOutAfter(principal, T0 + 1), undefined, 'signing in records no sign-out');
      await store().recordSignOut(principal, T0 + 2, T0 + HOUR);
      assert.equal(await store().signInNameOf(principal, T0 + 3), 'Ada', 'a sign-out leaves the name');
    });
  });
}
