/** Repeated identical calls join (`shared/actions/repeat-calls.ts`, `TaskActions.createOrJoin`), on the in-memory store. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { REPEAT_WINDOW_MS, repeatWindows } from '../../../shared/actions/repeat-calls.ts';
import { TaskActions, type TaskToStart } from '../../../shared/actions/task-actions.ts';
import { canonicalJson } from '../../../shared/canonical-json.ts';
import { purposeKey } from '../../../shared/keys.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import type { TaskStore } from '../../../shared/tasks/store.ts';
import { storePolicy } from '../../support/factories.ts';

const KEY = purposeKey(new Uint8Array(32).fill(3), 'repeat-call-id');
const T0 = 50 * REPEAT_WINDOW_MS;
const call = { principal: 'alice', tool: 'long_computation', args: { seconds: 45, label: 'x' } };

describe('repeated call ids', () => {
  it('are the same for the same call in the same window, whatever the order of the arguments', () => {
    const ids = repeatWindows(KEY, call, T0);
    const again = repeatWindows(KEY, { ...call, args: { label: 'x', seconds: 45 } }, T0 + REPEAT_WINDOW_MS - 1);
    assert.deepEqual(
      [again.current.head, again.current.run(7), again.previous.head],
      [ids.current.head, ids.current.run(7), ids.previous.head],
    );
    assert.match(ids.current.head, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('differ for another principal, tool, arguments or key', () => {
    const { head } = repeatWindows(KEY, call, T0).current;
    for (const other of [
      repeatWindows(KEY, { ...call, principal: 'bob' }, T0),
      repeatWindows(KEY, { ...call, tool: 'intake_form' }, T0),
      repeatWindows(KEY, { ...call, args: { seconds: 46, label: 'x' } }, T0),
      repeatWindows(purposeKey(new Uint8Array(32).fill(4), 'repeat-call-id'), call, T0),
    ]) {
      assert.notEqual(other.current.head, head);
    }
  });

  it("name the previous window's once the window turns; run 0 is the head, and every run has an id of its own", () => {
    const before = repeatWindows(KEY, call, T0);
    const after = repeatWindows(KEY, call, T0 + REPEAT_WINDOW_MS);
    assert.equal(after.previous.head, before.current.head);
    assert.equal(after.current.run(0), after.current.head);
    const ids = [after.current, after.previous].flatMap((window) => Array.from({ length: 20 }, (_, n) => window.run(n)));
    assert.equal(new Set(ids).size, 40);
  });

  it("give runs 0–2 the ids the previous release's three slots had, so its rows are found after an upgrade", () => {
    // The previous release: HMAC(key, `${window}/${slot}\n` + canonical call), shaped as a version 8 UUID.
    const slot = (window: number, n: number) => {
      const bytes = createHmac('sha256', KEY)
        .update(`${window}/${n}\n`)
        .update(canonicalJson([call.principal, call.tool, call.args]))
        .digest()
        .subarray(0, 16);
      bytes[6] = (bytes[6]! & 0x0f) | 0x80;
      bytes[8] = (bytes[8]! & 0x3f) | 0x80;
      const hex = bytes.toString('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    };
    const { current } = repeatWindows(KEY, call, T0);
    assert.deepEqual(
      [0, 1, 2].map(current.run),
      [0, 1, 2].map((n) => slot(50, n)),
    );
  });
});

/** The store's reads and creates, counted. */
function counted(store: TaskStore) {
  const calls = { get: 0, create: 0 };
  const counting = Object.create(store) as TaskStore;
  counting.get = (...args) => {
    calls.get += 1;
    return store.get(...args);
  };
  counting.create = (...args) => {
    calls.create += 1;
    return store.create(...args);
  };
  return { counting, calls };
}

