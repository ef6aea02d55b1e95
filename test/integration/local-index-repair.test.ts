/**
 * The local stack's start-up recovery repairs the list index as it repairs
 * the sparse one (`local-recovery.test.ts`): after a kill inside dynalite, a
 * list entry with no matching item, and an item missing from its list. One
 * of each is planted in the owners' list of tasks and one of each in the
 * approvers' list of questions, through dynalite's API and its LevelDB while
 * the stack is stopped; the next start removes the orphans and puts the
 * missing entries back, and the lists show what the table holds.
 * The stack runs `npm start`'s settings, with approvers named (so questions
 * for a person are listed for them).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { ENV } from '../../shared/config.ts';
import type { LogEvent } from '../../shared/log.ts';
import { LIST_INDEX, TABLE_KEYS } from '../../shared/tasks/dynamodb/index.ts';
import { createTask } from '../support/durable.ts';
import { openLevel, withTable } from '../support/dynalite-level.ts';
import { waitFor } from '../support/wait.ts';

type Item = Record<string, AttributeValue>;

const PRINCIPAL = 'local';
const env = { [ENV.toolset]: 'all', [ENV.approvers]: 'group:approvers' };
const keyString = (item: Item) => `${item[TABLE_KEYS.partition]?.S} ${item[TABLE_KEYS.sort]?.S}`;

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcp-tasks-list-repair-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every entry of the list index (keys only), as `pk sk` strings. */
async function listEntries(client: DynamoDBClient): Promise<string[]> {
  const { Items = [] } = await client.send(new ScanCommand({ TableName: 'tasks', IndexName: LIST_INDEX.name }));
  return Items.map(keyString).sort();
}

/**
 * Plants, as a kill inside dynalite leaves them: the list entry of each of
 * `missing` (table keys) deleted, and an orphan entry beside each of
 * `beside` (the same list, sorting first) naming an item that does not
 * exist, made by the API (so its key is dynalite's own) and kept when the
 * API removed the item.
 */
async function tearList(dataDir: string, missing: Item[], beside: Item[]): Promise<string[]> {
  const ghosts = await withTable(dataDir, async (client) => {
    const made: Item[] = [];
    for (const key of beside) {
      const { Item: item } = await client.send(new GetItemCommand({ TableName: 'tasks', Key: key }));
      const ghost = {
        [TABLE_KEYS.partition]: { S: randomUUID() },
        [TABLE_KEYS.sort]: key[TABLE_KEYS.sort]!,
        [LIST_INDEX.partition]: item![LIST_INDEX.partition]!,
        [LIST_INDEX.sort]: { S: `${item![LIST_INDEX.sort]!.S!}~ghost` },
      };
      await client.send(new PutItemCommand({ TableName: 'tasks', Item: ghost }));
      made.push(ghost);
    }
    return made;
  });
  let level = await openLevel(dataDir, LIST_INDEX.name);
  const ghostKeys = new Set(ghosts.map(keyString));
  const orphans = (await level.entries()).filter(([, value]) => ghostKeys.has(keyString(value as Item)));
  await level.level.close();
  assert.equal(orphans.length, ghosts.length);
  await withTable(dataDir, async (client) => {
    for (const ghost of ghosts) {
      await client.send(
        new DeleteItemCommand({
          TableName: 'tasks',
          Key: { [TABLE_KEYS.partition]: ghost[TABLE_KEYS.partition]!, [TABLE_KEYS.sort]: ghost[TABLE_KEYS.sort]! },
        }),
      );
    }
  });
  level = await openLevel(dataDir, LIST_INDEX.name);
  for (const [key, value] of orphans) await level.level.put(key, value);
  const missingKeys = new Set(missing.map(keyString));
  for (const [key, value] of await level.entries()) if (missingKeys.has(keyString(value as Item))) await level.level.del(key);
  await level.level.close();
  return [...ghostKeys];
}

describe('start-up recovery of the list index', () => {
  it("removes orphan entries and puts missing ones back, in the owners' list and in the approvers' list", async () => {
    const dataDir = join(root, 'torn');
    const logs: LogEvent[] = [];
    let stack: LocalStack = await startLocalStack({ port: 0, dataDir, env, log: () => {} });
    let listed: string;
    let asked: string;
    try {
      listed = await createTask(stack.url, 'slow_compute', { seconds: 0.01 });
      asked = await createTask(stack.url, 'approval_gate', { action: 'repair the lists' });
      await waitFor(
        'the approval to be asked',
        async () => (await stack.store.get(asked, PRINCIPAL, Date.now()))?.status === 'input_required',
        60_000,
        50,
      );
      await waitFor(
        'the first task to end',
        async () => (await stack.store.get(listed, PRINCIPAL, Date.now()))?.status === 'completed',
        60_000,
        50,
      );
    } finally {
      await stack.close();
    }
    const row = (taskId: string) => ({ [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: 'task' } });
    const question = { [TABLE_KEYS.partition]: { S: asked }, [TABLE_KEYS.sort]: { S: 'person#approval' } };
    const whole = await withTable(dataDir, listEntries);
    assert.ok(whole.includes(keyString(row(listed))) && whole.includes(keyString(question)), whole.join(', '));
    const ghosts = await tearList(dataDir, [row(listed), question], [row(asked), question]);

    // The simulation worked: the two entries are gone and the two orphans are there.
    const torn = await withTable(dataDir, listEntries);
    assert.deepEqual(torn, [...whole.filter((key) => key !== keyString(row(listed)) && key !== keyString(question)), ...ghosts].sort());

    stack = await startLocalStack({ port: 0, dataDir, env, log: (event) => void logs.push(event) });
    try {
      assert.equal(stack.recovery.listOrphansRemoved, 2, JSON.stringify(stack.recovery));
      assert.equal(stack.recovery.listEntriesRestored, 2, JSON.stringify(stack.recovery));
      const tasks = (await stack.store.list(PRINCIPAL, Date.now(), { limit: 10 })).tasks.map((task) => task.taskId);
      assert.deepEqual(tasks.sort(), [listed, asked].sort(), "the owner's list shows both tasks again");
      const questions = (await stack.store.listWaitingForPeople(Date.now(), { limit: 10 })).questions;
      assert.deepEqual(
        questions.map(({ task, key }) => `${task.taskId} ${key}`),
        [`${asked} approval`],
        "the approvers' list shows the question again",
      );
      assert.equal(logs.filter((event) => event.event === 'recovery-orphan-removed' && event['index'] === LIST_INDEX.name).length, 2);
      assert.equal(logs.filter((event) => event.event === 'recovery-index-entry-restored').length, 2);
    } finally {
      await stack.close();
    }
    // Exactly the entries of the items that carry list keys: no orphan, none missing.
    assert.deepEqual(await withTable(dataDir, listEntries), whole);
  });
});
