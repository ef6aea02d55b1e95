/** TaskStore contract: a terminal task never changes again (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskRecord } from '../../shared/tasks/model.ts';
import { LeaseLostError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, ERROR, LEASE, MUCH_LATER, OWNER, RESULT } from './kit.ts';

/** The `a terminal task never changes again` cases. */
export function describeTerminalTasks(kit: ContractKit): void {
  const { store, read, claimed } = kit;
  describe('a terminal task never changes again', () => {
    const endings: Array<{ name: string; end: (task: TaskRecord, leaseOwner: string) => Promise<unknown> }> = [
      {
        name: 'completed by its worker',
        end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2)),
      },
      {
        name: 'failed by its worker',
        end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'failed', error: ERROR }, at(2)),
      },
      { name: 'cancelled by its worker', end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'cancelled' }, at(2)) },
      {
        name: 'failed by fail()',
        end: (task) => store().fail(task.taskId, { error: ERROR, statusMessage: 'gave up', now: at(1 + LEASE) }),
      },
      { name: 'cancelled by cancel()', end: (task) => store().cancel(task.taskId, OWNER, at(1 + LEASE)) },
    ];
    for (const { name, end } of endings) {
      it(`${name}: finish, heartbeat, release, fail, answer, cancel, claim and reschedule change nothing`, async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        await end(task, leaseOwner);
        const terminal = await read(task.taskId);
        assert.ok(['completed', 'failed', 'cancelled'].includes(terminal.status), `${terminal.status} is terminal`);
        const now = at(2 * LEASE);
        const unchanged = async (what: string) => assert.deepEqual(await read(task.taskId), terminal, `${what} changed a terminal task`);

        await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: { other: true } }, now), LeaseLostError);
        await unchanged('finish');
        await assert.rejects(store().heartbeat(task.taskId, leaseOwner, now, { leaseMs: LEASE, statusMessage: 'late' }), LeaseLostError);
        await unchanged('heartbeat');
        await assert.rejects(store().heartbeat(task.taskId, leaseOwner, now, { statusMessage: 'late' }), LeaseLostError);
        await unchanged('progress-only heartbeat');
        await store().release(task.taskId, leaseOwner, now);
        await unchanged('release');
        assert.equal(await store().fail(task.taskId, { error: ERROR, statusMessage: 'late', now: now }), undefined);
        await unchanged('fail');
        assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, now), { accepted: [], resumed: false });
        await unchanged('answer');
        assert.equal((await store().cancel(task.taskId, OWNER, now)).result, 'terminal');
        await unchanged('cancel');
        assert.equal(await store().claim(task.taskId, 'w2', now), undefined);
        await unchanged('claim');
        assert.equal(await store().reschedule(task.taskId, at(MUCH_LATER), at(MUCH_LATER)), false);
        await unchanged('reschedule');
      });
    }
  });
}
