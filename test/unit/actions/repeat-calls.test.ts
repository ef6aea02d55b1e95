/** Repeated identical calls join (`shared/actions/repeat-calls.ts`, `TaskActions.createOrJoin`), on the in-memory store. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REPEAT_WINDOW_MS, repeatCallIds } from '../../../shared/actions/repeat-calls.ts';
import { TaskActions, type TaskToStart } from '../../../shared/actions/task-actions.ts';
import { purposeKey } from '../../../shared/keys.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { storePolicy } from '../../support/factories.ts';

const KEY = purposeKey(new Uint8Array(32).fill(3), 'repeat-call-id');
const T0 = 50 * REPEAT_WINDOW_MS;
const call = { principal: 'alice', tool: 'long_computation', args: { seconds: 45, label: 'x' } };

describe('repeated call ids', () => {
  it('are the same for the same call in the same window, whatever the order of the arguments', () => {
    const ids = repeatCallIds(KEY, call, T0);
    assert.deepEqual(repeatCallIds(KEY, { ...call, args: { label: 'x', seconds: 45 } }, T0 + REPEAT_WINDOW_MS - 1), ids);
    assert.match(ids.current[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('differ for another principal, tool, arguments or key', () => {
    const [current] = repeatCallIds(KEY, call, T0).current;
    for (const other of [
      repeatCallIds(KEY, { ...call, principal: 'bob' }, T0),
      repeatCallIds(KEY, { ...call, tool: 'intake_form' }, T0),
      repeatCallIds(KEY, { ...call, args: { seconds: 46, label: 'x' } }, T0),
      repeatCallIds(purposeKey(new Uint8Array(32).fill(4), 'repeat-call-id'), call, T0),
    ]) {
      assert.notEqual(other.current[0], current);
    }
  });

  it("name the previous window's ids once the window turns, and distinct ids per slot", () => {
    const before = repeatCallIds(KEY, call, T0);
    const after = repeatCallIds(KEY, call, T0 + REPEAT_WINDOW_MS);
    assert.deepEqual(after.previous, before.current);
    assert.equal(new Set([...after.current, ...after.previous]).size, 2 * after.current.length);
  });
});

describe('createOrJoin', () => {
  const setup = () => {
    let now = T0;
    const store = new InMemoryTaskStore(storePolicy());
    const queue = new InMemoryTaskQueue();
    const lines: Array<Record<string, unknown>> = [];
    const actions = new TaskActions({ store, queue, log: (line) => void lines.push(line), now: () => now });
    const start: TaskToStart = {
      owner: call.principal,
      tool: call.tool,
      arguments: call.args,
      clientCapabilities: {},
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
    };
    const join = () => actions.createOrJoin(start, repeatCallIds(KEY, call, now));
    return { store, queue, lines, join, advance: (ms: number) => (now += ms) };
  };

  it('a repeat joins the unfinished task: one task, queued once', async () => {
    const { queue, lines, join } = setup();
    const first = await join();
    const second = await join();
    assert.equal(first.joined, false);
    assert.equal(second.joined, true);
    assert.equal(second.task.taskId, first.task.taskId);
    assert.equal(queue.sent.length, 1, 'the work is started once');
    assert.equal(lines.filter((line) => line['event'] === 'repeat-joined').length, 1);
  });

  it('a repeat in the next window still joins it (the previous window is read)', async () => {
    const { queue, join, advance } = setup();
    const first = await join();
    advance(REPEAT_WINDOW_MS);
    const second = await join();
    assert.deepEqual([second.joined, second.task.taskId], [true, first.task.taskId]);
    assert.equal(queue.sent.length, 1);
  });

  it("a repeat after the task ended starts a task of its own, and that task's repeats join it", async () => {
    const { store, queue, join } = setup();
    const end = async (taskId: string) => {
      const claimed = await store.claim(taskId, 'w', T0);
      await store.finish(claimed!, 'w', { status: 'completed', result: { content: [] } }, T0 + 1);
    };
    const first = await join();
    await end(first.task.taskId);
    const second = await join();
    assert.equal(second.joined, false);
    assert.notEqual(second.task.taskId, first.task.taskId);
    const third = await join();
    assert.deepEqual([third.joined, third.task.taskId], [true, second.task.taskId]);
    assert.equal(queue.sent.length, 2);
  });

  it('past the last id of the window a call still runs, under a fresh id', async () => {
    const { store, queue, join } = setup();
    const seen = new Set<string>();
    for (let round = 0; round < 5; round++) {
      const { task, joined } = await join();
      assert.equal(joined, false);
      seen.add(task.taskId);
      const claimed = await store.claim(task.taskId, 'w', T0);
      await store.finish(claimed!, 'w', { status: 'completed', result: { content: [] } }, T0 + 1);
    }
    assert.equal(seen.size, 5);
    assert.equal(queue.sent.length, 5);
  });
});
