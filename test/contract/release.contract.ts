/** TaskStore contract: release (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { at, type ContractKit, OWNER, W } from './kit.ts';

/** The `release` cases. */
export function describeRelease(kit: ContractKit): void {
  const { store, read, claimed } = kit;
  describe('release', () => {
    it('drops the lease of its holder, keeps the status and is due at resumeAt + leaseMs + sweepGraceMs', async () => {
      const { task, leaseOwner } = await claimed();
      const resumeAt = at(5_000);
      await store().release(task.taskId, leaseOwner, resumeAt);
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'working');
      assert.equal(stored.lease, undefined);
      assert.equal(stored.sweepAt, resumeAt + W);
      assert.equal(stored.version, task.version + 1);
      assert.equal(stored.attempts, task.attempts);
    });

    it('then another worker can claim at once', async () => {
      const { task, leaseOwner } = await claimed();
      await store().release(task.taskId, leaseOwner, at(2));
      const again = await store().claim(task.taskId, 'w2', at(3));
      assert.equal(again?.lease?.owner, 'w2');
      assert.equal(again?.attempts, 2);
    });

    it('after a clean hand-over restarts the attempt count; a retry keeps counting', async () => {
      const { task, leaseOwner } = await claimed();
      await store().release(task.taskId, leaseOwner, at(2));
      const retried = await store().claim(task.taskId, 'w2', at(3));
      assert.equal(retried?.attempts, 2);
      await store().release(task.taskId, 'w2', at(4), { handedOver: true });
      assert.equal((await read(task.taskId)).attempts, 0);
      assert.equal((await store().claim(task.taskId, 'w3', at(5)))?.attempts, 1);
    });

    it('is a no-op for anyone but the holder', async () => {
      const { task } = await claimed();
      await store().release(task.taskId, 'not-the-holder', at(2));
      assert.deepEqual(await read(task.taskId), task);
    });

    it('is a no-op for an unknown task', async () => {
      const taskId = randomUUID();
      await store().release(taskId, 'w1', at(1));
      assert.equal(await store().get(taskId, OWNER, at(1)), undefined);
    });
  });
}
