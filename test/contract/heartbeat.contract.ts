/** TaskStore contract: heartbeat (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { LeaseLostError } from '../../shared/tasks/store-errors.ts';
import type { HeartbeatOptions } from '../../shared/tasks/store-types.ts';
import { at, type ContractKit, GRACE, LEASE, OWNER } from './kit.ts';

/** The `heartbeat` cases. */
export function describeHeartbeat(kit: ContractKit): void {
  const { store, read, claimed } = kit;
  describe('heartbeat', () => {
    it('with leaseMs renews the lease and moves sweepAt past it: another worker cannot claim until the renewed lease ends', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      const renewedAt = 8_000;
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(renewedAt), { leaseMs: LEASE }), { cancelRequested: false });
      const stored = await read(task.taskId);
      assert.deepEqual(stored.lease, { owner: leaseOwner, until: at(renewedAt + LEASE) });
      assert.equal(stored.sweepAt, at(renewedAt + LEASE + GRACE));
      assert.equal(stored.version, task.version + 1);
      assert.equal(stored.lastUpdatedAt, task.lastUpdatedAt, 'a bare renewal is not an update the client sees');
      assert.equal(stored.statusMessage, undefined);

      assert.equal(await store().claim(task.taskId, 'w2', at(1 + LEASE)), undefined, 'the first lease would have ended here');
      assert.equal(await store().claim(task.taskId, 'w2', at(renewedAt + LEASE - 1)), undefined);
      assert.equal((await store().claim(task.taskId, 'w2', at(renewedAt + LEASE)))?.lease?.owner, 'w2');
    });

    it('with leaseMs and a statusMessage renews and writes statusMessage and lastUpdatedAt in one change', async () => {
      const { task, leaseOwner } = await claimed();
      await store().heartbeat(task.taskId, leaseOwner, at(5), { leaseMs: LEASE, statusMessage: 'step 1 of 3' });
      const stored = await read(task.taskId);
      assert.equal(stored.statusMessage, 'step 1 of 3');
      assert.equal(stored.lastUpdatedAt, at(5));
      assert.deepEqual(stored.lease, { owner: leaseOwner, until: at(5 + LEASE) });
      assert.equal(stored.sweepAt, at(5 + LEASE + GRACE));
      assert.equal(stored.version, task.version + 1);
    });

    it('without leaseMs writes statusMessage and lastUpdatedAt only: the lease and sweepAt stay', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(5_000), { statusMessage: 'step 1 of 3' }), {
        cancelRequested: false,
      });
      const stored = await read(task.taskId);
      assert.equal(stored.statusMessage, 'step 1 of 3');
      assert.equal(stored.lastUpdatedAt, at(5_000));
      assert.deepEqual(stored.lease, task.lease);
      assert.equal(stored.sweepAt, task.sweepAt);
      assert.equal(stored.version, task.version + 1);
      assert.deepEqual(stored, { ...task, statusMessage: 'step 1 of 3', lastUpdatedAt: at(5_000), version: task.version + 1 });

      assert.equal(await store().claim(task.taskId, 'w2', at(LEASE)), undefined, 'the lease is still live');
      assert.equal((await store().claim(task.taskId, 'w2', at(1 + LEASE)))?.lease?.owner, 'w2', 'the lease was not renewed');
    });

    it('with neither leaseMs nor a statusMessage only reports cancelRequested: the lease, sweepAt and statusMessage stay', async () => {
      const { task, leaseOwner } = await claimed();
      await store().heartbeat(task.taskId, leaseOwner, at(2), { statusMessage: 'before' });
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(3), {}), { cancelRequested: false });
      const stored = await read(task.taskId);
      assert.equal(stored.statusMessage, 'before');
      assert.equal(stored.lastUpdatedAt, at(2));
      assert.deepEqual(stored.lease, task.lease);
      assert.equal(stored.sweepAt, task.sweepAt);
    });

    it('reports cancelRequested once cancellation was requested, with or without renewing', async () => {
      const { task, leaseOwner } = await claimed();
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(5), { statusMessage: 'step 1 of 3' }), {
        cancelRequested: false,
      });
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(5), { leaseMs: LEASE }), { cancelRequested: false });
      assert.equal((await store().cancel(task.taskId, OWNER, at(6))).result, 'requested');
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(7), { statusMessage: 'step 2 of 3' }), {
        cancelRequested: true,
      });
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(8), { leaseMs: LEASE }), { cancelRequested: true });
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(9), { leaseMs: LEASE, statusMessage: 'step 3 of 3' }), {
        cancelRequested: true,
      });
      assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(10), {}), { cancelRequested: true });
      const stored = await read(task.taskId);
      assert.equal(stored.statusMessage, 'step 3 of 3');
      assert.equal(stored.cancelRequested, true);
    });

    it('still renews a lease that ran out while nobody took it over', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      await store().heartbeat(task.taskId, leaseOwner, at(2 * LEASE), { leaseMs: LEASE });
      const stored = await read(task.taskId);
      assert.deepEqual(stored.lease, { owner: leaseOwner, until: at(3 * LEASE) });
      assert.equal(stored.sweepAt, at(3 * LEASE + GRACE));
    });

    const variants: Array<{ name: string; options: HeartbeatOptions }> = [
      { name: 'renewing', options: { leaseMs: LEASE, statusMessage: 'late' } },
      { name: 'progress-only', options: { statusMessage: 'late' } },
      { name: 'bare', options: {} },
    ];
    for (const { name, options } of variants) {
      it(`(${name}) throws LeaseLostError for another lease owner and changes nothing`, async () => {
        const { task } = await claimed();
        await assert.rejects(store().heartbeat(task.taskId, 'not-the-holder', at(5), options), LeaseLostError);
        assert.deepEqual(await read(task.taskId), task);
      });

      it(`(${name}) throws LeaseLostError once the lease was taken over`, async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        const takeover = await store().claim(task.taskId, 'w2', at(1 + LEASE));
        assert.ok(takeover);
        await assert.rejects(store().heartbeat(task.taskId, leaseOwner, at(2 + LEASE), options), LeaseLostError);
        assert.deepEqual(await read(task.taskId), takeover);
      });

      it(`(${name}) throws LeaseLostError after the lease was released`, async () => {
        const { task, leaseOwner } = await claimed();
        await store().release(task.taskId, leaseOwner, at(2));
        const released = await read(task.taskId);
        await assert.rejects(store().heartbeat(task.taskId, leaseOwner, at(5), options), LeaseLostError);
        assert.deepEqual(await read(task.taskId), released);
      });

      it(`(${name}) throws LeaseLostError for an unknown task`, async () => {
        await assert.rejects(store().heartbeat(randomUUID(), 'w1', at(5), options), LeaseLostError);
      });
    }
  });
}
