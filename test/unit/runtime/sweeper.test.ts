import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { sweep } from '../../../shared/runtime/sweeper.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const GRACE = 1000;
const LEASE = 5000;
/** W: a task is due for the sweeper one lease plus the grace after it is due to run. */
const W = LEASE + GRACE;
const settings = { leaseMs: LEASE, sweepGraceMs: GRACE };
const log = () => {};

async function setup() {
  const store = new InMemoryTaskStore(storePolicy({ retentionMs: 60_000, sweepGraceMs: GRACE, leaseMs: LEASE }));
  const queue = new InMemoryTaskQueue();
  const create = async (taskId: string, now: number) => store.create(newTask({ taskId, owner: 'o', tool: 't', now, ttlMs: 60_000 }));
  return { store, queue, create };
}

describe('sweep', () => {
  it('re-enqueues a task nobody started once a lease and the grace have passed, once', async () => {
    const { store, queue, create } = await setup();
    await create('lost', 0);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => W - 1 })).requeued, []);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => W })).requeued, ['lost']);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => W + 1 })).requeued, []);
    assert.deepEqual(queue.sent, [{ taskId: 'lost', reason: 'sweep' }]);
  });

  it('reschedules what it enqueues a lease and the grace ahead: the run it starts holds a lease meanwhile', async () => {
    const { store, queue, create } = await setup();
    await create('lost', 0);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => W })).requeued, ['lost']);
    assert.equal((await store.get('lost', 'o', W))?.sweepAt, W + LEASE + GRACE);
    // The swept message's run takes the lease at once and is never due while it holds it.
    assert.ok(await store.claim('lost', 'w1', W));
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => W + LEASE })).requeued, []);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => 2 * W - 1 })).requeued, []);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => 2 * W })).requeued, ['lost']);
  });

  it('leaves a running task alone until its lease and grace have passed', async () => {
    const { store, queue, create } = await setup();
    await create('running', 0);
    await store.claim('running', 'w1', 10);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => 10 + LEASE })).requeued, []);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => 10 + LEASE + GRACE })).requeued, ['running']);
  });

  it('a renewal pushes a running task past its renewed lease; progress alone does not', async () => {
    const { store, queue, create } = await setup();
    await create('renewed', 0);
    await store.claim('renewed', 'w1', 10);
    await store.heartbeat('renewed', 'w1', 2000, { statusMessage: 'working on it' });
    assert.equal((await store.get('renewed', 'o', 2000))?.sweepAt, W, 'progress leaves sweepAt alone');
    await store.heartbeat('renewed', 'w1', 2000, { leaseMs: LEASE });
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => 2000 + LEASE + GRACE - 1 })).requeued, []);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => 2000 + LEASE + GRACE })).requeued, ['renewed']);
  });

  it('never touches tasks waiting for input or finished', async () => {
    const { store, queue, create } = await setup();
    const { task: waiting } = await create('waiting', 0);
    await store.claim('waiting', 'w', 0);
    await store.finish(waiting, 'w', { status: 'input_required', inputRequests: { k: { method: 'elicitation/create' } } }, 1);
    const { task: done } = await create('done', 0);
    await store.claim('done', 'w', 0);
    await store.finish(done, 'w', { status: 'completed', result: { content: [] } }, 1);
    assert.deepEqual((await sweep({ store, queue, config: settings, log, now: () => 10 ** 9 })).requeued, []);
  });

  it('two sweepers racing enqueue a task once', async () => {
    const { store, queue, create } = await setup();
    await create('contested', 0);
    const results = await Promise.all([1, 2].map(() => sweep({ store, queue, config: settings, log, now: () => 2 * W })));
    assert.equal(results.flatMap((r) => r.requeued).length, 1);
    assert.equal(queue.sent.length, 1);
  });

  // No silent failure path.
  it('logs a task it cannot enqueue (ids and error name only) and goes on with the others', async () => {
    const { store, queue, create } = await setup();
    await create('a', 0);
    await create('b', 1);
    const lines: Record<string, unknown>[] = [];
    const failing = {
      send: async (message: { taskId: string; reason: string }) => {
        if (message.taskId === 'a') throw Object.assign(new Error('secret queue detail'), { name: 'AccessDenied' });
        return queue.send(message as never);
      },
    } as unknown as InMemoryTaskQueue;
    const { requeued } = await sweep({ store, queue: failing, config: settings, log: (line) => void lines.push(line), now: () => W + 1 });
    assert.deepEqual(requeued, ['b']);
    assert.deepEqual(
      lines.find((line) => line['event'] === 'sweep-failed'),
      { event: 'sweep-failed', taskId: 'a', error: 'AccessDenied' },
    );
    assert.doesNotMatch(JSON.stringify(lines), /secret/);
  });

  it('drains a backlog larger than a page in one run, page after page, several tasks at once', async () => {
    const { store, queue, create } = await setup();
    for (let i = 0; i < 250; i++) await create(`t${i}`, 0);
    let reads = 0;
    let inFlight = 0;
    let most = 0;
    const counting = Object.assign(Object.create(store) as InMemoryTaskStore, {
      findDue: (now: number, limit: number) => {
        reads += 1;
        return store.findDue(now, limit);
      },
      reschedule: async (taskId: string, now: number, nextAt: number) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
        return store.reschedule(taskId, now, nextAt);
      },
    });
    const { requeued } = await sweep({ store: counting, queue, config: settings, log, now: () => W }, { page: 100, maxParallelism: 8 });
    assert.equal(requeued.length, 250);
    assert.equal(new Set(queue.sent.map((message) => message.taskId)).size, 250);
    assert.equal(reads, 3, 'three pages: 100, 100, 50');
    assert.equal(most, 8, 'eight at once, no more');
  });

  it('starts no page after its deadline; the next run takes the rest', async () => {
    const { store, queue, create } = await setup();
    for (let i = 0; i < 5; i++) await create(`t${i}`, 0);
    let clock = W;
    const first = await sweep({ store, queue, config: settings, log, now: () => clock++ }, { page: 2, deadline: W });
    assert.equal(first.requeued.length, 2, 'one page, then the deadline');
    const rest = await sweep({ store, queue, config: settings, log, now: () => W + 10 }, { page: 2 });
    assert.equal(rest.requeued.length, 3);
  });
});
