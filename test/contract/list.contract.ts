/** TaskStore contract: an owner's task list (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { InvalidPageError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, MUCH_LATER, newTask, RESULT, SHARED_OWNER, TTL } from './kit.ts';

/** Every page of `owner`'s list, `limit` tasks at a time: the ids in order, page by page. */
async function allPages(store: TaskStore, owner: string, limit: number, now = at(10)): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  do {
    const page = await store.list(owner, now, { limit, ...(after === undefined ? {} : { after }) });
    pages.push(page.tasks.map((task) => task.taskId));
    after = page.next;
    assert.ok(pages.length < 100, 'paging ends');
  } while (after !== undefined);
  return pages;
}

/** The `list` cases. Each uses an owner of its own, so other cases' tasks never show. */
export function describeList(kit: ContractKit): void {
  const { store } = kit;
  const create = async (owner: string, now: number) => (await store().create(newTask({ owner, now }))).task.taskId;

  describe('list', () => {
    it("lists the owner's tasks newest first, and nobody else's", async () => {
      const owner = `owner-${randomUUID()}`;
      const first = await create(owner, at(1));
      const third = await create(owner, at(3));
      const second = await create(owner, at(2));
      await create(`other-${randomUUID()}`, at(4));
      const page = await store().list(owner, at(10), { limit: 10 });
      assert.deepEqual(
        page.tasks.map((task) => task.taskId),
        [third, second, first],
      );
      assert.equal(page.next, undefined, 'one page holds them all');
      assert.deepEqual(await store().list(`nobody-${randomUUID()}`, at(10), { limit: 10 }), { tasks: [] });
    });

    it('pages through every task once, ties in creation time included, the last page without a cursor', async () => {
      const owner = `owner-${randomUUID()}`;
      const ids: { id: string; ms: number }[] = [];
      for (const ms of [1, 2, 2, 2, 3, 4, 4]) ids.push({ id: await create(owner, at(ms)), ms });
      const pages = await allPages(store(), owner, 2);
      assert.deepEqual(
        pages.map((page) => page.length),
        [2, 2, 2, 1],
      );
      const listed = pages.flat();
      assert.equal(new Set(listed).size, ids.length, 'no task twice');
      const expected = ids.sort((a, b) => b.ms - a.ms || (a.id < b.id ? 1 : -1)).map((entry) => entry.id);
      assert.deepEqual(listed, expected);
    });

    it('shows each task as get does, and leaves out the expired', async () => {
      const owner = `owner-${randomUUID()}`;
      const waiting = await kit.waiting({ q: { method: 'roots/list' } }, { owner, now: at(1) });
      const done = await kit.completed({ owner, now: at(2) });
      const { tasks } = await store().list(owner, at(10), { limit: 10 });
      assert.deepEqual(
        tasks.map((task) => [task.taskId, task.status]),
        [
          [done.taskId, 'completed'],
          [waiting.taskId, 'input_required'],
        ],
      );
      assert.deepEqual(tasks[0], await store().get(done.taskId, owner, at(10)));
      assert.deepEqual(
        (await store().list(owner, at(2 + TTL + MUCH_LATER), { limit: 10 })).tasks.map((task) => task.taskId),
        [waiting.taskId],
        'the completed task expired; the waiting one never does',
      );
      assert.deepEqual(done.status === 'completed' && done.result, RESULT);
    });

    it("lists the shared owner's tasks (spread over partitions) in one order across pages", async () => {
      // The shared owner is this case's alone; its tasks sit in a time window of their own.
      const base = at(1_000_000);
      const ids: string[] = [];
      for (let i = 0; i < 9; i++) ids.push(await create(SHARED_OWNER, base + i));
      const listed = (await allPages(store(), SHARED_OWNER, 4, base + 100)).flat().filter((id) => ids.includes(id));
      assert.deepEqual(listed, [...ids].reverse());
    });

    it('refuses a malformed cursor or page size, reading nothing', async () => {
      const owner = `owner-${randomUUID()}`;
      for (const options of [{ limit: 0 }, { limit: 101 }, { limit: 1.5 }, { limit: 10, after: 'x' }, { limit: 10, after: '1#a#b' }]) {
        await assert.rejects(store().list(owner, at(1), options), InvalidPageError, JSON.stringify(options));
      }
    });
  });
}
