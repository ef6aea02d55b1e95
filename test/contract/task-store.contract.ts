/**
 * The {@link TaskStore} contract: every adapter runs these same cases
 * (`describeTaskStore(name, makeStore)`), so the in-memory store and the
 * DynamoDB adapter cannot drift apart. Time is always passed in (`now`), never
 * slept through; every task gets a fresh id, so one store serves the suite.
 *
 * The sweeper cases (`findDue`) need a store in which no other case's task is
 * due: each of them works in a time window of its own, far before `T0` and
 * before every earlier window, so nothing created elsewhere is ever due there.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InputRequest, JsonRpcErrorObject, TaskOutcome, TaskRecord, WorkingTask } from '../../shared/tasks/model.ts';
import {
  IdempotencyConflictError,
  LeaseLostError,
  TaskNotFoundError,
  type HeartbeatOptions,
  type NewTask,
  type StorePolicy,
  type TaskStore,
} from '../../shared/tasks/store.ts';

/** The policy every store under test must be built with (its `leaseMs` is the lease the cases take). */
export const CONTRACT_POLICY: StorePolicy = { retentionMs: 3_600_000, sweepGraceMs: 60_000, leaseMs: 10_000, stepRetentionMs: 30 * 86_400_000 };

/** What `makeStore` hands the suite; `close` runs once, after the last case. */
export interface StoreUnderTest {
  store: TaskStore;
  close?: () => Promise<void>;
}

const RETENTION = CONTRACT_POLICY.retentionMs;
const GRACE = CONTRACT_POLICY.sweepGraceMs;
const LEASE = CONTRACT_POLICY.leaseMs;
/** W: how long after a task is due to run the sweeper looks at it (one lease plus the grace). */
const W = LEASE + GRACE;
const T0 = 1_700_000_000_000;
const TTL = 60_000;
const OWNER = 'alice';
const STRANGER = 'mallory';
/** Far past every TTL and retention window the suite uses. */
const MUCH_LATER = 1000 * (TTL + RETENTION);

const ELICIT: InputRequest = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Which file?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
};
const SAMPLE: InputRequest = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } };
const RESULT = { content: [{ type: 'text', text: 'done' }], structuredContent: { n: 1 }, resultType: 'complete' };
const ERROR: JsonRpcErrorObject = { code: -32602, message: 'Bad input', data: { field: 'name' } };

/** Milliseconds after the suite's epoch `T0`. */
function at(ms: number): number {
  return T0 + ms;
}

let windows = 0;
/** The start of a sweeper window no other case shares (see the file comment). */
function isolatedWindow(): number {
  windows += 1;
  return T0 - windows * 10_000_000_000;
}

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    taskId: randomUUID(),
    owner: OWNER,
    tool: 'confirm_delete',
    arguments: { filename: 'a.txt', options: { force: false, tags: ['x', 1, null] } },
    clientCapabilities: { elicitation: { form: {} }, sampling: {} },
    inputResponses: {},
    now: T0,
    ttlMs: TTL,
    pollIntervalMs: 1500,
    ...overrides,
  };
}

/**
 * Registers the contract cases for one adapter. `makeStore` is called once
 * (in `before`); the store must use {@link CONTRACT_POLICY}.
 */
