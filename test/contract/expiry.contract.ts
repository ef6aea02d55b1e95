/** TaskStore contract: expiry (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskRecord } from '../../shared/tasks/model.ts';
import { at, type ContractKit, ELICIT, MUCH_LATER, OWNER, RETENTION, TTL } from './kit.ts';

/** The `expiry` cases. */
export function describeExpiry(kit: ContractKit): void {
  const { store, read, created, claimed, waiting, completed } = kit;
  describe('expiry', () => {
    const live: Array<{ name: string; make: () => Promise<TaskRecord> }> = [
      { name: 'queued', make: () => created() },
      { name: 'running', make: async () => (await claimed()).task },
      { name: 'waiting for input', make: () => waiting({ a: ELICIT }) },
    ];
    for (const { name, make } of live) {
      it(`a ${name} task never expires: get long after createdAt + ttlMs still finds it`, async () => {
        const task = await make();
        assert.deepEqual(await store().get(task.taskId, OWNER, at(TTL)), task);
        assert.deepEqual(await store().get(task.taskId, OWNER, at(MUCH_LATER)), task);
      });
    }

    it('a queued task can still be claimed long after createdAt + ttlMs', async () => {
      const task = await created();
      assert.equal((await store().claim(task.taskId, 'w1', at(MUCH_LATER)))?.lease?.owner, 'w1');
    });

    it('a task waiting for input still takes answers long after createdAt + ttlMs', async () => {
      const task = await waiting({ a: ELICIT });
      assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, at(MUCH_LATER)), { accepted: ['a'], resumed: true });
      assert.equal((await read(task.taskId, at(MUCH_LATER))).status, 'working');
    });

    // Completed at 2 ms: ttlMs becomes max(TTL, 2 + RETENTION).
    const terminalTtl = 2 + RETENTION;
    const expiry: Array<{ offset: number; visible: boolean }> = [
      { offset: terminalTtl - 1, visible: true },
      { offset: terminalTtl, visible: false },
      { offset: terminalTtl + 1, visible: false },
    ];
    for (const { offset, visible } of expiry) {
      it(`a terminal task (ttl ${terminalTtl}) at createdAt + ${offset} ms is ${visible ? 'found' : 'gone'}`, async () => {
        const task = await completed();
        assert.equal(task.ttlMs, terminalTtl);
        const found = await store().get(task.taskId, OWNER, at(offset));
        assert.equal(found?.taskId, visible ? task.taskId : undefined);
      });
    }
  });
}
