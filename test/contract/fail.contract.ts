/** TaskStore contract: fail (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TaskRecord } from '../../shared/tasks/model.ts';
import { LeaseLostError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, ELICIT, ERROR, LEASE, OWNER, RESULT, RETENTION } from './kit.ts';

/** The `fail` cases. */
export function describeFail(kit: ContractKit): void {
  const { store, read, created, claimed, waiting } = kit;
  describe('fail', () => {
    const from: Array<{ name: string; make: () => Promise<TaskRecord> }> = [
      { name: 'a queued task', make: () => created() },
      { name: 'a task whose lease has expired', make: async () => (await claimed({}, at(1))).task },
      {
        name: 'a released task',
        make: async () => {
          const { task, leaseOwner } = await claimed();
          await store().release(task.taskId, leaseOwner, at(2));
          return read(task.taskId);
        },
      },
      { name: 'a task waiting for input', make: () => waiting({ a: ELICIT }) },
    ];
    for (const { name, make } of from) {
      it(`marks ${name} failed with the error and statusMessage`, async () => {
        const task = await make();
        const failedAt = 40_000;
        assert.ok(await store().fail(task.taskId, { error: ERROR, statusMessage: 'Abandoned after the last attempt', now: at(failedAt) }));
        const stored = await read(task.taskId, at(failedAt));
        assert.equal(stored.status, 'failed');
        assert.deepEqual(stored.status === 'failed' && stored.error, ERROR);
        assert.equal(stored.statusMessage, 'Abandoned after the last attempt');
        assert.equal(stored.lease, undefined);
        assert.equal('inputRequests' in stored, false);
        assert.equal('sweepAt' in stored, false);
        assert.equal(stored.lastUpdatedAt, at(failedAt));
        assert.equal(stored.version, task.version + 1);
        assert.equal(stored.ttlMs, failedAt + RETENTION);
        assert.ok(await store().get(task.taskId, OWNER, at(failedAt + RETENTION - 1)));
      });
    }

    it('is refused while a live lease is held, and allowed once it has expired', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(2) }), undefined);
      assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(LEASE) }), undefined);
      assert.deepEqual(await read(task.taskId), task);

      assert.ok(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(1 + LEASE) }));
      await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2 + LEASE)), LeaseLostError);
      await assert.rejects(store().heartbeat(task.taskId, leaseOwner, at(2 + LEASE), { leaseMs: LEASE }), LeaseLostError);
      assert.equal((await read(task.taskId)).status, 'failed');
    });

    it('is refused while a renewed lease is live', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      await store().heartbeat(task.taskId, leaseOwner, at(LEASE), { leaseMs: LEASE });
      assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(1 + LEASE) }), undefined);
      assert.ok(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(2 * LEASE) }));
    });

    it('is allowed once the claimed lease ends when heartbeats only wrote progress', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      await store().heartbeat(task.taskId, leaseOwner, at(LEASE), { statusMessage: 'still going' });
      assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(LEASE) }), undefined);
      assert.ok(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(1 + LEASE) }));
    });

    it('leaves a task that recorded steps past its progress mark to the worker, and fails one that did not', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      await store().saveStep(task.taskId, { name: 's1', value: 1, now: at(2), position: 1 });
      // The run died: its lease runs out with one step past the mark (none yet).
      assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(1 + LEASE), steps: 1 }), undefined);
      assert.equal((await read(task.taskId)).status, 'working');
      // A clean hand-over moves the mark to the step count: no progress since.
      const again = await store().claim(task.taskId, 'w2', at(2 + LEASE));
      assert.ok(again);
      await store().release(task.taskId, 'w2', at(3 + LEASE), { handedOver: true, progressMark: 1 });
      assert.ok(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(4 + LEASE), steps: 1 }));
      assert.equal((await read(task.taskId)).status, 'failed');
      await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(5 + LEASE)), LeaseLostError);
    });

    it('credits the progress of a task it leaves alone once: the next fail without new steps ends it', async () => {
      const { task } = await claimed({}, at(1));
      await store().saveStep(task.taskId, { name: 's1', value: 1, now: at(2), position: 1 });
      assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(1 + LEASE), steps: 1 }), undefined);
      const credited = await read(task.taskId);
      assert.equal(credited.status, 'working');
      assert.equal(credited.progressMark, 1, 'the mark moves to the checkpoints counted');
      assert.equal(credited.attempts, 0, 'its attempts start again');
      assert.ok(credited.sweepAt !== undefined, 'still due for the sweeper');
      // A new step is new progress, credited in its turn.
      await store().saveStep(task.taskId, { name: 's2', value: 2, now: at(2 + LEASE), position: 2 });
      assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(3 + LEASE), steps: 2 }), undefined);
      assert.equal((await read(task.taskId)).progressMark, 2);
      // Dead-lettered again with nothing new (runs that die before they can claim): it ends.
      assert.ok(await store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(4 + LEASE), steps: 2 }));
      assert.equal((await read(task.taskId)).status, 'failed');
    });

    it('returns false for an unknown task', async () => {
      assert.equal(await store().fail(randomUUID(), { error: ERROR, statusMessage: 'gave up', now: at(1) }), undefined);
    });
  });
}
