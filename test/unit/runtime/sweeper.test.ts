import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { sweep } from '../../../shared/runtime/sweeper.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory-store.ts';

const GRACE = 1000;

async function setup() {
  const store = new InMemoryTaskStore({ retentionMs: 60_000, sweepGraceMs: GRACE, stepRetentionMs: 86_400_000 });
  const queue = new InMemoryTaskQueue();
  const create = async (taskId: string, now: number) =>
    store.create({ taskId, owner: 'o', tool: 't', arguments: {}, clientCapabilities: {}, inputResponses: {}, now, ttlMs: 60_000, pollIntervalMs: 1000 });
  return { store, queue, create };
}

describe('sweep', () => {
  it('re-enqueues a task nobody started once its grace period has passed, once', async () => {
    const { store, queue, create } = await setup();
    await create('lost', 0);
    assert.deepEqual((await sweep({ store, queue, settings: { sweepGraceMs: GRACE }, now: () => GRACE - 1 })).requeued, []);
    assert.deepEqual((await sweep({ store, queue, settings: { sweepGraceMs: GRACE }, now: () => GRACE })).requeued, ['lost']);
    assert.deepEqual((await sweep({ store, queue, settings: { sweepGraceMs: GRACE }, now: () => GRACE + 1 })).requeued, []);
    assert.deepEqual(queue.sent, [{ taskId: 'lost', reason: 'sweep' }]);
  });

  it('leaves a running task alone until its lease and grace have passed', async () => {
    const { store, queue, create } = await setup();
    await create('running', 0);
    await store.claim('running', 'w1', 10, 5000);
    assert.deepEqual((await sweep({ store, queue, settings: { sweepGraceMs: GRACE }, now: () => 5000 })).requeued, []);
    assert.deepEqual((await sweep({ store, queue, settings: { sweepGraceMs: GRACE }, now: () => 10 + 5000 + GRACE })).requeued, ['running']);
  });

  it('never touches tasks waiting for input or finished', async () => {
    const { store, queue, create } = await setup();
    const { task: waiting } = await create('waiting', 0);
    await store.claim('waiting', 'w', 0, 100);
    await store.finish(waiting, 'w', { status: 'input_required', inputRequests: { k: { method: 'elicitation/create' } } }, 1);
    const { task: done } = await create('done', 0);
    await store.claim('done', 'w', 0, 100);
    await store.finish(done, 'w', { status: 'completed', result: { content: [] } }, 1);
    assert.deepEqual((await sweep({ store, queue, settings: { sweepGraceMs: GRACE }, now: () => 10 ** 9 })).requeued, []);
  });

  it('two sweepers racing enqueue a task once', async () => {
    const { store, queue, create } = await setup();
    await create('contested', 0);
    const results = await Promise.all([1, 2].map(() => sweep({ store, queue, settings: { sweepGraceMs: GRACE }, now: () => 2 * GRACE })));
    assert.equal(results.flatMap((r) => r.requeued).length, 1);
    assert.equal(queue.sent.length, 1);
  });
});
