/** TaskStore contract: callbacks (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALLED_BACK_MESSAGE, heartbeatWriteInterval } from '../../shared/tasks/callbacks-decisions.ts';
import type { CallbackWait } from '../../shared/tasks/callbacks-model.ts';
import { LeaseLostError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, OWNER, W } from './kit.ts';

const WAIT: CallbackWait = { callbacks: { cb_a: { since: at(1), timeoutAt: at(60_000) } } };
const TWO: CallbackWait = { callbacks: { cb_a: { since: at(1), timeoutAt: at(60_000) }, cb_b: { since: at(1), timeoutAt: at(90_000) } } };
const BEATING: CallbackWait = { callbacks: { cb_a: { since: at(1), timeoutAt: at(600_000), heartbeatTimeoutMs: 30_000 } } };

/** The callback cases: a run suspends on its callbacks, outside systems complete or beat them. */
export function describeCallbacks(kit: ContractKit): void {
  const { store, read, claimed, completed } = kit;

  /** A task claimed at 1 ms and suspended at 2 ms on `wait`. */
  const suspended = async (wait: CallbackWait = WAIT) => {
    const { task, leaseOwner } = await claimed();
    const result = await store().awaitCallbacks(task.taskId, leaseOwner, { seen: task.callbacks, wait, statusMessage: 'Waiting' }, at(2));
    assert.equal(result, 'waiting');
    return read(task.taskId);
  };

  describe('callbacks', () => {
    it('a suspended run: working, no lease, due at the first deadline, the wait and its message recorded', async () => {
      const task = await suspended(TWO);
      assert.equal(task.status, 'working');
      assert.equal(task.lease, undefined);
      assert.equal(task.sweepAt, at(60_000));
      assert.deepEqual(task.callbackWait, TWO);
      assert.equal(task.statusMessage, 'Waiting');
      assert.equal(task.attempts, 0);
    });

    it('a completion that arrived during the run signals it, and nothing is written', async () => {
      const { task, leaseOwner } = await claimed();
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: { ok: 1 } }, at(2)), 'accepted');
      const before = await read(task.taskId);
      const result = await store().awaitCallbacks(task.taskId, leaseOwner, { seen: task.callbacks, wait: WAIT, statusMessage: 'W' }, at(3));
      assert.equal(result, 'signalled');
      assert.deepEqual(await read(task.taskId), before);
      assert.equal(before.lease?.owner, leaseOwner);
    });

    it('a cancel requested during the run signals it', async () => {
      const { task, leaseOwner } = await claimed();
      await store().cancel(task.taskId, OWNER, at(2));
      const result = await store().awaitCallbacks(task.taskId, leaseOwner, { seen: task.callbacks, wait: WAIT, statusMessage: 'W' }, at(3));
      assert.equal(result, 'signalled');
    });

    it('suspending without the lease throws LeaseLostError', async () => {
      const { task } = await claimed();
      await assert.rejects(
        store().awaitCallbacks(task.taskId, 'someone-else', { seen: undefined, wait: WAIT, statusMessage: 'W' }, at(3)),
        LeaseLostError,
      );
    });

    it('the completion of the last open callback resumes the task: due one W later, the wait gone', async () => {
      const task = await suspended();
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: { ok: 1 } }, at(10)), 'resumed');
      const stored = await read(task.taskId);
      assert.deepEqual(stored.callbacks, { cb_a: { result: { ok: 1 }, at: at(10) } });
      assert.equal(stored.callbackWait, undefined);
      assert.equal(stored.sweepAt, at(10) + W);
      assert.equal(stored.statusMessage, CALLED_BACK_MESSAGE);
      assert.equal((await store().claim(task.taskId, 'w2', at(11)))?.callbacks?.['cb_a']?.at, at(10));
    });

    it('with two open callbacks, the first completion is recorded and the task keeps waiting', async () => {
      const task = await suspended(TWO);
      assert.equal(await store().completeCallback(task.taskId, 'cb_b', { error: { message: 'no' } }, at(10)), 'accepted');
      const stored = await read(task.taskId);
      assert.deepEqual(stored.callbackWait, TWO);
      assert.equal(stored.sweepAt, at(60_000));
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: 1 }, at(11)), 'resumed');
    });

    it('the same completion again is a duplicate, another a conflict; neither changes anything', async () => {
      const task = await suspended();
      await store().completeCallback(task.taskId, 'cb_a', { result: { a: 1, b: 2 } }, at(10));
      const before = await read(task.taskId);
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: { b: 2, a: 1 } }, at(11)), 'duplicate');
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: { a: 2 } }, at(12)), 'conflict');
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { error: { message: 'x' } }, at(13)), 'conflict');
      assert.deepEqual(await read(task.taskId), before);
    });

    it('past its deadline a completion is refused as expired, and nothing changes', async () => {
      const task = await suspended();
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: 1 }, at(60_000)), 'expired');
      assert.deepEqual(await read(task.taskId), task);
    });

    it('after the end: ended; an unknown task: unknown', async () => {
      const task = await completed();
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: 1 }, at(10)), 'ended');
      assert.equal(await store().beatCallback(task.taskId, 'cb_a', at(10)), 'ended');
      assert.equal(await store().completeCallback('no-such-task', 'cb_a', { result: 1 }, at(10)), 'unknown');
      assert.equal(await store().beatCallback('no-such-task', 'cb_a', at(10)), 'unknown');
    });

    it('a heartbeat moves the heartbeat deadline (and sweepAt), at most once per write interval', async () => {
      const task = await suspended(BEATING);
      assert.equal(task.sweepAt, at(1) + 30_000);
      assert.equal(await store().beatCallback(task.taskId, 'cb_a', at(10_000)), 'recorded');
      const beaten = await read(task.taskId);
      assert.equal(beaten.callbackWait?.callbacks['cb_a']?.beatAt, at(10_000));
      assert.equal(beaten.sweepAt, at(10_000) + 30_000);
      assert.equal(await store().beatCallback(task.taskId, 'cb_a', at(10_000) + heartbeatWriteInterval(30_000) - 1), 'skipped');
      assert.deepEqual(await read(task.taskId), beaten);
      assert.equal(await store().beatCallback(task.taskId, 'cb_a', at(10_000) + 30_000), 'expired');
      assert.equal(await store().completeCallback(task.taskId, 'cb_a', { result: 1 }, at(10_000) + 30_000), 'expired');
    });

    it('a heartbeat of a settled callback is a conflict; one before the wait is recorded writes nothing', async () => {
      const { task } = await claimed();
      assert.equal(await store().beatCallback(task.taskId, 'cb_a', at(2)), 'skipped');
      await store().completeCallback(task.taskId, 'cb_a', { result: 1 }, at(3));
      assert.equal(await store().beatCallback(task.taskId, 'cb_a', at(4)), 'settled');
    });

    it('a cancel of a run suspended on a callback with an onCancel wakes it (due at once) instead of ending it', async () => {
      const task = await suspended({ callbacks: { cb_a: { since: at(1), timeoutAt: at(60_000), onCancel: true } } });
      assert.equal((await store().cancel(task.taskId, OWNER, at(10))).result, 'requested');
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'working');
      assert.equal(stored.cancelRequested, true);
      assert.equal(stored.sweepAt, at(10));
      const plain = await suspended();
      assert.equal((await store().cancel(plain.taskId, OWNER, at(10))).result, 'cancelled');
    });

    it('a later run suspends again on its next callback: the settlements it saw are the ones stored', async () => {
      const task = await suspended();
      await store().completeCallback(task.taskId, 'cb_a', { result: { first: true } }, at(10));
      const leased = await store().claim(task.taskId, 'w2', at(11));
      assert.ok(leased);
      const next: CallbackWait = { callbacks: { cb_b: { since: at(11), timeoutAt: at(70_000) } } };
      const seen = leased.callbacks;
      assert.equal(await store().awaitCallbacks(task.taskId, 'w2', { seen, wait: next, statusMessage: 'Again' }, at(12)), 'waiting');
      const stored = await read(task.taskId);
      assert.deepEqual(stored.callbackWait, next);
      assert.equal(stored.sweepAt, at(70_000));
    });

    it('finishing removes the wait', async () => {
      const task = await suspended();
      await store().completeCallback(task.taskId, 'cb_a', { result: 1 }, at(10));
      const leased = await store().claim(task.taskId, 'w3', at(11));
      assert.ok(leased);
      const finished = await store().finish(leased, 'w3', { status: 'completed', result: { content: [] } }, at(12));
      assert.equal(finished.callbackWait, undefined);
      assert.deepEqual((await read(task.taskId)).callbacks, { cb_a: { result: 1, at: at(10) } });
    });
  });
}
