/** TaskStore contract: concurrent callers (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { at, type ContractKit, ELICIT, ERROR, OWNER, RESULT, SAMPLE } from './kit.ts';

/** The `concurrent callers` cases. */
export function describeConcurrentCallers(kit: ContractKit): void {
  const { store, read, created, claimed, waiting } = kit;
  describe('concurrent callers', () => {
    it('of several concurrent claims exactly one wins', async () => {
      const tasks = await Promise.all(Array.from({ length: 4 }, () => created()));
      for (const task of tasks) {
        const claims = await Promise.all(['w1', 'w2', 'w3'].map((owner) => store().claim(task.taskId, owner, at(1))));
        const winners = claims.filter((claim) => claim !== undefined);
        assert.equal(winners.length, 1, 'exactly one claim wins');
        const stored = await read(task.taskId);
        assert.equal(stored.lease?.owner, winners[0]?.lease?.owner);
        assert.equal(stored.attempts, 1);
      }
    });

    it('two callers answering the last two keys at once resume the task exactly once', async () => {
      const tasks = await Promise.all(Array.from({ length: 4 }, () => waiting({ a: ELICIT, b: SAMPLE })));
      for (const task of tasks) {
        const results = await Promise.all([
          store().answer(task.taskId, OWNER, { a: 'A' }, at(10)),
          store().answer(task.taskId, OWNER, { b: 'B' }, at(10)),
        ]);
        assert.deepEqual(
          results.map((result) => result.accepted),
          [['a'], ['b']],
        );
        assert.equal(results.filter((result) => result.resumed).length, 1, 'exactly one call resumes the task');
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'working');
        assert.deepEqual(stored.inputResponses, { a: 'A', b: 'B' });
        assert.equal(stored.version, task.version + 2);
      }
    });

    it("a cancel racing the worker's finish leaves one consistent terminal outcome", async () => {
      const { task, leaseOwner } = await claimed({}, at(1));
      const [cancel, finish] = await Promise.allSettled([
        store().cancel(task.taskId, OWNER, at(2)),
        store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2)),
      ]);
      assert.equal(finish.status, 'fulfilled', 'the lease holder always finishes');
      assert.ok(cancel.status === 'fulfilled' && ['requested', 'terminal'].includes(cancel.value.result));
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'completed');
      assert.equal(stored.cancelRequested, cancel.value.result === 'requested');
    });

    it('a fail racing a claim either fails the task or loses to the new lease', async () => {
      const tasks = await Promise.all(Array.from({ length: 4 }, () => created()));
      for (const task of tasks) {
        const [failed, leased] = await Promise.all([
          store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(1) }),
          store().claim(task.taskId, 'w1', at(1)),
        ]);
        const stored = await read(task.taskId);
        if (failed) {
          assert.equal(stored.status, 'failed');
          assert.equal(leased, undefined);
        } else {
          assert.ok(leased);
          assert.deepEqual(stored, leased);
        }
      }
    });
  });
}
