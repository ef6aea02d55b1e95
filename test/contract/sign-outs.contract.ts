/** TaskStore contract: the console's sign-out records (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { type ContractKit, OWNER, STRANGER, T0 } from './kit.ts';

const HOUR = 3_600_000;

/** The `recordSignOut` / `signedOutAfter` cases. */
export function describeSignOuts(kit: ContractKit): void {
  const { store } = kit;
  describe('sign-out records', () => {
    it('records when a principal signed out, for them only, until its keep runs out', async () => {
      const principal = `${OWNER}-${randomUUID()}`;
      assert.equal(await store().signedOutAfter(principal, T0), undefined, 'nobody signed out yet');
      await store().recordSignOut(principal, T0 + 5, T0 + 8 * HOUR);
      assert.equal(await store().signedOutAfter(principal, T0 + 10), T0 + 5);
      assert.equal(await store().signedOutAfter(`${STRANGER}-${randomUUID()}`, T0 + 10), undefined, "another principal's sessions go on");
      assert.equal(await store().signedOutAfter(principal, T0 + 9 * HOUR), undefined, 'past its keep the record is none');
    });

    it('a later sign-out moves the time on; an earlier one never moves it back', async () => {
      const principal = `${OWNER}-${randomUUID()}`;
      await store().recordSignOut(principal, T0 + 100, T0 + HOUR);
      await store().recordSignOut(principal, T0 + 50, T0 + HOUR);
      assert.equal(await store().signedOutAfter(principal, T0 + 200), T0 + 100);
      await store().recordSignOut(principal, T0 + 300, T0 + 2 * HOUR);
      assert.equal(await store().signedOutAfter(principal, T0 + 400), T0 + 300);
    });

    it('a sign-out record is no task: a task id made of its key reads as not found', async () => {
      const principal = `${OWNER}-${randomUUID()}`;
      await store().recordSignOut(principal, T0, T0 + HOUR);
      assert.equal(await store().get(`sign-out#${principal}`, principal, T0 + 1), undefined);
    });
  });
}
