/**
 * The DynamoDB store's items beside the task row: the idempotency-key items
 * (what a create with a key writes and reads, a first call that died between
 * its two writes, keys outliving their task) and the list index's keys (written
 * once at creation, rows from before the index, a policy that lists nothing).
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DescribeTableCommand, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { LocalDynamoDb } from '../../bin/local/dynamodb.ts';
import {
  DynamoDbTaskStore,
  IDEMPOTENCY_GRACE_MS,
  IDEMPOTENCY_PK_PREFIX,
  IDEMPOTENCY_SK,
  LIST_INDEX,
  TABLE_KEYS,
  TASK_ROW_SK,
  TTL_ATTRIBUTE,
} from '../../shared/tasks/dynamodb/index.ts';
import { CONTRACT_POLICY } from '../contract/kit.ts';
import { localTable, probeTable, type TableProbe } from '../support/dynalite-table.ts';
import { newTask } from '../support/factories.ts';

describe('DynamoDbTaskStore key and list items', () => {
  const T0 = 1_700_000_000_123;
  const RETENTION = CONTRACT_POLICY.retentionMs;
  const LEASE = CONTRACT_POLICY.leaseMs;
  let local: LocalDynamoDb;
  let client: DynamoDBClient;
  let tableName: string;
  let store: DynamoDbTaskStore;
  let probe: TableProbe;
  const commandsOf = (action: () => Promise<unknown>) => probe.commandsOf(action);
  const rawItem = (pk: string, sk: string) => probe.rawItem(pk, sk);
  const rawRow = (taskId: string) => probe.rawRow(taskId);

  before(async () => {
    ({ local, client, tableName } = await localTable());
    probe = probeTable(client, tableName);
    store = new DynamoDbTaskStore({ client, tableName, policy: CONTRACT_POLICY });
  });
  after(async () => {
    client.destroy();
    await local.close();
  });

  const echoTask = (taskId = randomUUID(), now = T0) => newTask({ taskId, arguments: { text: 'hi' }, now, ttlMs: 60_000 });

  const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
  const keyPk = (owner: string, key: string) => IDEMPOTENCY_PK_PREFIX + sha256(`${owner}\u0000${key}`);
  /** Writes alice's idempotency-key item for `key` by hand, as a first call would have left it. */
  const putKeyItem = (key: string, taskId: string, createdAt: number, options: { fingerprint?: string; expiresAtSeconds?: number } = {}) =>
    client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          [TABLE_KEYS.partition]: { S: keyPk('alice', key) },
          [TABLE_KEYS.sort]: { S: IDEMPOTENCY_SK },
          taskId: { S: taskId },
          fingerprint: { S: options.fingerprint ?? sha256(JSON.stringify(['echo', { text: 'hi' }])) },
          createdAt: { N: String(createdAt) },
          [TTL_ATTRIBUTE]: { N: String(options.expiresAtSeconds ?? Math.ceil((createdAt + RETENTION + IDEMPOTENCY_GRACE_MS) / 1000)) },
        },
      }),
    );

  it('create with a key costs two PutItems; a repeat reads the key and finds the row', async () => {
    const key = randomUUID();
    const taskId = randomUUID();
    assert.deepEqual(await commandsOf(() => store.create(echoTask(taskId), { idempotencyKey: key })), ['PutItem', 'PutItem']);
    const keyItem = await rawItem(keyPk('alice', key), IDEMPOTENCY_SK);
    assert.ok(keyItem);
    assert.equal(keyItem['taskId']?.S, taskId);
    assert.equal(keyItem['fingerprint']?.S, sha256(JSON.stringify(['echo', { text: 'hi' }])));
    assert.equal(keyItem[TTL_ATTRIBUTE]?.N, String(Math.ceil((T0 + RETENTION + IDEMPOTENCY_GRACE_MS) / 1000)));

    assert.deepEqual(await commandsOf(() => store.create(echoTask(), { idempotencyKey: key })), [
      'PutItem',
      'GetItem',
      'PutItem',
      'GetItem',
    ]);
  });

  it('a create that finds the key but no row (its first call died in between) writes the row under the recorded id', async () => {
    const key = randomUUID();
    const recordedId = randomUUID();
    await putKeyItem(key, recordedId, T0);
    const recovered = await store.create(echoTask(randomUUID(), T0 + 5_000), { idempotencyKey: key });
    assert.equal(recovered.created, true);
    assert.equal(recovered.task.taskId, recordedId);
    assert.equal((await store.get(recordedId, 'alice', T0 + 5_001))?.status, 'working');
    assert.deepEqual(await store.create(echoTask(randomUUID(), T0 + 6_000), { idempotencyKey: key }), {
      task: recovered.task,
      created: false,
    });
  });

  it('a key whose task is long gone (row deleted by TTL) starts over with a new task', async () => {
    const key = randomUUID();
    const goneId = randomUUID();
    await putKeyItem(key, goneId, T0);
    const later = T0 + RETENTION + 1;
    const fresh = await store.create(echoTask(randomUUID(), later), { idempotencyKey: key });
    assert.equal(fresh.created, true);
    assert.notEqual(fresh.task.taskId, goneId);
    assert.equal(await rawItem(goneId, TASK_ROW_SK), undefined, 'the gone task is not brought back');
    assert.equal((await rawItem(keyPk('alice', key), IDEMPOTENCY_SK))?.['taskId']?.S, fresh.task.taskId);
  });

  it('an expired key item that DynamoDB has not deleted yet counts as absent', async () => {
    const key = randomUUID();
    await putKeyItem(key, randomUUID(), T0 - 10 * IDEMPOTENCY_GRACE_MS, {
      fingerprint: 'something else entirely',
      expiresAtSeconds: Math.floor(T0 / 1000) - 1,
    });
    const taskId = randomUUID();
    assert.deepEqual(await commandsOf(() => store.create(echoTask(taskId), { idempotencyKey: key })), ['PutItem', 'PutItem']);
    assert.equal((await rawItem(keyPk('alice', key), IDEMPOTENCY_SK))?.['taskId']?.S, taskId);
  });

  it('ensureTaskTable creates the list index, keys only, string keys', async () => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const index = Table?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === LIST_INDEX.name);
    assert.ok(index);
    assert.deepEqual(index.KeySchema, [
      { AttributeName: LIST_INDEX.partition, KeyType: 'HASH' },
      { AttributeName: LIST_INDEX.sort, KeyType: 'RANGE' },
    ]);
    assert.equal(index.Projection?.ProjectionType, 'KEYS_ONLY');
    const types = Object.fromEntries((Table?.AttributeDefinitions ?? []).map((a) => [a.AttributeName, a.AttributeType]));
    assert.equal(types[LIST_INDEX.partition], 'S');
    assert.equal(types[LIST_INDEX.sort], 'S');
  });

  it('the list keys are written by the create and left alone by every later write of the task', async () => {
    const owner = `owner-${randomUUID()}`;
    const { task } = await store.create(newTask({ owner, now: T0, ttlMs: 60_000 }));
    const written = await rawRow(task.taskId);
    const keys = { listKey: written[LIST_INDEX.partition], listSort: written[LIST_INDEX.sort] };
    assert.match(keys.listKey?.S ?? '', /^owner#[0-9a-f]{64}$/);
    assert.equal(keys.listSort?.S, `${String(T0).padStart(15, '0')}#${task.taskId}`);
    const claimed = await store.claim(task.taskId, 'w1', T0 + 1);
    assert.ok(claimed);
    await store.heartbeat(task.taskId, 'w1', T0 + 2, { leaseMs: LEASE, statusMessage: 'half way' });
    await store.finish(claimed, 'w1', { status: 'completed', result: { content: [] } }, T0 + 3);
    const after = await rawRow(task.taskId);
    assert.deepEqual({ listKey: after[LIST_INDEX.partition], listSort: after[LIST_INDEX.sort] }, keys);
    // Every write since the create named attributes other than the list keys: none touched the index.
    const writes = await commandsOf(async () => {
      const { task: other } = await store.create(newTask({ owner, now: T0 + 10, ttlMs: 60_000 }));
      await store.cancel(other.taskId, owner, T0 + 11);
    });
    assert.deepEqual(writes, ['PutItem', 'GetItem', 'UpdateItem']);
    const page = await commandsOf(() => store.list(owner, T0 + 20, { limit: 10 }));
    assert.deepEqual(page, ['Query', 'BatchGetItem'], 'a page of one partition: one query, one batch read');
  });

  it('rows written before the index existed (no list keys) keep working and are not listed', async () => {
    const owner = `owner-${randomUUID()}`;
    const { task } = await store.create(newTask({ owner, now: T0, ttlMs: 60_000 }));
    const row = await rawRow(task.taskId);
    delete row[LIST_INDEX.partition];
    delete row[LIST_INDEX.sort];
    await client.send(new PutItemCommand({ TableName: tableName, Item: row }));
    assert.deepEqual(await store.list(owner, T0 + 1, { limit: 10 }), { tasks: [] });
    assert.equal((await store.get(task.taskId, owner, T0 + 1))?.status, 'working');
    assert.equal((await store.cancel(task.taskId, owner, T0 + 2)).result, 'cancelled');
    assert.equal((await rawRow(task.taskId))[LIST_INDEX.partition], undefined, 'a later write does not list it either');
  });

  it('a store whose policy lists nothing writes no list keys', async () => {
    const { listing: _listing, ...unlisted } = CONTRACT_POLICY;
    const quiet = new DynamoDbTaskStore({ client, tableName, policy: unlisted });
    const owner = `owner-${randomUUID()}`;
    const { task } = await quiet.create(newTask({ owner, now: T0, ttlMs: 60_000 }));
    assert.equal((await rawRow(task.taskId))[LIST_INDEX.partition], undefined);
    assert.deepEqual(await quiet.list(owner, T0 + 1, { limit: 10 }), { tasks: [] });
  });
});
