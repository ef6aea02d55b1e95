/** The sweeper's Lambda handler: a run reads pages while the invocation has time, and reports what it did. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSweeperHandler } from '../../../functions/sweeper/app.ts';
import { loadConfig } from '../../../shared/config.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { SWEEP_DEADLINE_MARGIN_MS, SWEEP_PAGE } from '../../../shared/runtime/sweeper.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const config = loadConfig({ TASKS_TABLE_NAME: 't', TASKS_QUEUE_URL: 'q' });
const DUE = config.leaseMs + config.sweepGraceMs;

async function backlog(count: number) {
  const store = new InMemoryTaskStore(storePolicy({ leaseMs: config.leaseMs, sweepGraceMs: config.sweepGraceMs }));
  for (let i = 0; i < count; i++) await store.create(newTask({ taskId: `t${i}`, now: 0 }));
  return store;
}

describe('sweeper handler', () => {
  it('with time left, sweeps the whole backlog in one invocation', async () => {
    const store = await backlog(SWEEP_PAGE * 2 + 1);
    const queue = new InMemoryTaskQueue();
    const handler = createSweeperHandler({ config, store, queue, log: () => {}, now: () => DUE });
    const result = await handler({}, { awsRequestId: 'r1', getRemainingTimeInMillis: () => 30_000 });
    assert.deepEqual(result, { requeued: SWEEP_PAGE * 2 + 1, expired: 0 });
  });

  it('with less time left than the margin, sweeps one page and leaves the rest to the next run', async () => {
    const store = await backlog(SWEEP_PAGE * 2 + 1);
    const queue = new InMemoryTaskQueue();
    let clock = DUE;
    const handler = createSweeperHandler({ config, store, queue, log: () => {}, now: () => clock++ });
    const result = await handler({}, { awsRequestId: 'r1', getRemainingTimeInMillis: () => SWEEP_DEADLINE_MARGIN_MS - 1 });
    assert.deepEqual(result, { requeued: SWEEP_PAGE, expired: 0 });
  });
});