describe('createOrJoin', () => {
  const setup = () => {
    let now = T0;
    const store = new InMemoryTaskStore(storePolicy());
    const { counting, calls } = counted(store);
    const queue = new InMemoryTaskQueue();
    const lines: Array<Record<string, unknown>> = [];
    const actions = new TaskActions({ store: counting, queue, log: (line) => void lines.push(line), now: () => now });
    const start: TaskToStart = {
      owner: call.principal,
      tool: call.tool,
      arguments: call.args,
      clientCapabilities: {},
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
    };
    /** One call, and what it cost the store. */
    const join = async () => {
      calls.get = 0;
      calls.create = 0;
      const joined = await actions.createOrJoin(start, repeatWindows(KEY, call, now));
      return { ...joined, cost: { ...calls } };
    };
    const end = async (taskId: string) => {
      const claimed = await store.claim(taskId, 'w', now);
      assert.ok(claimed, `task ${taskId} can be claimed`);
      await store.finish(claimed, 'w', { status: 'completed', result: { content: [] } }, now + 1);
    };
    return { store, queue, lines, join, end, start, advance: (ms: number) => (now += ms) };
  };

  it('a repeat joins the unfinished task: one task, queued once, the repeat one read', async () => {
    const { queue, lines, join } = setup();
    const first = await join();
    const second = await join();
    assert.equal(first.joined, false);
    assert.deepEqual(first.cost, { get: 2, create: 1 }, "this window's head and the previous window's read, then the create");
    assert.deepEqual([second.joined, second.task.taskId, second.cost], [true, first.task.taskId, { get: 1, create: 0 }]);
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

  it('ten identical runs one after another in one window: every repeat joins its run, and no call costs more than the tenth', async () => {
    const { queue, join, end, advance } = setup();
    const runs = new Set<string>();
    for (let run = 0; run < 10; run++) {
      const first = await join();
      assert.equal(first.joined, false, `run ${run} starts`);
      assert.deepEqual(first.cost, run === 0 ? { get: 2, create: 1 } : { get: 1, create: 1 }, `run ${run}'s first call`);
      runs.add(first.task.taskId);
      const repeat = await join();
      assert.deepEqual([repeat.joined, repeat.task.taskId], [true, first.task.taskId], `run ${run}'s repeat joins it`);
      assert.deepEqual(repeat.cost, run === 0 ? { get: 1, create: 0 } : { get: 1, create: 1 }, `run ${run}'s repeat`);
      assert.deepEqual(first.task.repeat, run === 0 ? undefined : { head: [...runs][0], run });
      advance(1_000);
      await end(first.task.taskId);
    }
    assert.equal(runs.size, 10);
    assert.equal(queue.sent.length, 10, 'each run started once, none twice');
  });

  it('in the next window, the previous window’s latest run is joined while it runs (its head counted the runs before)', async () => {
    const { join, end, advance } = setup();
    for (let run = 0; run < 3; run++) await end((await join()).task.taskId);
    const fourth = await join();
    advance(REPEAT_WINDOW_MS);
    const repeat = await join();
    assert.deepEqual([repeat.joined, repeat.task.taskId, repeat.cost], [true, fourth.task.taskId, { get: 3, create: 0 }]);
    await end(fourth.task.taskId);
    const next = await join();
    assert.equal(next.joined, false, 'once it ended, the call starts this window’s first run');
    assert.deepEqual(next.task.repeat, undefined);
  });

  it("rows of the previous release (its head's end uncounted, its slots 1 and 2 without a count) are joined, then followed", async () => {
    const { store, join, end, start } = setup();
    const { current } = repeatWindows(KEY, call, T0);
    // As the previous release left them: the head and slot 1 ended, slot 2 running, no `repeat` and no `runsEnded`.
    for (const n of [0, 1, 2]) await store.create({ ...start, taskId: current.run(n), inputResponses: {}, now: T0 });
    await end(current.run(0));
    await end(current.run(1));
    const repeat = await join();
    assert.deepEqual([repeat.joined, repeat.task.taskId], [true, current.run(2)]);
    await end(current.run(2));
    const next = await join();
    assert.deepEqual([next.joined, next.task.taskId, next.task.repeat], [false, current.run(3), { head: current.head, run: 3 }]);
    await end(next.task.taskId);
    assert.equal((await store.get(current.head, call.principal, T0 + 10))?.runsEnded, 4, 'counted from there on');
    assert.deepEqual((await join()).cost, { get: 1, create: 1 });
  });

  it('a head whose count fell behind by more than a few runs still lets the call run, under a fresh id', async () => {
    const { store, join, end, start } = setup();
    const { current } = repeatWindows(KEY, call, T0);
    for (let n = 0; n < 6; n++) {
      await store.create({ ...start, taskId: current.run(n), inputResponses: {}, now: T0 });
      await end(current.run(n));
    }
    const fresh = await join();
    assert.equal(fresh.joined, false);
    assert.ok(![0, 1, 2, 3, 4, 5, 6].map(current.run).includes(fresh.task.taskId));
  });
});
