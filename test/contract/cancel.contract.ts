/** TaskStore contract: cancel (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { LeaseLostError, TaskNotFoundError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, ELICIT, LEASE, OWNER, RESULT, RETENTION, STRANGER, T0 } from './kit.ts';

/** The `cancel` cases. */
export function describeCancel(kit: ContractKit): void {
  const { store, read, created, claimed, waiting, completed } = kit;
  describe('cancel', () => {
    it('a queued task (no lease) is cancelled at once', async () => {
      const task = await created();
      const cancelledAt = 30_000;
      assert.equal((await store().cancel(task.taskId, OWNER, at(cancelledAt))).result, 'cancelled');
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'cancelled');
      assert.equal(stored.cancelRequested, true);
      assert.equal(stored.lastUpdatedAt, at(cancelledAt));
      assert.equal(stored.version, task.version + 1);
      assert.equal(stored.ttlMs, cancelledAt + RETENTION);
      assert.equal('sweepAt' in stored, false);
      assert.equal(await store().claim(task.taskId, 'w1', at(cancelledAt + 1)), undefined);
    });

    it("a task whose worker's lease expired is cancelled at once and loses the lease", async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      assert.equal((await store().cancel(task.taskId, OWNER, at(1 + LEASE))).result, 'cancelled');
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'cancelled');
      assert.equal(stored.lease, undefined);
      await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2 + LEASE)), LeaseLostError);
    });

    it('a running task (live lease) is only flagged: its worker cancels it', async () => {
      const { task } = await claimed({}, at(1));
      assert.equal((await store().cancel(task.taskId, OWNER, at(2))).result, 'requested');
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'working');
      assert.equal(stored.cancelRequested, true);
      assert.deepEqual(stored.lease, task.lease);
      assert.equal(stored.sweepAt, task.sweepAt);
      assert.equal(stored.version, task.version + 1);
      assert.equal((await store().cancel(task.taskId, OWNER, at(3))).result, 'requested');
      assert.equal((await read(task.taskId)).status, 'working');
    });

    it("a running task cancelled atOnce ends cancelled now, and its worker's writes are refused", async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      assert.equal((await store().cancel(task.taskId, OWNER, at(2), { atOnce: true })).result, 'cancelled');
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'cancelled');
      assert.equal(stored.cancelRequested, true);
      assert.equal(stored.lease, undefined);
      assert.equal('sweepAt' in stored, false);
      assert.equal(stored.ttlMs, 2 + RETENTION);
      await assert.rejects(store().heartbeat(task.taskId, leaseOwner, at(3), { leaseMs: LEASE }), LeaseLostError);
      await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(3)), LeaseLostError);
      assert.equal((await read(task.taskId)).status, 'cancelled');
      assert.equal((await store().cancel(task.taskId, OWNER, at(4), { atOnce: true })).result, 'terminal');
    });

    it('a task waiting for input is cancelled at once and its requests dropped', async () => {
      const task = await waiting({ a: ELICIT });
      assert.equal((await store().cancel(task.taskId, OWNER, at(10))).result, 'cancelled');
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'cancelled');
      assert.equal(stored.cancelRequested, true);
      assert.equal('inputRequests' in stored, false);
      assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, at(11)), { accepted: [], resumed: false });
    });

    const notFound: Array<{ name: string; call: (taskId: string) => Promise<unknown> }> = [
      { name: 'another owner', call: (taskId) => store().cancel(taskId, STRANGER, at(10)) },
      { name: 'an unknown task', call: () => store().cancel(randomUUID(), OWNER, at(10)) },
    ];
    for (const { name, call } of notFound) {
      it(`throws TaskNotFoundError for ${name} and changes nothing`, async () => {
        const task = await created();
        await assert.rejects(call(task.taskId), TaskNotFoundError);
        assert.deepEqual(await read(task.taskId, at(1)), task);
      });
    }

    it('throws TaskNotFoundError for an expired terminal task', async () => {
      const task = await completed();
      await assert.rejects(store().cancel(task.taskId, OWNER, T0 + task.ttlMs), TaskNotFoundError);
      assert.deepEqual(await read(task.taskId), task);
    });
  });
}
