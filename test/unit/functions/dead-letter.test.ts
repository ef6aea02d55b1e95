/**
 * The dead-letter function (`functions/dlq/app.ts`): a task whose message was
 * dead-lettered ends `failed`, unless it kept recording steps (the worker's
 * attempt cap, which counts progress, decides on it then).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDeadLetterHandler } from '../../../functions/dlq/app.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, sqsEvent, storePolicy } from '../../support/factories.ts';

const LEASE_MS = 1_000;

describe('dead-letter function', () => {
  it('fails a task whose messages kept failing without progress, and leaves one that recorded new steps', async () => {
    const store = new InMemoryTaskStore(storePolicy({ leaseMs: LEASE_MS }));
    const now = Date.now();
    await store.create(newTask({ taskId: 'stuck', tool: 'poison', now }));
    await store.create(newTask({ taskId: 'progressing', tool: 'steps', now }));
    for (const taskId of ['stuck', 'progressing']) assert.ok(await store.claim(taskId, `crashed-${taskId}`, now));
    await store.saveStep('progressing', { name: 's1', value: 1, now: now, position: 1 });
    const lines: Array<Record<string, unknown>> = [];
    const handler = createDeadLetterHandler({ store, log: (line) => void lines.push(line), now: () => now + LEASE_MS + 1 });

    const response = await handler(
      sqsEvent([JSON.stringify({ taskId: 'stuck', reason: 'start' }), JSON.stringify({ taskId: 'progressing', reason: 'sweep' })]),
    );

    assert.deepEqual(response, { batchItemFailures: [] }, 'both messages are handled (deleted)');
    const stuck = await store.get('stuck', 'alice', now + LEASE_MS + 1);
    assert.equal(stuck?.status, 'failed');
    assert.match(stuck?.statusMessage ?? '', /abandoned after its last attempt/);
    const progressing = await store.get('progressing', 'alice', now + LEASE_MS + 1);
    assert.equal(progressing?.status, 'working', "left to the sweeper and the worker's attempt cap");
    assert.ok(progressing?.sweepAt !== undefined, "still on the sweeper's index");
    assert.deepEqual(
      lines.filter((line) => line['event'] === 'dead-lettered').map((line) => [line['taskId'], line['changed']]),
      [
        ['stuck', true],
        ['progressing', false],
      ],
    );
  });

  it('fails a progressing task when its next message is dead-lettered without new steps (runs that die before they claim)', async () => {
    const store = new InMemoryTaskStore(storePolicy({ leaseMs: LEASE_MS }));
    const now = Date.now();
    await store.create(newTask({ taskId: 'broken-deploy', tool: 'steps', now }));
    assert.ok(await store.claim('broken-deploy', 'crashed', now));
    await store.saveStep('broken-deploy', { name: 's1', value: 1, now: now, position: 1 });
    const lines: Array<Record<string, unknown>> = [];
    let clock = now + LEASE_MS + 1;
    const handler = createDeadLetterHandler({ store, log: (line) => void lines.push(line), now: () => clock });
    const message = JSON.stringify({ taskId: 'broken-deploy', reason: 'sweep' });

    // Every later run dies before it can claim: the sweeper's messages are dead-lettered in turn.
    await handler(sqsEvent([message]));
    assert.equal((await store.get('broken-deploy', 'alice', clock))?.status, 'working', 'its progress is credited once');
    clock += 60_000;
    await handler(sqsEvent([message]));

    const ended = await store.get('broken-deploy', 'alice', clock);
    assert.equal(ended?.status, 'failed');
    assert.match(ended?.statusMessage ?? '', /abandoned after its last attempt/);
    assert.deepEqual(
      lines.filter((line) => line['event'] === 'dead-lettered').map((line) => line['changed']),
      [false, true],
    );
  });
});
