/** TaskStore contract: findDue and reschedule (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TaskRecord } from '../../shared/tasks/model.ts';
import { type ContractKit, ELICIT, ERROR, GRACE, isolatedWindow, LEASE, MUCH_LATER, OWNER, SAMPLE, W } from './kit.ts';

/** The `findDue and reschedule` cases. */
export function describeSweep(kit: ContractKit): void {
  const { store, read, created, claimed, waiting, completed } = kit;
  describe('findDue and reschedule', () => {
    it('a created task becomes due leaseMs + sweepGraceMs after it was created', async () => {
      const base = isolatedWindow();
      const task = await created({ now: base });
      assert.deepEqual(await store().findDue(base + W - 1, 10), []);
      assert.deepEqual(await store().findDue(base + W, 10), [task.taskId]);
    });

    it(
      "a claim keeps the task due as created (past a prompt claim's lease); a renewal pushes that past the renewed lease, progress " +
        'does not',
      async () => {
        const base = isolatedWindow();
        const { task, leaseOwner } = await claimed({ now: base }, base + 1);
        assert.deepEqual(
          await store().findDue(task.lease!.until, 10),
          [],
          'claimed within the grace: not due while its first lease is live',
        );
        assert.deepEqual(await store().findDue(base + W - 1, 10), []);
        assert.deepEqual(await store().findDue(base + W, 10), [task.taskId]);

        await store().heartbeat(task.taskId, leaseOwner, base + 5_000, { statusMessage: 'progress' });
        assert.deepEqual(await store().findDue(base + W, 10), [task.taskId], 'progress alone does not move sweepAt');

        await store().heartbeat(task.taskId, leaseOwner, base + 5_000, { leaseMs: LEASE });
        assert.deepEqual(await store().findDue(base + 5_000 + LEASE + GRACE - 1, 10), []);
        assert.deepEqual(await store().findDue(base + 5_000 + LEASE + GRACE, 10), [task.taskId]);
      },
    );

    it("a task claimed late is due before its lease ends; the sweep's duplicate claim is turned away by the lease", async () => {
      const base = isolatedWindow();
      const task = await created({ now: base });
      const claimedAt = base + GRACE + 1_000;
      const leased = await store().claim(task.taskId, 'w1', claimedAt);
      assert.ok(leased);
      assert.ok(base + W < leased.lease!.until, 'due while the lease is live (the documented trade-off)');
      assert.deepEqual(await store().findDue(base + W, 10), [task.taskId]);
      assert.equal(await store().reschedule(task.taskId, base + W, base + 2 * W), true);
      assert.equal(await store().claim(task.taskId, 'w2', base + W), undefined, 'the duplicate finds the lease live');
      const stored = await read(task.taskId, base + W);
      assert.equal(stored.lease?.owner, 'w1');
      assert.equal(stored.attempts, 1);
      // Its worker's first renewal (a third of the way into the lease) moves it past the renewed lease.
      const renewedAt = claimedAt + 4_000;
      await store().heartbeat(task.taskId, 'w1', renewedAt, { leaseMs: LEASE });
      assert.equal((await read(task.taskId, base + W)).sweepAt, renewedAt + LEASE + GRACE);
      assert.deepEqual(await store().findDue(renewedAt + LEASE, 10), []);
    });

    it('a released task becomes due leaseMs + sweepGraceMs after resumeAt', async () => {
      const base = isolatedWindow();
      const { task, leaseOwner } = await claimed({ now: base }, base + 1);
      const resumeAt = base + 7 * LEASE;
      await store().release(task.taskId, leaseOwner, resumeAt);
      assert.deepEqual(await store().findDue(resumeAt + W - 1, 10), []);
      assert.deepEqual(await store().findDue(resumeAt + W, 10), [task.taskId]);
    });

    it('tasks waiting for input and terminal tasks are never due', async () => {
      const base = isolatedWindow();
      await waiting({ a: ELICIT }, { now: base });
      await completed({ now: base });
      const queued = await created({ now: base });
      assert.ok(await store().fail(queued.taskId, { error: ERROR, statusMessage: 'gave up', now: base + 1 }));
      const other = await created({ now: base });
      assert.equal((await store().cancel(other.taskId, OWNER, base + 1)).result, 'cancelled');
      const { task, leaseOwner } = await claimed({ now: base }, base + 1);
      await store().finish(task, leaseOwner, { status: 'failed', error: ERROR }, base + 2);
      assert.deepEqual(await store().findDue(base + MUCH_LATER, 100), []);
    });

    it('an answered task that is working again becomes due leaseMs + sweepGraceMs after the answer', async () => {
      const base = isolatedWindow();
      const task = await waiting({ a: ELICIT, b: SAMPLE }, { now: base });
      await store().answer(task.taskId, OWNER, { a: 'A' }, base + 10);
      assert.deepEqual(await store().findDue(base + MUCH_LATER, 10), [], 'still waiting for b');
      await store().answer(task.taskId, OWNER, { b: 'B' }, base + 20);
      assert.deepEqual(await store().findDue(base + 20 + W - 1, 10), []);
      assert.deepEqual(await store().findDue(base + 20 + W, 10), [task.taskId]);
    });

    it('returns the longest-due tasks first, at most limit of them', async () => {
      const base = isolatedWindow();
      const tasks: TaskRecord[] = [];
      for (let index = 0; index < 9; index += 1) tasks.push(await created({ now: base + index }));
      const ids = tasks.map((task) => task.taskId);
      assert.deepEqual(await store().findDue(base + 8 + W, 100), ids);
      assert.deepEqual(await store().findDue(base + 8 + W, 4), ids.slice(0, 4));
      assert.deepEqual(await store().findDue(base + 4 + W, 100), ids.slice(0, 5));
      assert.deepEqual(await store().findDue(base + 8 + W, 0), []);
    });

    it('reschedule moves a due task to nextAt, once', async () => {
      const base = isolatedWindow();
      const task = await created({ now: base });
      const now = base + W;
      assert.equal(await store().reschedule(task.taskId, now, now + W), true);
      assert.equal((await read(task.taskId, now)).sweepAt, now + W);
      assert.equal((await read(task.taskId, now)).version, task.version + 1);
      assert.deepEqual(await store().findDue(now, 10), []);
      assert.equal(await store().reschedule(task.taskId, now, now + W), false, 'no longer due');
      assert.deepEqual(await store().findDue(now + W - 1, 10), []);
      assert.deepEqual(await store().findDue(now + W, 10), [task.taskId]);
    });

    it('reschedule refuses a task that is not due yet, one waiting for input and an unknown one', async () => {
      const base = isolatedWindow();
      const task = await created({ now: base });
      assert.equal(await store().reschedule(task.taskId, base + W - 1, base + 2 * W), false);
      assert.deepEqual(await read(task.taskId, base), task);
      const waits = await waiting({ a: ELICIT }, { now: base });
      assert.equal(await store().reschedule(waits.taskId, base + MUCH_LATER, base + MUCH_LATER), false);
      assert.deepEqual(await read(waits.taskId, base), waits);
      assert.equal(await store().reschedule(randomUUID(), base + MUCH_LATER, base + MUCH_LATER), false);
    });

    it('of two concurrent reschedules exactly one wins', async () => {
      const base = isolatedWindow();
      const tasks = await Promise.all(Array.from({ length: 4 }, () => created({ now: base })));
      for (const task of tasks) {
        const now = base + W;
        const results = await Promise.all([store().reschedule(task.taskId, now, now + W), store().reschedule(task.taskId, now, now + W)]);
        assert.deepEqual(results.filter(Boolean).length, 1);
      }
    });
  });
}
