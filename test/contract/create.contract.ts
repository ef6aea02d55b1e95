/** TaskStore contract: create and get, create with an idempotency key (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { WorkingTask } from '../../shared/tasks/model.ts';
import { IdempotencyConflictError, TaskIdTakenError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, ELICIT, ERROR, newTask, OWNER, RESULT, STRANGER, T0, TTL, W } from './kit.ts';

/** The `create and get` cases. */
export function describeCreateAndGet(kit: ContractKit): void {
  const { store, read, created } = kit;
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

    it('keeps who started the task and its tool title when given; a task without them reads as before', async () => {
      const named = await created({ requester: 'Alice Liddell', toolTitle: 'Approval gate' });
      assert.equal((await read(named.taskId)).requester, 'Alice Liddell');
      assert.equal((await read(named.taskId)).toolTitle, 'Approval gate');
      const unnamed = await created();
      assert.equal('requester' in (await read(unnamed.taskId)), false);
      assert.equal('toolTitle' in (await read(unnamed.taskId)), false);
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
}

/** The `create with an idempotency key` cases. */
export function describeIdempotentCreate(kit: ContractKit): void {
  const { store, read } = kit;
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
      const leased = await store().claim(task.taskId, 'w1', at(1));
      const again = await store().create(newTask({ now: at(2) }), { idempotencyKey: key });
      assert.deepEqual(again, { task: leased, created: false });
    });

    it('the same key with other arguments or another tool is an IdempotencyConflictError', async () => {
      const key = randomUUID();
      const { task } = await store().create(newTask(), { idempotencyKey: key });
      await assert.rejects(
        store().create(newTask({ arguments: { filename: 'b.txt' } }), { idempotencyKey: key }),
        IdempotencyConflictError,
      );
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
      const leased = await store().claim(first.taskId, 'w1', at(1));
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
}

/** The `create that may join` cases: a derived id, as repeated identical calls use. */
export function describeJoiningCreate(kit: ContractKit): void {
  const { store, read, created, waiting, completed } = kit;
  describe('create that may join', () => {
    it('a free id creates the task', async () => {
      const input = newTask();
      const result = await store().create(input, { join: true });
      assert.equal(result.created, true);
      assert.equal(result.task.taskId, input.taskId);
    });

    it("the owner's unfinished task under the id is returned as it is, working or waiting, and nothing is written", async () => {
      for (const task of [await created(), await waiting({ confirm: ELICIT })]) {
        const again = await store().create(newTask({ taskId: task.taskId, now: at(5), tool: 'other' }), { join: true });
        assert.deepEqual(again, { task, created: false });
        assert.deepEqual(await read(task.taskId), task);
      }
    });

    it("an ended task, or another owner's, under the id is not joined: TaskIdTakenError, and it stays as it was", async () => {
      const ended = await completed();
      await assert.rejects(store().create(newTask({ taskId: ended.taskId, now: at(5) }), { join: true }), TaskIdTakenError);
      assert.deepEqual(await read(ended.taskId), ended);
      const theirs = await created();
      await assert.rejects(
        store().create(newTask({ taskId: theirs.taskId, owner: STRANGER, now: at(5) }), { join: true }),
        TaskIdTakenError,
      );
      assert.deepEqual(await read(theirs.taskId), theirs);
    });

    it("a later run's end, finished, cancelled or failed, is counted on its head (runsEnded: its number + 1, never less); the head's state stays", async () => {
      const head = await completed();
      const run = (n: number) => newTask({ repeat: { head: head.taskId, run: n }, now: at(10) });
      const third = await store().create(run(3));
      assert.deepEqual(third.task.repeat, { head: head.taskId, run: 3 });
      const claimed = await store().claim(third.task.taskId, 'w', at(11));
      assert.ok(claimed);
      await store().finish(claimed, 'w', { status: 'completed', result: RESULT }, at(12));
      assert.deepEqual(await read(head.taskId), { ...head, runsEnded: 4 });
      const second = await store().create(run(2));
      await store().cancel(second.task.taskId, OWNER, at(13));
      assert.equal((await read(head.taskId)).runsEnded, 4, 'an earlier run ending late does not move the count back');
      const sixth = await store().create(run(6));
      await store().fail(sixth.task.taskId, { error: ERROR, statusMessage: 'Gave up', now: at(14) });
      assert.deepEqual(await read(head.taskId), { ...head, runsEnded: 7 });
      assert.deepEqual((await read(sixth.task.taskId)).repeat, { head: head.taskId, run: 6 }, 'the run keeps its place as it ends');
    });

    it('of concurrent creates under one id exactly one creates the task, the others join it', async () => {
      const taskId = randomUUID();
      const results = await Promise.all(Array.from({ length: 3 }, () => store().create(newTask({ taskId }), { join: true })));
      assert.equal(results.filter((result) => result.created).length, 1);
      assert.deepEqual(new Set(results.map((result) => result.task.taskId)), new Set([taskId]));
    });
  });
}
