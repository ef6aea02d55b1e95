/** TaskStore contract: claim (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TaskOutcome } from '../../shared/tasks/model.ts';
import { at, type ContractKit, ELICIT, ERROR, LEASE, OWNER, RESULT, T0, W } from './kit.ts';

/** The `claim` cases. */
export function describeClaim(kit: ContractKit): void {
  const { store, read, created, claimed, waiting } = kit;
  describe('claim', () => {
    it('takes the lease on a working task and returns the task as leased', async () => {
      const task = await created();
      const leased = await store().claim(task.taskId, 'w1', at(5));
      assert.ok(leased);
      assert.equal(leased.status, 'working');
      assert.deepEqual(leased.lease, { owner: 'w1', until: at(5 + LEASE) });
      assert.equal(leased.sweepAt, task.sweepAt, 'a claim leaves sweepAt alone');
      assert.equal(leased.sweepAt, T0 + W);
      assert.equal(leased.attempts, 1);
      assert.equal(leased.version, task.version + 1);
      assert.equal(leased.cancelRequested, false);
      assert.deepEqual(await read(task.taskId), leased);
    });

    it('a second claim while the lease is live is undefined and changes nothing', async () => {
      const { task } = await claimed({}, at(1));
      assert.equal(await store().claim(task.taskId, 'w2', at(LEASE)), undefined);
      assert.deepEqual(await read(task.taskId), task);
    });

    it('a claim once the lease has expired succeeds for the new owner', async () => {
      const { task } = await claimed({}, at(1));
      const again = await store().claim(task.taskId, 'w2', at(1 + LEASE));
      assert.ok(again);
      assert.deepEqual(again.lease, { owner: 'w2', until: at(1 + 2 * LEASE) });
      assert.equal(again.attempts, 2);
      assert.equal(again.version, task.version + 1);
    });

    it('returns cancelRequested when cancellation was requested before the claim', async () => {
      const { task } = await claimed({}, at(1));
      assert.equal((await store().cancel(task.taskId, OWNER, at(2))).result, 'requested');
      const again = await store().claim(task.taskId, 'w2', at(1 + LEASE));
      assert.equal(again?.cancelRequested, true);
      assert.equal(again?.status, 'working');
    });

    it('a task waiting for input cannot be claimed', async () => {
      const task = await waiting({ a: ELICIT });
      assert.equal(await store().claim(task.taskId, 'w2', at(3)), undefined);
      assert.deepEqual(await read(task.taskId), task);
    });

    const terminalOutcomes: TaskOutcome[] = [
      { status: 'completed', result: RESULT },
      { status: 'failed', error: ERROR },
      { status: 'cancelled' },
    ];
    for (const outcome of terminalOutcomes) {
      it(`a ${outcome.status} task cannot be claimed`, async () => {
        const { task, leaseOwner } = await claimed();
        await store().finish(task, leaseOwner, outcome, at(2));
        const before = await read(task.taskId);
        assert.equal(await store().claim(task.taskId, 'w2', at(3)), undefined);
        assert.deepEqual(await read(task.taskId), before);
      });
    }

    it('an unknown task cannot be claimed', async () => {
      assert.equal(await store().claim(randomUUID(), 'w1', at(1)), undefined);
    });
  });
}