export function describeTaskStore(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`TaskStore contract: ${name}`, () => {
    let subject: StoreUnderTest;
    const store = (): TaskStore => subject.store;

    before(async () => {
      subject = await makeStore();
    });
    after(async () => {
      await subject?.close?.();
    });

    // --- scenario builders -------------------------------------------------

    const read = async (taskId: string, now = at(LEASE * 3)): Promise<TaskRecord> => {
      const task = await store().get(taskId, OWNER, now);
      assert.ok(task, `task ${taskId} should be readable`);
      return task;
    };

    const created = async (overrides: Partial<NewTask> = {}): Promise<TaskRecord> => {
      const { task, created: isNew } = await store().create(newTask(overrides));
      assert.equal(isNew, true);
      return task;
    };

    /** A task claimed at `now` by a fresh lease owner. */
    const claimed = async (overrides: Partial<NewTask> = {}, now = at(1)) => {
      const { taskId } = await created(overrides);
      const leaseOwner = `worker-${randomUUID()}`;
      const task = await store().claim(taskId, leaseOwner, now, LEASE);
      assert.ok(task, 'a fresh task can be claimed');
      return { task, leaseOwner };
    };

    /** A task waiting for input on `requests` (claimed at `now` + 1 ms, finished at `now` + 2 ms). */
    const waiting = async (requests: Record<string, InputRequest>, overrides: Partial<NewTask> = {}) => {
      const base = overrides.now ?? T0;
      const { task, leaseOwner } = await claimed(overrides, base + 1);
      const finished = await store().finish(task, leaseOwner, { status: 'input_required', inputRequests: requests }, base + 2);
      assert.equal(finished.status, 'input_required');
      return finished;
    };

    /** A task completed at `now` + 2 ms (claimed at `now` + 1 ms). */
    const completed = async (overrides: Partial<NewTask> = {}) => {
      const base = overrides.now ?? T0;
      const { task, leaseOwner } = await claimed(overrides, base + 1);
      return store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, base + 2);
    };

    // --- create / get -------------------------------------------------------

    describe('create and get', () => {
      it('create returns the new working task and get reads back every field', async () => {
        const input = newTask({ inputResponses: { early: { action: 'accept' } } });
        const result = await store().create(input);
        const expected: WorkingTask = {
          taskId: input.taskId,
          owner: OWNER,
          tool: 'confirm_delete',
          arguments: { filename: 'a.txt', options: { force: false, tags: ['x', 1, null] } },
          clientCapabilities: { elicitation: { form: {} }, sampling: {} },
          status: 'working',
          createdAt: T0,
          lastUpdatedAt: T0,
          ttlMs: TTL,
          pollIntervalMs: 1500,
          inputResponses: { early: { action: 'accept' } },
          issuedKeys: [],
          cancelRequested: false,
          attempts: 0,
          sweepAt: T0 + W,
          version: 1,
        };
        assert.deepEqual(result, { task: expected, created: true });
        assert.deepEqual(await store().get(input.taskId, OWNER, at(1)), expected);
      });

      it('the returned record is a copy: mutating it does not change the store', async () => {
        const task = await created();
        task.arguments['filename'] = 'evil.txt';
        task.inputResponses['x'] = 1;
        const stored = await read(task.taskId);
        assert.deepEqual(stored.arguments, { filename: 'a.txt', options: { force: false, tags: ['x', 1, null] } });
        assert.deepEqual(stored.inputResponses, {});
      });

      it('a duplicate task id is refused and the first task is kept', async () => {
        const first = await created();
        await assert.rejects(store().create(newTask({ taskId: first.taskId, owner: STRANGER, tool: 'other' })));
        assert.deepEqual(await read(first.taskId), first);
      });

      it('get by another owner is undefined', async () => {
        const task = await created();
        assert.equal(await store().get(task.taskId, STRANGER, at(1)), undefined);
      });

      it('get of an unknown task is undefined', async () => {
        assert.equal(await store().get(randomUUID(), OWNER, at(1)), undefined);
      });
    });

    // --- expiry -------------------------------------------------------------

    describe('expiry', () => {
      const live: Array<{ name: string; make: () => Promise<TaskRecord> }> = [
        { name: 'queued', make: () => created() },
        { name: 'running', make: async () => (await claimed()).task },
        { name: 'waiting for input', make: () => waiting({ a: ELICIT }) },
      ];
      for (const { name, make } of live) {
        it(`a ${name} task never expires: get long after createdAt + ttlMs still finds it`, async () => {
          const task = await make();
          assert.deepEqual(await store().get(task.taskId, OWNER, at(TTL)), task);
          assert.deepEqual(await store().get(task.taskId, OWNER, at(MUCH_LATER)), task);
        });
      }

      it('a queued task can still be claimed long after createdAt + ttlMs', async () => {
        const task = await created();
        assert.equal((await store().claim(task.taskId, 'w1', at(MUCH_LATER), LEASE))?.lease?.owner, 'w1');
      });

      it('a task waiting for input still takes answers long after createdAt + ttlMs', async () => {
        const task = await waiting({ a: ELICIT });
        assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, at(MUCH_LATER)), { accepted: ['a'], resumed: true });
        assert.equal((await read(task.taskId, at(MUCH_LATER))).status, 'working');
      });

      // Completed at 2 ms: ttlMs becomes max(TTL, 2 + RETENTION).
      const terminalTtl = 2 + RETENTION;
      const expiry: Array<{ offset: number; visible: boolean }> = [
        { offset: terminalTtl - 1, visible: true },
        { offset: terminalTtl, visible: false },
        { offset: terminalTtl + 1, visible: false },
      ];
      for (const { offset, visible } of expiry) {
        it(`a terminal task (ttl ${terminalTtl}) at createdAt + ${offset} ms is ${visible ? 'found' : 'gone'}`, async () => {
          const task = await completed();
          assert.equal(task.ttlMs, terminalTtl);
          const found = await store().get(task.taskId, OWNER, at(offset));
          assert.equal(found?.taskId, visible ? task.taskId : undefined);
        });
      }
    });

    // --- claim --------------------------------------------------------------

    describe('claim', () => {
      it('takes the lease on a working task and returns the task as leased', async () => {
        const task = await created();
        const leased = await store().claim(task.taskId, 'w1', at(5), LEASE);
        assert.ok(leased);
        assert.equal(leased.status, 'working');
        assert.deepEqual(leased.lease, { owner: 'w1', until: at(5 + LEASE) });
        assert.equal(leased.sweepAt, task.sweepAt, 'a claim leaves sweepAt alone');
        assert.equal(leased.sweepAt, T0 + W);
        assert.equal(leased.attempts, 1);
        assert.equal(leased.version, task.version + 1);
        assert.equal(leased.cancelRequested, false);
        assert.deepEqual(await read(task.taskId), leased);
      });

      it('a second claim while the lease is live is undefined and changes nothing', async () => {
        const { task } = await claimed({}, at(1));
        assert.equal(await store().claim(task.taskId, 'w2', at(LEASE), LEASE), undefined);
        assert.deepEqual(await read(task.taskId), task);
      });

      it('a claim once the lease has expired succeeds for the new owner', async () => {
        const { task } = await claimed({}, at(1));
        const again = await store().claim(task.taskId, 'w2', at(1 + LEASE), LEASE);
        assert.ok(again);
        assert.deepEqual(again.lease, { owner: 'w2', until: at(1 + 2 * LEASE) });
        assert.equal(again.attempts, 2);
        assert.equal(again.version, task.version + 1);
      });

      it('returns cancelRequested when cancellation was requested before the claim', async () => {
        const { task } = await claimed({}, at(1));
        assert.equal(await store().cancel(task.taskId, OWNER, at(2)), 'requested');
        const again = await store().claim(task.taskId, 'w2', at(1 + LEASE), LEASE);
        assert.equal(again?.cancelRequested, true);
        assert.equal(again?.status, 'working');
      });

      it('a task waiting for input cannot be claimed', async () => {
        const task = await waiting({ a: ELICIT });
        assert.equal(await store().claim(task.taskId, 'w2', at(3), LEASE), undefined);
        assert.deepEqual(await read(task.taskId), task);
      });

      const terminalOutcomes: TaskOutcome[] = [
        { status: 'completed', result: RESULT },
        { status: 'failed', error: ERROR },
        { status: 'cancelled' },
      ];
      for (const outcome of terminalOutcomes) {
        it(`a ${outcome.status} task cannot be claimed`, async () => {
          const { task, leaseOwner } = await claimed();
          await store().finish(task, leaseOwner, outcome, at(2));
          const before = await read(task.taskId);
          assert.equal(await store().claim(task.taskId, 'w2', at(3), LEASE), undefined);
          assert.deepEqual(await read(task.taskId), before);
        });
      }

      it('an unknown task cannot be claimed', async () => {
        assert.equal(await store().claim(randomUUID(), 'w1', at(1), LEASE), undefined);
      });
    });

    // --- heartbeat ----------------------------------------------------------

    describe('heartbeat', () => {
      it('with leaseMs renews the lease and moves sweepAt past it: another worker cannot claim until the renewed lease ends', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        const renewedAt = 8_000;
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(renewedAt), { leaseMs: LEASE }), { cancelRequested: false });
        const stored = await read(task.taskId);
        assert.deepEqual(stored.lease, { owner: leaseOwner, until: at(renewedAt + LEASE) });
        assert.equal(stored.sweepAt, at(renewedAt + LEASE + GRACE));
        assert.equal(stored.version, task.version + 1);
        assert.equal(stored.lastUpdatedAt, task.lastUpdatedAt, 'a bare renewal is not an update the client sees');
        assert.equal(stored.statusMessage, undefined);

        assert.equal(await store().claim(task.taskId, 'w2', at(1 + LEASE), LEASE), undefined, 'the first lease would have ended here');
        assert.equal(await store().claim(task.taskId, 'w2', at(renewedAt + LEASE - 1), LEASE), undefined);
        assert.equal((await store().claim(task.taskId, 'w2', at(renewedAt + LEASE), LEASE))?.lease?.owner, 'w2');
      });

      it('with leaseMs and a statusMessage renews and writes statusMessage and lastUpdatedAt in one change', async () => {
        const { task, leaseOwner } = await claimed();
        await store().heartbeat(task.taskId, leaseOwner, at(5), { leaseMs: LEASE, statusMessage: 'step 1 of 3' });
        const stored = await read(task.taskId);
        assert.equal(stored.statusMessage, 'step 1 of 3');
        assert.equal(stored.lastUpdatedAt, at(5));
        assert.deepEqual(stored.lease, { owner: leaseOwner, until: at(5 + LEASE) });
        assert.equal(stored.sweepAt, at(5 + LEASE + GRACE));
        assert.equal(stored.version, task.version + 1);
      });

      it('without leaseMs writes statusMessage and lastUpdatedAt only: the lease and sweepAt stay', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(5_000), { statusMessage: 'step 1 of 3' }), { cancelRequested: false });
        const stored = await read(task.taskId);
        assert.equal(stored.statusMessage, 'step 1 of 3');
        assert.equal(stored.lastUpdatedAt, at(5_000));
        assert.deepEqual(stored.lease, task.lease);
        assert.equal(stored.sweepAt, task.sweepAt);
        assert.equal(stored.version, task.version + 1);
        assert.deepEqual(stored, { ...task, statusMessage: 'step 1 of 3', lastUpdatedAt: at(5_000), version: task.version + 1 });

        assert.equal(await store().claim(task.taskId, 'w2', at(LEASE), LEASE), undefined, 'the lease is still live');
        assert.equal((await store().claim(task.taskId, 'w2', at(1 + LEASE), LEASE))?.lease?.owner, 'w2', 'the lease was not renewed');
      });

      it('with neither leaseMs nor a statusMessage only reports cancelRequested: the lease, sweepAt and statusMessage stay', async () => {
        const { task, leaseOwner } = await claimed();
        await store().heartbeat(task.taskId, leaseOwner, at(2), { statusMessage: 'before' });
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(3), {}), { cancelRequested: false });
        const stored = await read(task.taskId);
        assert.equal(stored.statusMessage, 'before');
        assert.equal(stored.lastUpdatedAt, at(2));
        assert.deepEqual(stored.lease, task.lease);
        assert.equal(stored.sweepAt, task.sweepAt);
      });

      it('reports cancelRequested once cancellation was requested, with or without renewing', async () => {
        const { task, leaseOwner } = await claimed();
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(5), { statusMessage: 'step 1 of 3' }), { cancelRequested: false });
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(5), { leaseMs: LEASE }), { cancelRequested: false });
        assert.equal(await store().cancel(task.taskId, OWNER, at(6)), 'requested');
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(7), { statusMessage: 'step 2 of 3' }), { cancelRequested: true });
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(8), { leaseMs: LEASE }), { cancelRequested: true });
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(9), { leaseMs: LEASE, statusMessage: 'step 3 of 3' }), { cancelRequested: true });
        assert.deepEqual(await store().heartbeat(task.taskId, leaseOwner, at(10), {}), { cancelRequested: true });
        const stored = await read(task.taskId);
        assert.equal(stored.statusMessage, 'step 3 of 3');
        assert.equal(stored.cancelRequested, true);
      });

      it('still renews a lease that ran out while nobody took it over', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        await store().heartbeat(task.taskId, leaseOwner, at(2 * LEASE), { leaseMs: LEASE });
        const stored = await read(task.taskId);
        assert.deepEqual(stored.lease, { owner: leaseOwner, until: at(3 * LEASE) });
        assert.equal(stored.sweepAt, at(3 * LEASE + GRACE));
      });

      const variants: Array<{ name: string; options: HeartbeatOptions }> = [
        { name: 'renewing', options: { leaseMs: LEASE, statusMessage: 'late' } },
        { name: 'progress-only', options: { statusMessage: 'late' } },
        { name: 'bare', options: {} },
      ];
      for (const { name, options } of variants) {
        it(`(${name}) throws LeaseLostError for another lease owner and changes nothing`, async () => {
          const { task } = await claimed();
          await assert.rejects(store().heartbeat(task.taskId, 'not-the-holder', at(5), options), LeaseLostError);
          assert.deepEqual(await read(task.taskId), task);
        });

        it(`(${name}) throws LeaseLostError once the lease was taken over`, async () => {
          const { task, leaseOwner } = await claimed({}, at(1));
          const takeover = await store().claim(task.taskId, 'w2', at(1 + LEASE), LEASE);
          assert.ok(takeover);
          await assert.rejects(store().heartbeat(task.taskId, leaseOwner, at(2 + LEASE), options), LeaseLostError);
          assert.deepEqual(await read(task.taskId), takeover);
        });

        it(`(${name}) throws LeaseLostError after the lease was released`, async () => {
          const { task, leaseOwner } = await claimed();
          await store().release(task.taskId, leaseOwner, at(2), at(2));
          const released = await read(task.taskId);
          await assert.rejects(store().heartbeat(task.taskId, leaseOwner, at(5), options), LeaseLostError);
          assert.deepEqual(await read(task.taskId), released);
        });

        it(`(${name}) throws LeaseLostError for an unknown task`, async () => {
          await assert.rejects(store().heartbeat(randomUUID(), 'w1', at(5), options), LeaseLostError);
        });
      }
    });

    // --- finish -------------------------------------------------------------

    describe('finish', () => {
      const cases: Array<{ outcome: TaskOutcome; check: (task: TaskRecord) => void }> = [
        {
          outcome: { status: 'completed', result: RESULT },
          check: (task) => assert.deepEqual(task.status === 'completed' && task.result, RESULT),
        },
        {
          outcome: { status: 'failed', error: ERROR, statusMessage: 'Bad input' },
          check: (task) => {
            assert.deepEqual(task.status === 'failed' && task.error, ERROR);
            assert.equal(task.statusMessage, 'Bad input');
          },
        },
        {
          outcome: { status: 'cancelled', statusMessage: 'Cancelled at the client\'s request' },
          check: (task) => assert.equal(task.statusMessage, 'Cancelled at the client\'s request'),
        },
        {
          outcome: { status: 'input_required', inputRequests: { k1: ELICIT, k2: SAMPLE } },
          check: (task) => {
            assert.deepEqual(task.status === 'input_required' && task.inputRequests, { k1: ELICIT, k2: SAMPLE });
            assert.deepEqual([...task.issuedKeys].sort(), ['k1', 'k2']);
          },
        },
      ];
      for (const { outcome, check } of cases) {
        it(`records a ${outcome.status} outcome, releases the lease and leaves nothing for the sweeper`, async () => {
          const { task, leaseOwner } = await claimed();
          const finished = await store().finish(task, leaseOwner, outcome, at(100));
          assert.equal(finished.status, outcome.status);
          check(finished);
          assert.equal(finished.lease, undefined);
          assert.equal('sweepAt' in finished, false);
          assert.equal(finished.lastUpdatedAt, at(100));
          assert.equal(finished.version, task.version + 1);
          // Waiting for answers is a clean hand-over: the next run starts the count again.
          assert.equal(finished.attempts, outcome.status === 'input_required' ? 0 : 1);
          assert.equal(finished.createdAt, T0);
          assert.deepEqual(finished.arguments, task.arguments);
          for (const field of ['inputRequests', 'result', 'error'] as const) {
            const belongs = { inputRequests: 'input_required', result: 'completed', error: 'failed' }[field] === outcome.status;
            assert.equal(field in finished, belongs, `${field} present on a ${outcome.status} task`);
          }
          assert.deepEqual(await read(task.taskId), finished);
        });
      }

      it('extends the TTL so the outcome stays readable for the retention window', async () => {
        const { task, leaseOwner } = await claimed();
        const finishedAt = 50_000;
        const finished = await store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(finishedAt));
        assert.equal(finished.ttlMs, finishedAt + RETENTION);
        assert.ok(await store().get(task.taskId, OWNER, at(finishedAt + RETENTION - 1)));
        assert.equal(await store().get(task.taskId, OWNER, at(finishedAt + RETENTION)), undefined);
      });

      it('never shortens a TTL that already covers the retention window', async () => {
        const longTtl = 100 * RETENTION;
        const { task, leaseOwner } = await claimed({ ttlMs: longTtl });
        const finished = await store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(100));
        assert.equal(finished.ttlMs, longTtl);
        assert.ok(await store().get(task.taskId, OWNER, at(longTtl - 1)));
        assert.equal(await store().get(task.taskId, OWNER, at(longTtl)), undefined);
      });

      it('accumulates issuedKeys across input rounds and keeps every answer', async () => {
        const first = await waiting({ a: ELICIT, b: SAMPLE });
        assert.deepEqual(await store().answer(first.taskId, OWNER, { a: 'A', b: 'B' }, at(3)), { accepted: ['a', 'b'], resumed: true });
        const again = await store().claim(first.taskId, 'w2', at(4), LEASE);
        assert.ok(again);
        const second = await store().finish(again, 'w2', { status: 'input_required', inputRequests: { c: ELICIT } }, at(5));
        assert.deepEqual([...second.issuedKeys].sort(), ['a', 'b', 'c']);
        assert.deepEqual(second.inputResponses, { a: 'A', b: 'B' });
        assert.deepEqual(second.status === 'input_required' && second.inputRequests, { c: ELICIT });
        assert.deepEqual(await read(first.taskId), second);
      });

      it('keeps cancelRequested and the latest heartbeat message written since the claim', async () => {
        const { task, leaseOwner } = await claimed();
        await store().heartbeat(task.taskId, leaseOwner, at(3), { statusMessage: 'halfway' });
        assert.equal(await store().cancel(task.taskId, OWNER, at(4)), 'requested');
        const finished = await store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(5));
        assert.equal(finished.cancelRequested, true);
        assert.equal(finished.statusMessage, 'halfway');
        assert.equal(finished.version, task.version + 3);
        assert.deepEqual(await read(task.taskId), finished);
      });

      it('writes the outcome\'s statusMessage even when it equals the one in the claimed record', async () => {
        const { task, leaseOwner } = await claimed();
        await store().heartbeat(task.taskId, leaseOwner, at(2), { statusMessage: 'A' });
        await store().release(task.taskId, leaseOwner, at(2), at(2));
        const second = await store().claim(task.taskId, 'w2', at(3), LEASE);
        assert.ok(second);
        assert.equal(second.statusMessage, 'A');
        await store().heartbeat(task.taskId, 'w2', at(4), { leaseMs: LEASE, statusMessage: 'B' });
        const finished = await store().finish(second, 'w2', { status: 'failed', error: ERROR, statusMessage: 'A' }, at(5));
        assert.equal(finished.statusMessage, 'A');
      });

      it('throws LeaseLostError once the lease was taken over, and changes nothing', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        const takeover = await store().claim(task.taskId, 'w2', at(1 + LEASE), LEASE);
        assert.ok(takeover);
        await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2 + LEASE)), LeaseLostError);
        assert.deepEqual(await read(task.taskId), takeover);
      });

      it('throws LeaseLostError for a lease owner that never held the lease', async () => {
        const { task } = await claimed();
        await assert.rejects(store().finish(task, 'someone-else', { status: 'cancelled' }, at(5)), LeaseLostError);
        assert.deepEqual(await read(task.taskId), task);
      });

      it('a result with every kind of JSON value and non-ASCII text round-trips', async () => {
        const result = { content: [{ type: 'text', text: 'Grüße, 世界 😀 "quoted" \\ \n' }], structuredContent: { a: [1.5, -2, 0, true, false, null, { b: '' }] } };
        const { task, leaseOwner } = await claimed();
        await store().finish(task, leaseOwner, { status: 'completed', result }, at(5));
        const stored = await read(task.taskId);
        assert.deepEqual(stored.status === 'completed' && stored.result, result);
      });
    });

    // --- release ------------------------------------------------------------

    describe('release', () => {
      it('drops the lease of its holder, keeps the status and is due at resumeAt + leaseMs + sweepGraceMs', async () => {
        const { task, leaseOwner } = await claimed();
        const resumeAt = at(5_000);
        await store().release(task.taskId, leaseOwner, at(2), resumeAt);
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'working');
        assert.equal(stored.lease, undefined);
        assert.equal(stored.sweepAt, resumeAt + W);
        assert.equal(stored.version, task.version + 1);
        assert.equal(stored.attempts, task.attempts);
      });

      it('then another worker can claim at once', async () => {
        const { task, leaseOwner } = await claimed();
        await store().release(task.taskId, leaseOwner, at(2), at(2));
        const again = await store().claim(task.taskId, 'w2', at(3), LEASE);
        assert.equal(again?.lease?.owner, 'w2');
        assert.equal(again?.attempts, 2);
      });

      it('after a clean hand-over restarts the attempt count; a retry keeps counting', async () => {
        const { task, leaseOwner } = await claimed();
        await store().release(task.taskId, leaseOwner, at(2), at(2));
        const retried = await store().claim(task.taskId, 'w2', at(3), LEASE);
        assert.equal(retried?.attempts, 2);
        await store().release(task.taskId, 'w2', at(4), at(4), { handedOver: true });
        assert.equal((await read(task.taskId)).attempts, 0);
        assert.equal((await store().claim(task.taskId, 'w3', at(5), LEASE))?.attempts, 1);
      });

      it('is a no-op for anyone but the holder', async () => {
        const { task } = await claimed();
        await store().release(task.taskId, 'not-the-holder', at(2), at(2));
        assert.deepEqual(await read(task.taskId), task);
      });

      it('is a no-op for an unknown task', async () => {
        const taskId = randomUUID();
        await store().release(taskId, 'w1', at(1), at(1));
        assert.equal(await store().get(taskId, OWNER, at(1)), undefined);
      });
    });

    // --- fail ---------------------------------------------------------------

    describe('fail', () => {
      const from: Array<{ name: string; make: () => Promise<TaskRecord> }> = [
        { name: 'a queued task', make: () => created() },
        { name: 'a task whose lease has expired', make: async () => (await claimed({}, at(1))).task },
        { name: 'a released task', make: async () => {
          const { task, leaseOwner } = await claimed();
          await store().release(task.taskId, leaseOwner, at(2), at(2));
          return read(task.taskId);
        } },
        { name: 'a task waiting for input', make: () => waiting({ a: ELICIT }) },
      ];
      for (const { name, make } of from) {
        it(`marks ${name} failed with the error and statusMessage`, async () => {
          const task = await make();
          const failedAt = 40_000;
          assert.equal(await store().fail(task.taskId, ERROR, 'Abandoned after the last attempt', at(failedAt)), true);
          const stored = await read(task.taskId, at(failedAt));
          assert.equal(stored.status, 'failed');
          assert.deepEqual(stored.status === 'failed' && stored.error, ERROR);
          assert.equal(stored.statusMessage, 'Abandoned after the last attempt');
          assert.equal(stored.lease, undefined);
          assert.equal('inputRequests' in stored, false);
          assert.equal('sweepAt' in stored, false);
          assert.equal(stored.lastUpdatedAt, at(failedAt));
          assert.equal(stored.version, task.version + 1);
          assert.equal(stored.ttlMs, failedAt + RETENTION);
          assert.ok(await store().get(task.taskId, OWNER, at(failedAt + RETENTION - 1)));
        });
      }

      it('is refused while a live lease is held, and allowed once it has expired', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(2)), false);
        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(LEASE)), false);
        assert.deepEqual(await read(task.taskId), task);

        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(1 + LEASE)), true);
        await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2 + LEASE)), LeaseLostError);
        await assert.rejects(store().heartbeat(task.taskId, leaseOwner, at(2 + LEASE), { leaseMs: LEASE }), LeaseLostError);
        assert.equal((await read(task.taskId)).status, 'failed');
      });

      it('is refused while a renewed lease is live', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        await store().heartbeat(task.taskId, leaseOwner, at(LEASE), { leaseMs: LEASE });
        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(1 + LEASE)), false);
        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(2 * LEASE)), true);
      });

      it('is allowed once the claimed lease ends when heartbeats only wrote progress', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        await store().heartbeat(task.taskId, leaseOwner, at(LEASE), { statusMessage: 'still going' });
        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(LEASE)), false);
        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(1 + LEASE)), true);
      });

      it('returns false for an unknown task', async () => {
        assert.equal(await store().fail(randomUUID(), ERROR, 'gave up', at(1)), false);
      });
    });

    // --- answer -------------------------------------------------------------

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
        assert.equal((await store().claim(task.taskId, 'w2', at(12), LEASE))?.lease?.owner, 'w2');
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

    // --- cancel -------------------------------------------------------------

    describe('cancel', () => {
      it('a queued task (no lease) is cancelled at once', async () => {
        const task = await created();
        const cancelledAt = 30_000;
        assert.equal(await store().cancel(task.taskId, OWNER, at(cancelledAt)), 'cancelled');
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'cancelled');
        assert.equal(stored.cancelRequested, true);
        assert.equal(stored.lastUpdatedAt, at(cancelledAt));
        assert.equal(stored.version, task.version + 1);
        assert.equal(stored.ttlMs, cancelledAt + RETENTION);
        assert.equal('sweepAt' in stored, false);
        assert.equal(await store().claim(task.taskId, 'w1', at(cancelledAt + 1), LEASE), undefined);
      });

      it('a task whose worker\'s lease expired is cancelled at once and loses the lease', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        assert.equal(await store().cancel(task.taskId, OWNER, at(1 + LEASE)), 'cancelled');
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'cancelled');
        assert.equal(stored.lease, undefined);
        await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2 + LEASE)), LeaseLostError);
      });

      it('a running task (live lease) is only flagged: its worker cancels it', async () => {
        const { task } = await claimed({}, at(1));
        assert.equal(await store().cancel(task.taskId, OWNER, at(2)), 'requested');
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'working');
        assert.equal(stored.cancelRequested, true);
        assert.deepEqual(stored.lease, task.lease);
        assert.equal(stored.sweepAt, task.sweepAt);
        assert.equal(stored.version, task.version + 1);
        assert.equal(await store().cancel(task.taskId, OWNER, at(3)), 'requested');
        assert.equal((await read(task.taskId)).status, 'working');
      });

      it('a task waiting for input is cancelled at once and its requests dropped', async () => {
        const task = await waiting({ a: ELICIT });
        assert.equal(await store().cancel(task.taskId, OWNER, at(10)), 'cancelled');
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'cancelled');
        assert.equal(stored.cancelRequested, true);
        assert.equal('inputRequests' in stored, false);
        assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, at(11)), { accepted: [], resumed: false });
      });

      const notFound: Array<{ name: string; call: (taskId: string) => Promise<unknown> }> = [
        { name: 'another owner', call: (taskId) => store().cancel(taskId, STRANGER, at(10)) },
        { name: 'an unknown task', call: () => store().cancel(randomUUID(), OWNER, at(10)) },
      ];
      for (const { name, call } of notFound) {
        it(`throws TaskNotFoundError for ${name} and changes nothing`, async () => {
          const task = await created();
          await assert.rejects(call(task.taskId), TaskNotFoundError);
          assert.deepEqual(await read(task.taskId, at(1)), task);
        });
      }

      it('throws TaskNotFoundError for an expired terminal task', async () => {
        const task = await completed();
        await assert.rejects(store().cancel(task.taskId, OWNER, T0 + task.ttlMs), TaskNotFoundError);
        assert.deepEqual(await read(task.taskId), task);
      });
    });

    // --- terminal tasks never change ----------------------------------------

    describe('a terminal task never changes again', () => {
      const endings: Array<{ name: string; end: (task: TaskRecord, leaseOwner: string) => Promise<unknown> }> = [
        { name: 'completed by its worker', end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2)) },
        { name: 'failed by its worker', end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'failed', error: ERROR }, at(2)) },
        { name: 'cancelled by its worker', end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'cancelled' }, at(2)) },
        { name: 'failed by fail()', end: (task) => store().fail(task.taskId, ERROR, 'gave up', at(1 + LEASE)) },
        { name: 'cancelled by cancel()', end: (task) => store().cancel(task.taskId, OWNER, at(1 + LEASE)) },
      ];
      for (const { name, end } of endings) {
        it(`${name}: finish, heartbeat, release, fail, answer, cancel, claim and reschedule change nothing`, async () => {
          const { task, leaseOwner } = await claimed({}, at(1));
          await end(task, leaseOwner);
          const terminal = await read(task.taskId);
          assert.ok(['completed', 'failed', 'cancelled'].includes(terminal.status), `${terminal.status} is terminal`);
          const now = at(2 * LEASE);
          const unchanged = async (what: string) => assert.deepEqual(await read(task.taskId), terminal, `${what} changed a terminal task`);

          await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: { other: true } }, now), LeaseLostError);
          await unchanged('finish');
          await assert.rejects(store().heartbeat(task.taskId, leaseOwner, now, { leaseMs: LEASE, statusMessage: 'late' }), LeaseLostError);
          await unchanged('heartbeat');
          await assert.rejects(store().heartbeat(task.taskId, leaseOwner, now, { statusMessage: 'late' }), LeaseLostError);
          await unchanged('progress-only heartbeat');
          await store().release(task.taskId, leaseOwner, now, now);
          await unchanged('release');
          assert.equal(await store().fail(task.taskId, ERROR, 'late', now), false);
          await unchanged('fail');
          assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, now), { accepted: [], resumed: false });
          await unchanged('answer');
          assert.equal(await store().cancel(task.taskId, OWNER, now), 'terminal');
          await unchanged('cancel');
          assert.equal(await store().claim(task.taskId, 'w2', now, LEASE), undefined);
          await unchanged('claim');
          assert.equal(await store().reschedule(task.taskId, at(MUCH_LATER), at(MUCH_LATER)), false);
          await unchanged('reschedule');
        });
      }
    });

    // --- steps --------------------------------------------------------------

    describe('steps', () => {
      it('a task without steps loads an empty map', async () => {
        assert.deepEqual(await store().loadSteps(randomUUID()), new Map());
      });

      it('saveStep returns the value it recorded and loadSteps returns every step of the task', async () => {
        const { task } = await claimed();
        const names = ['fetch', 'step#2', 'with spaces / and: colons', 'Ünïcødé 世界 😀', '', '#', 'fetch#again'];
        for (const [index, name] of names.entries()) {
          assert.deepEqual(await store().saveStep(task.taskId, name, { index, name }, at(5)), { index, name });
        }
        const other = await created();
        await store().saveStep(other.taskId, 'fetch', 'not this task', at(5));

        const steps = await store().loadSteps(task.taskId);
        assert.deepEqual(new Set(steps.keys()), new Set(names));
        for (const [index, name] of names.entries()) assert.deepEqual(steps.get(name), { index, name });
      });

      it('is write-once: a second save of the same name returns the first value', async () => {
        const { task } = await claimed();
        assert.deepEqual(await store().saveStep(task.taskId, 'charge', { chargeId: 'ch_1' }, at(5)), { chargeId: 'ch_1' });
        assert.deepEqual(await store().saveStep(task.taskId, 'charge', { chargeId: 'ch_2' }, at(6)), { chargeId: 'ch_1' });
        assert.deepEqual(await store().loadSteps(task.taskId), new Map([['charge', { chargeId: 'ch_1' }]]));
      });

      it('of two concurrent saves of one step, both get the same recorded value', async () => {
        const { task } = await claimed();
        const results = await Promise.all(['first', 'second', 'third'].map((value) => store().saveStep(task.taskId, 'race', value, at(5))));
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
          assert.deepEqual(await store().saveStep(task.taskId, 'v', value, at(5)), value);
          const steps = await store().loadSteps(task.taskId);
          assert.equal(steps.has('v'), true);
          assert.deepEqual(steps.get('v'), value);
          assert.deepEqual(await store().saveStep(task.taskId, 'v', 'other', at(6)), value);
        });
      }
    });

    // --- sweeper: findDue / reschedule ----------------------------------------

    describe('findDue and reschedule', () => {
      it('a created task becomes due leaseMs + sweepGraceMs after it was created', async () => {
        const base = isolatedWindow();
        const task = await created({ now: base });
        assert.deepEqual(await store().findDue(base + W - 1, 10), []);
        assert.deepEqual(await store().findDue(base + W, 10), [task.taskId]);
      });

      it('a claim keeps the task due as created (past a prompt claim\'s lease); a renewal pushes that past the renewed lease, progress does not', async () => {
        const base = isolatedWindow();
        const { task, leaseOwner } = await claimed({ now: base }, base + 1);
        assert.deepEqual(await store().findDue(task.lease!.until, 10), [], 'claimed within the grace: not due while its first lease is live');
        assert.deepEqual(await store().findDue(base + W - 1, 10), []);
        assert.deepEqual(await store().findDue(base + W, 10), [task.taskId]);

        await store().heartbeat(task.taskId, leaseOwner, base + 5_000, { statusMessage: 'progress' });
        assert.deepEqual(await store().findDue(base + W, 10), [task.taskId], 'progress alone does not move sweepAt');

        await store().heartbeat(task.taskId, leaseOwner, base + 5_000, { leaseMs: LEASE });
        assert.deepEqual(await store().findDue(base + 5_000 + LEASE + GRACE - 1, 10), []);
        assert.deepEqual(await store().findDue(base + 5_000 + LEASE + GRACE, 10), [task.taskId]);
      });

      it('a task claimed late is due before its lease ends; the sweep\'s duplicate claim is turned away by the lease', async () => {
        const base = isolatedWindow();
        const task = await created({ now: base });
        const claimedAt = base + GRACE + 1_000;
        const leased = await store().claim(task.taskId, 'w1', claimedAt, LEASE);
        assert.ok(leased);
        assert.ok(base + W < leased.lease!.until, 'due while the lease is live (the documented trade-off)');
        assert.deepEqual(await store().findDue(base + W, 10), [task.taskId]);
        assert.equal(await store().reschedule(task.taskId, base + W, base + 2 * W), true);
        assert.equal(await store().claim(task.taskId, 'w2', base + W, LEASE), undefined, 'the duplicate finds the lease live');
        const stored = await read(task.taskId, base + W);
        assert.equal(stored.lease?.owner, 'w1');
        assert.equal(stored.attempts, 1);
        // Its worker's first renewal (a third of the way into the lease) moves it past the renewed lease.
        const renewedAt = claimedAt + 4_000;
        await store().heartbeat(task.taskId, 'w1', renewedAt, { leaseMs: LEASE });
        assert.equal((await read(task.taskId, base + W)).sweepAt, renewedAt + LEASE + GRACE);
        assert.deepEqual(await store().findDue(renewedAt + LEASE, 10), []);
      });

      it('a released task becomes due leaseMs + sweepGraceMs after resumeAt', async () => {
        const base = isolatedWindow();
        const { task, leaseOwner } = await claimed({ now: base }, base + 1);
        const resumeAt = base + 7 * LEASE;
        await store().release(task.taskId, leaseOwner, base + 2, resumeAt);
        assert.deepEqual(await store().findDue(resumeAt + W - 1, 10), []);
        assert.deepEqual(await store().findDue(resumeAt + W, 10), [task.taskId]);
      });

      it('tasks waiting for input and terminal tasks are never due', async () => {
        const base = isolatedWindow();
        await waiting({ a: ELICIT }, { now: base });
        await completed({ now: base });
        const queued = await created({ now: base });
        assert.equal(await store().fail(queued.taskId, ERROR, 'gave up', base + 1), true);
        const other = await created({ now: base });
        assert.equal(await store().cancel(other.taskId, OWNER, base + 1), 'cancelled');
        const { task, leaseOwner } = await claimed({ now: base }, base + 1);
        await store().finish(task, leaseOwner, { status: 'failed', error: ERROR }, base + 2);
        assert.deepEqual(await store().findDue(base + MUCH_LATER, 100), []);
      });

      it('an answered task that is working again becomes due leaseMs + sweepGraceMs after the answer', async () => {
        const base = isolatedWindow();
        const task = await waiting({ a: ELICIT, b: SAMPLE }, { now: base });
        await store().answer(task.taskId, OWNER, { a: 'A' }, base + 10);
        assert.deepEqual(await store().findDue(base + MUCH_LATER, 10), [], 'still waiting for b');
        await store().answer(task.taskId, OWNER, { b: 'B' }, base + 20);
        assert.deepEqual(await store().findDue(base + 20 + W - 1, 10), []);
        assert.deepEqual(await store().findDue(base + 20 + W, 10), [task.taskId]);
      });

      it('returns the longest-due tasks first, at most limit of them', async () => {
        const base = isolatedWindow();
        const tasks: TaskRecord[] = [];
        for (let index = 0; index < 9; index += 1) tasks.push(await created({ now: base + index }));
        const ids = tasks.map((task) => task.taskId);
        assert.deepEqual(await store().findDue(base + 8 + W, 100), ids);
        assert.deepEqual(await store().findDue(base + 8 + W, 4), ids.slice(0, 4));
        assert.deepEqual(await store().findDue(base + 4 + W, 100), ids.slice(0, 5));
        assert.deepEqual(await store().findDue(base + 8 + W, 0), []);
      });

      it('reschedule moves a due task to nextAt, once', async () => {
        const base = isolatedWindow();
        const task = await created({ now: base });
        const now = base + W;
        assert.equal(await store().reschedule(task.taskId, now, now + W), true);
        assert.equal((await read(task.taskId, now)).sweepAt, now + W);
        assert.equal((await read(task.taskId, now)).version, task.version + 1);
        assert.deepEqual(await store().findDue(now, 10), []);
        assert.equal(await store().reschedule(task.taskId, now, now + W), false, 'no longer due');
        assert.deepEqual(await store().findDue(now + W - 1, 10), []);
        assert.deepEqual(await store().findDue(now + W, 10), [task.taskId]);
      });

      it('reschedule refuses a task that is not due yet, one waiting for input and an unknown one', async () => {
        const base = isolatedWindow();
        const task = await created({ now: base });
        assert.equal(await store().reschedule(task.taskId, base + W - 1, base + 2 * W), false);
        assert.deepEqual(await read(task.taskId, base), task);
        const waits = await waiting({ a: ELICIT }, { now: base });
        assert.equal(await store().reschedule(waits.taskId, base + MUCH_LATER, base + MUCH_LATER), false);
        assert.deepEqual(await read(waits.taskId, base), waits);
        assert.equal(await store().reschedule(randomUUID(), base + MUCH_LATER, base + MUCH_LATER), false);
      });

      it('of two concurrent reschedules exactly one wins', async () => {
        const base = isolatedWindow();
        const tasks = await Promise.all(Array.from({ length: 4 }, () => created({ now: base })));
        for (const task of tasks) {
          const now = base + W;
          const results = await Promise.all([store().reschedule(task.taskId, now, now + W), store().reschedule(task.taskId, now, now + W)]);
          assert.deepEqual(results.filter(Boolean).length, 1);
        }
      });
    });

    // --- idempotent create ----------------------------------------------------

    describe('create with an idempotency key', () => {
      it('the same key with the same call returns the first task, not created', async () => {
        const key = randomUUID();
        const first = await store().create(newTask(), { idempotencyKey: key });
        assert.equal(first.created, true);
        const second = await store().create(newTask(), { idempotencyKey: key });
        assert.deepEqual(second, { task: first.task, created: false });
        assert.deepEqual(await read(first.task.taskId), first.task);
      });

      it('returns the task as it is now', async () => {
        const key = randomUUID();
        const { task } = await store().create(newTask(), { idempotencyKey: key });
        const leased = await store().claim(task.taskId, 'w1', at(1), LEASE);
        const again = await store().create(newTask({ now: at(2) }), { idempotencyKey: key });
        assert.deepEqual(again, { task: leased, created: false });
      });

      it('the same key with other arguments or another tool is an IdempotencyConflictError', async () => {
        const key = randomUUID();
        const { task } = await store().create(newTask(), { idempotencyKey: key });
        await assert.rejects(store().create(newTask({ arguments: { filename: 'b.txt' } }), { idempotencyKey: key }), IdempotencyConflictError);
        await assert.rejects(store().create(newTask({ tool: 'other_tool' }), { idempotencyKey: key }), IdempotencyConflictError);
        assert.deepEqual((await store().create(newTask(), { idempotencyKey: key })).task.taskId, task.taskId);
      });

      it('the same key used by another owner is another task', async () => {
        const key = randomUUID();
        const mine = await store().create(newTask(), { idempotencyKey: key });
        const theirs = await store().create(newTask({ owner: STRANGER, arguments: { other: true } }), { idempotencyKey: key });
        assert.equal(theirs.created, true);
        assert.notEqual(theirs.task.taskId, mine.task.taskId);
        assert.equal(theirs.task.owner, STRANGER);
        assert.equal(await store().get(theirs.task.taskId, OWNER, at(1)), undefined);
      });

      it('another key, or no key, is another task', async () => {
        const first = await store().create(newTask(), { idempotencyKey: randomUUID() });
        const second = await store().create(newTask(), { idempotencyKey: randomUUID() });
        const third = await store().create(newTask());
        assert.equal(new Set([first.task.taskId, second.task.taskId, third.task.taskId]).size, 3);
        assert.deepEqual([first.created, second.created, third.created], [true, true, true]);
      });

      it('of concurrent creates with one key exactly one creates the task', async () => {
        const key = randomUUID();
        const results = await Promise.all(Array.from({ length: 3 }, () => store().create(newTask(), { idempotencyKey: key })));
        assert.equal(results.filter((result) => result.created).length, 1);
        assert.equal(new Set(results.map((result) => result.task.taskId)).size, 1);
        assert.ok(await read(results[0]!.task.taskId));
      });

      it('once the first task has expired, the key creates a new task', async () => {
        const key = randomUUID();
        const { task: first } = await store().create(newTask(), { idempotencyKey: key });
        const leased = await store().claim(first.taskId, 'w1', at(1), LEASE);
        assert.ok(leased);
        const finished = await store().finish(leased, 'w1', { status: 'completed', result: RESULT }, at(2));
        const later = T0 + finished.ttlMs;
        const second = await store().create(newTask({ now: later }), { idempotencyKey: key });
        assert.equal(second.created, true);
        assert.notEqual(second.task.taskId, first.taskId);
        const third = await store().create(newTask({ now: later + 1 }), { idempotencyKey: key });
        assert.deepEqual(third, { task: second.task, created: false });
      });
    });

    // --- races ----------------------------------------------------------------

    describe('concurrent callers', () => {
      it('of several concurrent claims exactly one wins', async () => {
        const tasks = await Promise.all(Array.from({ length: 4 }, () => created()));
        for (const task of tasks) {
          const claims = await Promise.all(['w1', 'w2', 'w3'].map((owner) => store().claim(task.taskId, owner, at(1), LEASE)));
          const winners = claims.filter((claim) => claim !== undefined);
          assert.equal(winners.length, 1, 'exactly one claim wins');
          const stored = await read(task.taskId);
          assert.equal(stored.lease?.owner, winners[0]?.lease?.owner);
          assert.equal(stored.attempts, 1);
        }
      });

      it('two callers answering the last two keys at once resume the task exactly once', async () => {
        const tasks = await Promise.all(Array.from({ length: 4 }, () => waiting({ a: ELICIT, b: SAMPLE })));
        for (const task of tasks) {
          const results = await Promise.all([
            store().answer(task.taskId, OWNER, { a: 'A' }, at(10)),
            store().answer(task.taskId, OWNER, { b: 'B' }, at(10)),
          ]);
          assert.deepEqual(results.map((result) => result.accepted), [['a'], ['b']]);
          assert.equal(results.filter((result) => result.resumed).length, 1, 'exactly one call resumes the task');
          const stored = await read(task.taskId);
          assert.equal(stored.status, 'working');
          assert.deepEqual(stored.inputResponses, { a: 'A', b: 'B' });
          assert.equal(stored.version, task.version + 2);
        }
      });

      it('a cancel racing the worker\'s finish leaves one consistent terminal outcome', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        const [cancel, finish] = await Promise.allSettled([
          store().cancel(task.taskId, OWNER, at(2)),
          store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2)),
        ]);
        assert.equal(finish.status, 'fulfilled', 'the lease holder always finishes');
        assert.ok(cancel.status === 'fulfilled' && ['requested', 'terminal'].includes(cancel.value));
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'completed');
        assert.equal(stored.cancelRequested, cancel.value === 'requested');
      });

      it('a fail racing a claim either fails the task or loses to the new lease', async () => {
        const tasks = await Promise.all(Array.from({ length: 4 }, () => created()));
        for (const task of tasks) {
          const [failed, leased] = await Promise.all([
            store().fail(task.taskId, ERROR, 'gave up', at(1)),
            store().claim(task.taskId, 'w1', at(1), LEASE),
          ]);
          const stored = await read(task.taskId);
          if (failed) {
            assert.equal(stored.status, 'failed');
            assert.equal(leased, undefined);
          } else {
            assert.ok(leased);
            assert.deepEqual(stored, leased);
          }
        }
      });
    });
  });
}
