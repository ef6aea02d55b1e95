/**
 * The {@link TaskStore} contract: every adapter runs these same cases
 * (`describeTaskStore(name, makeStore)`), so the in-memory store and the
 * DynamoDB adapter cannot drift apart. Time is always passed in (`now`), never
 * slept through; every task gets a fresh id, so one store serves the suite.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InputRequest, JsonRpcErrorObject, TaskOutcome, TaskRecord, WorkingTask } from '../../shared/tasks/model.ts';
import { LeaseLostError, TaskNotFoundError, type NewTask, type TaskStore } from '../../shared/tasks/store.ts';

/** The retention window (`retentionMs`) every store under test must be built with. */
export const CONTRACT_RETENTION_MS = 10 * 60_000;

/** What `makeStore` hands the suite; `close` runs once, after the last case. */
export interface StoreUnderTest {
  store: TaskStore;
  close?: () => Promise<void>;
}

const RETENTION = CONTRACT_RETENTION_MS;
const T0 = 1_700_000_000_000;
const TTL = 60_000;
const LEASE = 10_000;
const OWNER = 'alice';
const STRANGER = 'mallory';

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
 * (in `before`); the store must use {@link CONTRACT_RETENTION_MS}.
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

    const created = (overrides: Partial<NewTask> = {}): Promise<WorkingTask> => store().create(newTask(overrides));

    /** A task claimed at `now` by a fresh lease owner. */
    const claimed = async (overrides: Partial<NewTask> = {}, now = at(1)) => {
      const { taskId } = await created(overrides);
      const leaseOwner = `worker-${randomUUID()}`;
      const task = await store().claim(taskId, leaseOwner, now, LEASE);
      assert.ok(task, 'a fresh task can be claimed');
      return { task, leaseOwner };
    };

    /** A task waiting for input on `requests` (claimed at 1 ms, finished at 2 ms). */
    const waiting = async (requests: Record<string, InputRequest>, overrides: Partial<NewTask> = {}) => {
      const { task, leaseOwner } = await claimed(overrides);
      const finished = await store().finish(task, leaseOwner, { status: 'input_required', inputRequests: requests }, at(2));
      assert.equal(finished.status, 'input_required');
      return finished;
    };

    // --- create / get -------------------------------------------------------

    describe('create and get', () => {
      it('create returns the new working task and get reads back every field', async () => {
        const input = newTask({ inputResponses: { early: { action: 'accept' } } });
        const task = await store().create(input);
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
          version: 1,
        };
        assert.deepEqual(task, expected);
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

      const expiry: Array<{ offset: number; visible: boolean }> = [
        { offset: TTL - 1, visible: true },
        { offset: TTL, visible: false },
        { offset: TTL + 1, visible: false },
      ];
      for (const { offset, visible } of expiry) {
        it(`get at createdAt + ${offset} ms (ttl ${TTL}) is ${visible ? 'the task' : 'undefined'}`, async () => {
          const task = await created();
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

      it('a claim after the lease was released succeeds at once', async () => {
        const { task, leaseOwner } = await claimed();
        await store().release(task.taskId, leaseOwner);
        const again = await store().claim(task.taskId, 'w2', at(2), LEASE);
        assert.equal(again?.lease?.owner, 'w2');
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

      const expiry: Array<{ offset: number; claimable: boolean }> = [
        { offset: TTL - 1, claimable: true },
        { offset: TTL, claimable: false },
      ];
      for (const { offset, claimable } of expiry) {
        it(`a claim at createdAt + ${offset} ms (ttl ${TTL}) ${claimable ? 'succeeds' : 'is undefined'}`, async () => {
          const task = await created();
          const leased = await store().claim(task.taskId, 'w1', at(offset), LEASE);
          assert.equal(leased?.lease?.owner, claimable ? 'w1' : undefined);
        });
      }
    });

    // --- progress -----------------------------------------------------------

    describe('progress', () => {
      it('writes statusMessage and lastUpdatedAt and reports cancelRequested', async () => {
        const { task, leaseOwner } = await claimed();
        assert.deepEqual(await store().progress(task, leaseOwner, 'step 1 of 3', at(5)), { cancelRequested: false });
        const stored = await read(task.taskId);
        assert.equal(stored.statusMessage, 'step 1 of 3');
        assert.equal(stored.lastUpdatedAt, at(5));
        assert.equal(stored.version, task.version + 1);
        assert.deepEqual(stored.lease, task.lease);

        assert.equal(await store().cancel(task.taskId, OWNER, at(6)), 'requested');
        assert.deepEqual(await store().progress(task, leaseOwner, 'step 2 of 3', at(7)), { cancelRequested: true });
        assert.equal((await read(task.taskId)).statusMessage, 'step 2 of 3');
      });

      it('throws LeaseLostError for another lease owner and changes nothing', async () => {
        const { task } = await claimed();
        await assert.rejects(store().progress(task, 'not-the-holder', 'hijack', at(5)), LeaseLostError);
        assert.deepEqual(await read(task.taskId), task);
      });

      it('throws LeaseLostError once the lease was taken over', async () => {
        const { task, leaseOwner } = await claimed({}, at(1));
        const takeover = await store().claim(task.taskId, 'w2', at(1 + LEASE), LEASE);
        assert.ok(takeover);
        await assert.rejects(store().progress(task, leaseOwner, 'late', at(2 + LEASE)), LeaseLostError);
        assert.deepEqual(await read(task.taskId), takeover);
      });

      it('throws LeaseLostError after the lease was released', async () => {
        const { task, leaseOwner } = await claimed();
        await store().release(task.taskId, leaseOwner);
        await assert.rejects(store().progress(task, leaseOwner, 'late', at(5)), LeaseLostError);
      });

      it('throws LeaseLostError for an unknown task', async () => {
        const { task, leaseOwner } = await claimed();
        await assert.rejects(store().progress({ ...task, taskId: randomUUID() }, leaseOwner, 'x', at(5)), LeaseLostError);
      });
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
        it(`records a ${outcome.status} outcome and releases the lease`, async () => {
          const { task, leaseOwner } = await claimed();
          const finished = await store().finish(task, leaseOwner, outcome, at(100));
          assert.equal(finished.status, outcome.status);
          check(finished);
          assert.equal(finished.lease, undefined);
          assert.equal(finished.lastUpdatedAt, at(100));
          assert.equal(finished.version, task.version + 1);
          assert.equal(finished.attempts, 1);
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

      it('keeps cancelRequested and the latest progress message written by others since the claim', async () => {
        const { task, leaseOwner } = await claimed();
        await store().progress(task, leaseOwner, 'halfway', at(3));
        assert.equal(await store().cancel(task.taskId, OWNER, at(4)), 'requested');
        const finished = await store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(5));
        assert.equal(finished.cancelRequested, true);
        assert.equal(finished.statusMessage, 'halfway');
        assert.equal(finished.version, task.version + 3);
        assert.deepEqual(await read(task.taskId), finished);
      });

      it('writes the outcome\'s statusMessage even when it equals the one in the claimed record', async () => {
        const { task, leaseOwner } = await claimed();
        await store().progress(task, leaseOwner, 'A', at(2));
        await store().release(task.taskId, leaseOwner);
        const second = await store().claim(task.taskId, 'w2', at(3), LEASE);
        assert.ok(second);
        assert.equal(second.statusMessage, 'A');
        await store().progress(second, 'w2', 'B', at(4));
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
    });

    // --- release ------------------------------------------------------------

    describe('release', () => {
      it('drops the lease of its holder without changing the status', async () => {
        const { task, leaseOwner } = await claimed();
        await store().release(task.taskId, leaseOwner);
        const stored = await read(task.taskId);
        assert.equal(stored.status, 'working');
        assert.equal(stored.lease, undefined);
        assert.equal(stored.version, task.version + 1);
        assert.equal(stored.attempts, task.attempts);
      });

      it('is a no-op for anyone but the holder', async () => {
        const { task } = await claimed();
        await store().release(task.taskId, 'not-the-holder');
        assert.deepEqual(await read(task.taskId), task);
      });

      it('is a no-op for an unknown task', async () => {
        const taskId = randomUUID();
        await store().release(taskId, 'w1');
        assert.equal(await store().get(taskId, OWNER, at(1)), undefined);
      });
    });

    // --- fail ---------------------------------------------------------------

    describe('fail', () => {
      const from: Array<{ name: string; make: () => Promise<TaskRecord> }> = [
        { name: 'a queued task', make: () => created() },
        { name: 'a running task', make: async () => (await claimed()).task },
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
          assert.equal(stored.lastUpdatedAt, at(failedAt));
          assert.equal(stored.version, task.version + 1);
          assert.equal(stored.ttlMs, failedAt + RETENTION);
          assert.ok(await store().get(task.taskId, OWNER, at(failedAt + RETENTION - 1)));
        });
      }

      it('a running task that was failed rejects its worker\'s finish', async () => {
        const { task, leaseOwner } = await claimed();
        assert.equal(await store().fail(task.taskId, ERROR, 'gave up', at(3)), true);
        await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(4)), LeaseLostError);
        assert.equal((await read(task.taskId)).status, 'failed');
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
        { name: 'an expired task', call: (taskId) => store().answer(taskId, OWNER, { a: 'A' }, at(10 * RETENTION)) },
      ];
      for (const { name, call } of notFound) {
        it(`throws TaskNotFoundError for ${name} and changes nothing`, async () => {
          const task = await waiting({ a: ELICIT });
          await assert.rejects(call(task.taskId), TaskNotFoundError);
          assert.deepEqual(await read(task.taskId), task);
        });
      }
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
        { name: 'an expired task', call: (taskId) => store().cancel(taskId, OWNER, at(TTL)) },
      ];
      for (const { name, call } of notFound) {
        it(`throws TaskNotFoundError for ${name} and changes nothing`, async () => {
          const task = await created();
          await assert.rejects(call(task.taskId), TaskNotFoundError);
          assert.deepEqual(await read(task.taskId, at(1)), task);
        });
      }
    });

    // --- terminal tasks never change ----------------------------------------

    describe('a terminal task never changes again', () => {
      const endings: Array<{ name: string; end: (task: TaskRecord, leaseOwner: string) => Promise<unknown> }> = [
        { name: 'completed by its worker', end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, at(2)) },
        { name: 'failed by its worker', end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'failed', error: ERROR }, at(2)) },
        { name: 'cancelled by its worker', end: (task, leaseOwner) => store().finish(task, leaseOwner, { status: 'cancelled' }, at(2)) },
        { name: 'failed by fail()', end: (task) => store().fail(task.taskId, ERROR, 'gave up', at(2)) },
        { name: 'cancelled by cancel()', end: (task) => store().cancel(task.taskId, OWNER, at(1 + LEASE)) },
      ];
      for (const { name, end } of endings) {
        it(`${name}: finish, progress, fail, answer, cancel, claim and release change nothing`, async () => {
          const { task, leaseOwner } = await claimed({}, at(1));
          await end(task, leaseOwner);
          const terminal = await read(task.taskId);
          assert.ok(['completed', 'failed', 'cancelled'].includes(terminal.status), `${terminal.status} is terminal`);
          const now = at(2 * LEASE);
          const unchanged = async (what: string) => assert.deepEqual(await read(task.taskId), terminal, `${what} changed a terminal task`);

          await assert.rejects(store().finish(task, leaseOwner, { status: 'completed', result: { other: true } }, now), LeaseLostError);
          await unchanged('finish');
          await assert.rejects(store().progress(task, leaseOwner, 'late', now), LeaseLostError);
          await unchanged('progress');
          assert.equal(await store().fail(task.taskId, ERROR, 'late', now), false);
          await unchanged('fail');
          assert.deepEqual(await store().answer(task.taskId, OWNER, { a: 'A' }, now), { accepted: [], resumed: false });
          await unchanged('answer');
          assert.equal(await store().cancel(task.taskId, OWNER, now), 'terminal');
          await unchanged('cancel');
          assert.equal(await store().claim(task.taskId, 'w2', now, LEASE), undefined);
          await unchanged('claim');
          await store().release(task.taskId, leaseOwner);
          await unchanged('release');
        });
      }
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
    });
  });
}
