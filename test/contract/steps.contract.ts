/** TaskStore contract: steps (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { at, type ContractKit } from './kit.ts';

/** The `steps` cases. */
export function describeSteps(kit: ContractKit): void {
  const { store, created, claimed } = kit;
  describe('steps', () => {
    it('a task without steps loads an empty map', async () => {
      assert.deepEqual(await store().loadSteps(randomUUID()), new Map());
    });

    it('saveStep returns the value it recorded and loadSteps returns every step of the task', async () => {
      const { task } = await claimed();
      const names = ['fetch', 'step#2', 'with spaces / and: colons', 'Ünïcødé 世界 😀', '', '#', 'fetch#again'];
      for (const [index, name] of names.entries()) {
        assert.deepEqual(await store().saveStep(task.taskId, { name, value: { index, name }, now: at(5) }), { index, name });
      }
      const other = await created();
      await store().saveStep(other.taskId, { name: 'fetch', value: 'not this task', now: at(5) });

      const steps = await store().loadSteps(task.taskId);
      assert.deepEqual(new Set(steps.keys()), new Set(names));
      for (const [index, name] of names.entries()) assert.deepEqual(steps.get(name), { index, name });
    });

    it('is write-once: a second save of the same name returns the first value', async () => {
      const { task } = await claimed();
      assert.deepEqual(await store().saveStep(task.taskId, { name: 'charge', value: { chargeId: 'ch_1' }, now: at(5) }), {
        chargeId: 'ch_1',
      });
      assert.deepEqual(await store().saveStep(task.taskId, { name: 'charge', value: { chargeId: 'ch_2' }, now: at(6) }), {
        chargeId: 'ch_1',
      });
      assert.deepEqual(await store().loadSteps(task.taskId), new Map([['charge', { chargeId: 'ch_1' }]]));
    });

    it('of two concurrent saves of one step, both get the same recorded value', async () => {
      const { task } = await claimed();
      const results = await Promise.all(
        ['first', 'second', 'third'].map((value) => store().saveStep(task.taskId, { name: 'race', value, now: at(5) })),
      );
      assert.equal(new Set(results).size, 1);
      assert.deepEqual(await store().loadSteps(task.taskId), new Map([['race', results[0]]]));
    });

    const values: Array<{ name: string; value: unknown }> = [
      { name: 'null', value: null },
      { name: 'a number', value: 42.5 },
      { name: 'a string', value: 'text 😀' },
      { name: 'false', value: false },
      { name: 'an array', value: [1, 'two', { three: [3] }] },
      { name: 'nothing (undefined)', value: undefined },
    ];
    for (const { name, value } of values) {
      it(`records ${name} as a step value`, async () => {
        const { task } = await claimed();
        assert.deepEqual(await store().saveStep(task.taskId, { name: 'v', value, now: at(5) }), value);
        const steps = await store().loadSteps(task.taskId);
        assert.equal(steps.has('v'), true);
        assert.deepEqual(steps.get('v'), value);
        assert.deepEqual(await store().saveStep(task.taskId, { name: 'v', value: 'other', now: at(6) }), value);
      });
    }
  });
}
