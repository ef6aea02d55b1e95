/** TaskStore contract: answer (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { TaskNotFoundError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, ELICIT, OWNER, SAMPLE, STRANGER, T0, W } from './kit.ts';

/** The `answer` cases. */
export function describeAnswer(kit: ContractKit): void {
  const { store, read, claimed, waiting, completed } = kit;
  describe('answer', () => {
    it('a partial answer removes the answered key at once and keeps the task waiting', async () => {
      const task = await waiting({ a: ELICIT, b: SAMPLE });
      const answer = { action: 'accept', content: { name: 'a.txt' } };
      assert.deepEqual(await store().answer(task.taskId, OWNER, { a: answer }, at(10)), { accepted: ['a'], resumed: false });
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'input_required');
      assert.deepEqual(stored.status === 'input_required' && stored.inputRequests, { b: SAMPLE });
      assert.deepEqual(stored.inputResponses, { a: answer });
      assert.equal(stored.lastUpdatedAt, at(10));
      assert.equal(stored.version, task.version + 1);
      assert.equal('sweepAt' in stored, false);
    });

    it('answering the last key moves the task back to working; unknown keys are ignored', async () => {
      const task = await waiting({ a: ELICIT, b: SAMPLE });
      await store().answer(task.taskId, OWNER, { a: 'A' }, at(10));
      assert.deepEqual(await store().answer(task.taskId, OWNER, { zzz: 'Z', b: 'B' }, at(11)), { accepted: ['b'], resumed: true });
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'working');
      assert.equal('inputRequests' in stored, false);
      assert.deepEqual(stored.inputResponses, { a: 'A', b: 'B' });
      assert.equal(stored.lastUpdatedAt, at(11));
      assert.equal(stored.sweepAt, at(11) + W);
      assert.equal(stored.version, task.version + 2);
      assert.equal((await store().claim(task.taskId, 'w2', at(12)))?.lease?.owner, 'w2');
    });

    it('answering every key at once resumes in one call', async () => {
      const task = await waiting({ a: ELICIT, b: SAMPLE });
      const result = await store().answer(task.taskId, OWNER, { b: 'B', a: 'A' }, at(10));
      assert.deepEqual([...result.accepted].sort(), ['a', 'b']);
      assert.equal(result.resumed, true);
      assert.equal((await read(task.taskId)).status, 'working');
    });

    it('only unknown keys: nothing accepted, nothing changes', async () => {
      const task = await waiting({ a: ELICIT });
      assert.deepEqual(await store().answer(task.taskId, OWNER, { zzz: 1 }, at(10)), { accepted: [], resumed: false });
      assert.deepEqual(await read(task.taskId), task);
    });

    it('a key already answered is no longer outstanding: the first answer stands', async () => {
      const task = await waiting({ a: ELICIT, b: SAMPLE });
      await store().answer(task.taskId, OWNER, { a: 'first' }, at(10));
      const before = await read(task.taskId);
      assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'second' }, at(11)), { accepted: [], resumed: false });
      assert.deepEqual(await read(task.taskId), before);
      assert.deepEqual(before.inputResponses, { a: 'first' });
    });

    it('answering a working task accepts nothing and changes nothing', async () => {
      const { task } = await claimed();
      assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, at(5)), { accepted: [], resumed: false });
      assert.deepEqual(await read(task.taskId), task);
    });

    it('keeps answers given at create and adds later ones', async () => {
      const task = await waiting({ k: ELICIT }, { inputResponses: { early: 'E' } });
      assert.deepEqual(task.inputResponses, { early: 'E' });
      await store().answer(task.taskId, OWNER, { k: 'K' }, at(10));
      assert.deepEqual((await read(task.taskId)).inputResponses, { early: 'E', k: 'K' });
    });

    const notFound: Array<{ name: string; call: (taskId: string) => Promise<unknown> }> = [
      { name: 'another owner', call: (taskId) => store().answer(taskId, STRANGER, { a: 'A' }, at(10)) },
      { name: 'an unknown task', call: () => store().answer(randomUUID(), OWNER, { a: 'A' }, at(10)) },
    ];
    for (const { name, call } of notFound) {
      it(`throws TaskNotFoundError for ${name} and changes nothing`, async () => {
        const task = await waiting({ a: ELICIT });
        await assert.rejects(call(task.taskId), TaskNotFoundError);
        assert.deepEqual(await read(task.taskId), task);
      });
    }

    it('throws TaskNotFoundError for an expired terminal task', async () => {
      const task = await completed();
      await assert.rejects(store().answer(task.taskId, OWNER, { a: 'A' }, T0 + task.ttlMs), TaskNotFoundError);
      assert.deepEqual(await read(task.taskId), task);
    });
  });
}
