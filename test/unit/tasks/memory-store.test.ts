import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import type { InputRequest } from '../../../shared/tasks/model.ts';
import { TooManyTasksError } from '../../../shared/tasks/store-errors.ts';
import type { NewTask } from '../../../shared/tasks/store-types.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

/**
 * The in-memory store copies records in and out: whatever the caller does
 * with the objects it passed or got back afterwards, the stored task stays as
 * written. (The DynamoDB store serialises, so it cannot share objects; the
 * contract suite holds both to everything else.)
 */
const POLICY = storePolicy();
const T0 = 1_700_000_000_000;
const OWNER = 'alice';

const task1 = (overrides: Partial<NewTask> = {}): NewTask =>
  newTask({
    taskId: 'task-1',
    owner: OWNER,
    tool: 'greet',
    arguments: { who: { name: 'Ada' } },
    clientCapabilities: { elicitation: { form: {} } },
    inputResponses: { earlier: { picked: 'yes' } },
    now: T0,
    ttlMs: 60_000,
    ...overrides,
  });

async function stored(store: InMemoryTaskStore) {
  const task = await store.get('task-1', OWNER, T0 + 10);
  assert.ok(task);
  return task;
}

describe('InMemoryTaskStore keeps copies, never the caller’s objects', () => {
  it('create: changing the arguments, capabilities or answers passed in afterwards changes nothing stored', async () => {
    const store = new InMemoryTaskStore(POLICY);
    const input = task1();
    await store.create(input);
    (input.arguments['who'] as { name: string }).name = 'Grace';
    input.arguments['extra'] = true;
    input.clientCapabilities['sampling'] = {};
    (input.inputResponses['earlier'] as { picked: string }).picked = 'no';
    const task = await stored(store);
    assert.deepEqual(task.arguments, { who: { name: 'Ada' } });
    assert.deepEqual(task.clientCapabilities, { elicitation: { form: {} } });
    assert.deepEqual(task.inputResponses, { earlier: { picked: 'yes' } });
  });

  it('create: changing the record it returns changes nothing stored', async () => {
    const store = new InMemoryTaskStore(POLICY);
    const { task } = await store.create(task1());
    (task.arguments['who'] as { name: string }).name = 'Grace';
    task.issuedKeys.push('x');
    assert.deepEqual((await stored(store)).arguments, { who: { name: 'Ada' } });
    assert.deepEqual((await stored(store)).issuedKeys, []);
  });

  it('finish: changing the outcome’s input requests or result afterwards changes nothing stored', async () => {
    const store = new InMemoryTaskStore(POLICY);
    await store.create(task1());
    const claimed = await store.claim('task-1', 'w1', T0 + 1);
    assert.ok(claimed);
    const request: InputRequest = { method: 'elicitation/create', params: { message: 'Which file?' } };
    await store.finish(claimed, 'w1', { status: 'input_required', inputRequests: { a: request } }, T0 + 2);
    request.params!['message'] = 'Changed';
    const waiting = await stored(store);
    assert.deepEqual(waiting.status === 'input_required' && waiting.inputRequests, {
      a: { method: 'elicitation/create', params: { message: 'Which file?' } },
    });

    await store.answer('task-1', OWNER, { a: 'file.txt' }, T0 + 3);
    const again = await store.claim('task-1', 'w2', T0 + 4);
    assert.ok(again);
    const result = { content: [{ type: 'text', text: 'done' }] };
    await store.finish(again, 'w2', { status: 'completed', result }, T0 + 5);
    result.content[0]!.text = 'changed';
    const completed = await stored(store);
    assert.deepEqual(completed.status === 'completed' && completed.result, { content: [{ type: 'text', text: 'done' }] });
  });

  it('answer: changing an answer passed in afterwards changes nothing stored', async () => {
    const store = new InMemoryTaskStore(POLICY);
    await store.create(task1());
    const claimed = await store.claim('task-1', 'w1', T0 + 1);
    assert.ok(claimed);
    await store.finish(claimed, 'w1', { status: 'input_required', inputRequests: { a: { method: 'elicitation/create' } } }, T0 + 2);
    const answer = { action: 'accept', content: { name: 'file.txt' } };
    await store.answer('task-1', OWNER, { a: answer }, T0 + 3);
    answer.content.name = 'other.txt';
    assert.deepEqual((await stored(store)).inputResponses['a'], { action: 'accept', content: { name: 'file.txt' } });
  });

  it('fail: changing the error passed in afterwards changes nothing stored', async () => {
    const store = new InMemoryTaskStore(POLICY);
    await store.create(task1());
    const error = { code: -32603, message: 'Gave up', data: { attempts: 3 } };
    assert.ok(await store.fail('task-1', { error: error, statusMessage: 'abandoned', now: T0 + 1 }));
    error.data.attempts = 4;
    const failed = await stored(store);
    assert.deepEqual(failed.status === 'failed' && failed.error, { code: -32603, message: 'Gave up', data: { attempts: 3 } });
  });
});

describe('InMemoryTaskStore listing', () => {
  it('lists nothing created while its policy lists no tasks', async () => {
    const store = new InMemoryTaskStore(storePolicy());
    const { task } = await store.create(newTask({ owner: 'alice' }));
    assert.deepEqual(await store.list('alice', 1, { limit: 10 }), { tasks: [] });
    assert.equal((await store.get(task.taskId, 'alice', 1))?.status, 'working');
  });
});

describe('InMemoryTaskStore with a cap on unfinished tasks', () => {
  it('refuses a principal at the cap, saying to try again after the shortest poll interval of its unfinished tasks', async () => {
    const store = new InMemoryTaskStore(storePolicy({ maxUnfinishedTasks: 2 }));
    await store.create(newTask({ owner: OWNER, now: T0, pollIntervalMs: 4000 }));
    await store.create(newTask({ owner: OWNER, now: T0, pollIntervalMs: 1500 }));
    await assert.rejects(store.create(newTask({ owner: OWNER, now: T0 })), (error: unknown) => {
      assert.ok(error instanceof TooManyTasksError);
      assert.deepEqual(error.data, { reason: 'unfinished-task-limit', limit: 2, retryAfterMs: 1500 });
      return true;
    });
    assert.equal((await store.create(newTask({ owner: 'bob', now: T0 }))).created, true, 'another principal has slots of its own');
  });
});
