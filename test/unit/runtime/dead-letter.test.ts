/**
 * The dead-letter policy (`shared/runtime/dead-letter.ts`) on its own: what a
 * dead-lettered message does to its task, and when it must stay in the queue.
 * The function around it (`functions/dlq/app.ts`) is tested in test/unit/functions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEAD_LETTERED_MESSAGE, handleDeadLetter } from '../../../shared/runtime/dead-letter.ts';
import { EXHAUSTED_ERROR } from '../../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

describe('handleDeadLetter', () => {
  it('ends the task failed with the exhausted error, logging dead-lettered then task-ended', async () => {
    const store = new InMemoryTaskStore(storePolicy({ leaseMs: 1_000 }));
    const now = Date.now();
    await store.create(newTask({ taskId: 'stuck', tool: 'poison', now }));
    const lines: Array<Record<string, unknown>> = [];
    const body = JSON.stringify({ taskId: 'stuck', reason: 'start' });
    assert.equal(await handleDeadLetter({ store, log: (line) => void lines.push(line), now: () => now + 1 }, body), true);
    const task = await store.get('stuck', 'alice', now + 1);
    assert.deepEqual(task?.status === 'failed' && [task.error, task.statusMessage], [EXHAUSTED_ERROR, DEAD_LETTERED_MESSAGE]);
    assert.deepEqual(
      lines.map((line) => line['event']),
      ['dead-lettered', 'task-ended'],
    );
  });

  it('handles a malformed message (nothing to fail) and keeps one whose task could not be read', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = (line: Record<string, unknown>) => void lines.push(line);
    const store = new InMemoryTaskStore(storePolicy({ leaseMs: 1_000 }));
    assert.equal(await handleDeadLetter({ store, log }, 'not json'), true);
    store.loadJournal = async () => {
      throw new Error('throttled');
    };
    assert.equal(await handleDeadLetter({ store, log }, JSON.stringify({ taskId: 't', reason: 'start' })), false);
    assert.deepEqual(lines, [{ event: 'malformed-message' }, { event: 'dead-letter-error', taskId: 't', error: 'Error' }]);
  });
});
