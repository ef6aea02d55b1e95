/** TaskStore contract: finish (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskOutcome, TaskRecord } from '../../shared/tasks/model.ts';
import { LeaseLostError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, ELICIT, ERROR, LEASE, OWNER, RESULT, RETENTION, SAMPLE, T0 } from './kit.ts';

/** The `finish` cases. */
export function describeFinish(kit: ContractKit): void {
  const { store, read, claimed, waiting } = kit;
  describe('finish', () => {
    const cases: Array<{ outcome: TaskOutcome; check: (task: TaskRecord) => void }> = [
      {
        outcome: { status: 'completed', result: RESULT },
        check: (task) => assert.deepEqual(task.status === 'completed' && task.result, RESULT),
      },
      {
        outcome: { status: 'failed', error: ERROR, statusMessage: 'Bad input' },
        check: (task) => {
          assert.deepEqual(task.status === 'failed' && task.error, ERROR);
          assert.equal(task.statusMessage, 'Bad input');
        },
      },
      {
        outcome: { status: 'cancelled', statusMessage: "Cancelled at the client's request" },
        check: (task) => assert.equal(task.statusMessage, "Cancelled at the client's request"),
      },
      {
        outcome: { status: 'input_required', inputRequests: { k1: ELICIT, k2: SAMPLE } },
        check: (task) => {
          assert.deepEqual(task.status === 'input_required' && task.inputRequests, { k1: ELICIT, k2: SAMPLE });
          assert.deepEqual([...task.issuedKeys].sort(), ['k1', 'k2']);
        },
      },
    ];
    for (const { outcome, check } of cases) {
      it(`records a ${outcome.status} outcome, releases the lease and leaves nothing for the sweeper`, async () => {
        const { task, leaseOwner } = await claimed();
        const finished = await store().finish(task, leaseOwner, outcome, at(100));
        assert.equal(finished.status, outcome.status);
        check(finished);
        assert.equal(finished.lease, undefined);
        assert.equal('sweepAt' in finished, false);
        assert.equal(finished.lastUpdatedAt, at(100));
        assert.equal(finished.version, task.version + 1);
        // Waiting for answers is a clean hand-over: the next run starts the count again.
        assert.equal(finished.attempts, outcome.status === 'input_required' ? 0 : 1);
        assert.equal(finished.createdAt, T0);
        assert.deepEqual(finished.arguments, task.arguments);
        for (const field of ['inputRequests', 'result', 'error'] as const) {
          const belongs = { inputRequests: 'input_required', result: 'completed', error: 'failed' }[field] === outcome.status;
          assert.equal(field in finished, belongs, `${field} present on a ${outcome.status} task`);
        }
        assert.deepEqual(await read(task.taskId), finished);
      });
    }

    it('extends the TTL so the outcome stays readable for the retention window', async () => {
      const { task, leaseOwner } = await claimed();
      const finishedAt = 50_000;
      const finished = await store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(finishedAt));
      assert.equal(finished.ttlMs, finishedAt + RETENTION);
      assert.ok(await store().get(task.taskId, OWNER, at(finishedAt + RETENTION - 1)));
      assert.equal(await store().get(task.taskId, OWNER, at(finishedAt + RETENTION)), undefined);
    });

    it('never shortens a TTL that already covers the retention window', async () => {
      const longTtl = 100 * RETENTION;
      const { task, leaseOwner } = await claimed({ ttlMs: longTtl });
      const finished = await store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(100));
      assert.equal(finished.ttlMs, longTtl);
      assert.ok(await store().get(task.taskId, OWNER, at(longTtl - 1)));
      assert.equal(await store().get(task.taskId, OWNER, at(longTtl)), undefined);
    });

    it('accumulates issuedKeys across input rounds and keeps every answer', async () => {
      const first = await waiting({ a: ELICIT, b: SAMPLE });
      assert.deepEqual(await store().answer(first.taskId, OWNER, { a: 'A', b: 'B' }, at(3)), { accepted: ['a', 'b'], resumed: true });
      const again = await store().claim(first.taskId, 'w2', at(4));
      assert.ok(again);
      const second = await store().finish(again, 'w2', { status: 'input_required', inputRequests: { c: ELICIT } }, at(5));
      assert.deepEqual([...second.issuedKeys].sort(), ['a', 'b', 'c']);
      assert.deepEqual(second.inputResponses, { a: 'A', b: 'B' });
      assert.deepEqual(second.status === 'input_required' && second.inputRequests, { c: ELICIT });
      assert.deepEqual(await read(first.taskId), second);
    });

    it('keeps cancelRequested and the latest heartbeat message written since the claim', async () => {
      const { task, leaseOwner } = await claimed();
      await store().heartbeat(task.taskId, leaseOwner, at(3), { statusMessage: 'halfway' });
      assert.equal((await store().cancel(task.taskId, OWNER, at(4))).result, 'requested');
      const finished = await store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(5));
      assert.equal(finished.cancelRequested, true);
      assert.equal(finished.statusMessage, 'halfway');
      assert.equal(finished.version, task.version + 3);
      assert.deepEqual(await read(task.taskId), finished);
    });

    it("writes the outcome's statusMessage even when it equals the one in the claimed record", async () => {
      const { task, leaseOwner } = await claimed();
      await store().heartbeat(task.taskId, leaseOwner, at(2), { statusMessage: 'A' });
      await store().release(task.taskId, leaseOwner, at(2));
      const second = await store().claim(task.taskId, 'w2', at(3));
      assert.ok(second);
      assert.equal(second.statusMessage, 'A');
      await store().heartbeat(task.taskId, 'w2', at(4), { leaseMs: LEASE, statusMessage: 'B' });
      const finished = await store().finish(second, 'w2', { status: 'failed', error: ERROR, statusMessage: 'A' }, at(5));
      assert.equal(finished.statusMessage, 'A');
    });

    it('throws LeaseLostError once the lease was taken over, and changes nothing', async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      const takeover = await store().claim(task.taskId, 'w2', at(1 + LEASE));
      assert.ok(takeover);
      await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2 + LEASE)), LeaseLostError);
      assert.deepEqual(await read(task.taskId), takeover);
    });

    it('throws LeaseLostError for a lease owner that never held the lease', async () => {
      const { task } = await claimed();
      await assert.rejects(store().finish(task, 'someone-else', { status: 'cancelled' }, at(5)), LeaseLostError);
      assert.deepEqual(await read(task.taskId), task);
    });

    it('a result with every kind of JSON value and non-ASCII text round-trips', async () => {
      const result = {
        content: [{ type: 'text', text: 'Grüße, 世界 😀 "quoted" \\ \n' }],
        structuredContent: { a: [1.5, -2, 0, true, false, null, { b: '' }] },
      };
      const { task, leaseOwner } = await claimed();
      await store().finish(task, leaseOwner, { status: 'completed', result }, at(5));
      const stored = await read(task.taskId);
      assert.deepEqual(stored.status === 'completed' && stored.result, result);
    });
  });
}
