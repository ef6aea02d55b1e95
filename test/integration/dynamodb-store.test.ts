import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTaskTable, startDynalite, type LocalDynamoDb } from '../../infra/local/dynamodb.ts';
import { TABLE_KEYS, TASK_ROW_SK, TTL_ATTRIBUTE } from '../../shared/tasks/dynamodb-schema.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb-store.ts';
import { expiresAtSeconds } from '../../shared/tasks/ttl.ts';
import { CONTRACT_RETENTION_MS, describeTaskStore } from '../contract/task-store.contract.ts';

/** A fresh in-memory dynalite with the task table under a unique name. */
async function localTable(): Promise<{ local: LocalDynamoDb; client: DynamoDBClient; tableName: string }> {
  const local = await startDynalite();
  const client = new DynamoDBClient({
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const tableName = `tasks-${randomUUID()}`;
  await ensureTaskTable(client, tableName);
  return { local, client, tableName };
}

describeTaskStore('DynamoDbTaskStore on dynalite', async () => {
  const { local, client, tableName } = await localTable();
  return {
    store: new DynamoDbTaskStore({ client, tableName, retentionMs: CONTRACT_RETENTION_MS }),
    close: async () => {
      client.destroy();
      await local.close();
    },
  };
});

describe('DynamoDbTaskStore row and request costs', () => {
  const T0 = 1_700_000_000_123;
  let local: LocalDynamoDb;
  let client: DynamoDBClient;
  let tableName: string;
  let store: DynamoDbTaskStore;
  const sent: string[] = [];

  before(async () => {
    ({ local, client, tableName } = await localTable());
    client.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'countCommands' },
    );
    store = new DynamoDbTaskStore({ client, tableName, retentionMs: CONTRACT_RETENTION_MS });
  });
  after(async () => {
    client.destroy();
    await local.close();
  });

  /** The commands `action` sent, in order. */
  async function commandsOf(action: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0;
    await action();
    return [...sent];
  }

  async function rawRow(taskId: string) {
    const { Item } = await client.send(
      new GetItemCommand({ TableName: tableName, Key: { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } }, ConsistentRead: true }),
    );
    assert.ok(Item);
    return Item;
  }

  const newTask = (taskId: string) => ({
    taskId,
    owner: 'alice',
    tool: 'echo',
    arguments: {},
    clientCapabilities: {},
    inputResponses: {},
    now: T0,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
  });

  it('a simple task costs one write each to create, claim and finish; get is one read', async () => {
    const taskId = randomUUID();
    assert.deepEqual(await commandsOf(() => store.create(newTask(taskId))), ['PutItemCommand']);
    let claimed;
    assert.deepEqual(await commandsOf(async () => (claimed = await store.claim(taskId, 'w1', T0 + 1, 10_000))), ['UpdateItemCommand']);
    assert.ok(claimed);
    assert.deepEqual(await commandsOf(() => store.progress(claimed!, 'w1', 'busy', T0 + 2)), ['UpdateItemCommand']);
    assert.deepEqual(
      await commandsOf(() => store.finish(claimed!, 'w1', { status: 'completed', result: { content: [] } }, T0 + 3)),
      ['UpdateItemCommand'],
    );
    assert.deepEqual(await commandsOf(() => store.get(taskId, 'alice', T0 + 4)), ['GetItemCommand']);
  });

  it('answer and cancel read once and write once when uncontended', async () => {
    const taskId = randomUUID();
    await store.create(newTask(taskId));
    const claimed = await store.claim(taskId, 'w1', T0 + 1, 10_000);
    assert.ok(claimed);
    await store.finish(claimed, 'w1', { status: 'input_required', inputRequests: { a: { method: 'roots/list' } } }, T0 + 2);
    assert.deepEqual(await commandsOf(() => store.answer(taskId, 'alice', { a: [] }, T0 + 3)), ['GetItemCommand', 'UpdateItemCommand']);
    assert.deepEqual(await commandsOf(() => store.cancel(taskId, 'alice', T0 + 4)), ['GetItemCommand', 'UpdateItemCommand']);
    assert.deepEqual(await commandsOf(() => store.cancel(taskId, 'alice', T0 + 5)), ['GetItemCommand']);
  });

  it('writes the key, and expiresAt (epoch seconds, rounded up) whenever ttlMs changes', async () => {
    const taskId = randomUUID();
    await store.create(newTask(taskId));
    let row = await rawRow(taskId);
    assert.equal(row[TABLE_KEYS.sort]?.S, TASK_ROW_SK);
    assert.equal(row[TTL_ATTRIBUTE]?.N, String(expiresAtSeconds(T0, 60_000)));
    assert.equal(row[TTL_ATTRIBUTE]?.N, String(Math.ceil((T0 + 60_000) / 1000)));

    const claimed = await store.claim(taskId, 'w1', T0 + 1, 10_000);
    assert.ok(claimed);
    const finished = await store.finish(claimed, 'w1', { status: 'completed', result: {} }, T0 + 5_000);
    assert.equal(finished.ttlMs, 5_000 + CONTRACT_RETENTION_MS);
    row = await rawRow(taskId);
    assert.equal(row[TTL_ATTRIBUTE]?.N, String(expiresAtSeconds(T0, 5_000 + CONTRACT_RETENTION_MS)));
    assert.equal(row['leaseOwner'], undefined);
    assert.equal(row['leaseUntil'], undefined);
  });

  it('removes the attributes that do not belong to the new status from the row', async () => {
    const taskId = randomUUID();
    await store.create(newTask(taskId));
    const first = await store.claim(taskId, 'w1', T0 + 1, 10_000);
    assert.ok(first);
    await store.finish(first, 'w1', { status: 'input_required', inputRequests: { a: { method: 'roots/list' } } }, T0 + 2);
    assert.ok((await rawRow(taskId))['inputRequests']);

    await store.answer(taskId, 'alice', { a: [] }, T0 + 3);
    assert.deepEqual(Object.keys(await rawRow(taskId)).filter((name) => ['inputRequests', 'leaseOwner', 'leaseUntil'].includes(name)), []);

    const second = await store.claim(taskId, 'w2', T0 + 4, 10_000);
    assert.ok(second);
    await store.finish(second, 'w2', { status: 'failed', error: { code: -32603, message: 'Internal error' } }, T0 + 5);
    const row = await rawRow(taskId);
    assert.deepEqual(
      ['inputRequests', 'result', 'error', 'leaseOwner', 'leaseUntil'].filter((name) => name in row),
      ['error'],
    );
  });
});
