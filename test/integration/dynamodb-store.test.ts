import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DescribeTableCommand, type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { ensureTaskTable, type LocalDynamoDb } from '../../bin/local/dynamodb.ts';
import {
  ACTIVE_INDEX,
  activeShardOf,
  DEFAULT_ACTIVE_INDEX_SHARDS,
  DynamoDbTaskStore,
  RESULT_CHUNK_BYTES,
  RESULT_SK_PREFIX,
  STEP_SK_PREFIX,
  TABLE_KEYS,
  TTL_ATTRIBUTE,
} from '../../shared/tasks/dynamodb/index.ts';
import { MAX_RESULT_BYTES, type TaskRecord } from '../../shared/tasks/model.ts';
import { LeaseLostError } from '../../shared/tasks/store-errors.ts';
import type { HeartbeatOptions } from '../../shared/tasks/store-types.ts';
import { expiresAtSeconds } from '../../shared/tasks/ttl.ts';
import { CONTRACT_POLICY } from '../contract/kit.ts';
import { describeTaskStore } from '../contract/task-store.contract.ts';
import { type Item, localTable, probeTable, type TableProbe } from '../support/dynalite-table.ts';
import { newTask } from '../support/factories.ts';

describeTaskStore('DynamoDbTaskStore on dynalite', async () => {
  const { local, client, tableName } = await localTable();
  return {
    store: new DynamoDbTaskStore({ client, tableName, policy: CONTRACT_POLICY }),
    close: async () => {
      client.destroy();
      await local.close();
    },
  };
});

describe('DynamoDbTaskStore rows and request costs', () => {
  const T0 = 1_700_000_000_123;
  const RETENTION = CONTRACT_POLICY.retentionMs;
  const GRACE = CONTRACT_POLICY.sweepGraceMs;
  const LEASE = CONTRACT_POLICY.leaseMs;
  /** W: how long after a task is due to run the sweeper looks at it. */
  const W = LEASE + GRACE;
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

  /** Every item of a task's partition whose sort key starts with `prefix`. */
  async function itemsOf(taskId: string, prefix: string): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Item | undefined;
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition, '#sk': TABLE_KEYS.sort },
          ExpressionAttributeValues: { ':pk': { S: taskId }, ':prefix': { S: prefix } },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  /** Whether the active index holds the task (queried in the task's own shard). */
  async function indexed(taskId: string): Promise<boolean> {
    const { Items } = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: ACTIVE_INDEX.name,
        KeyConditionExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': ACTIVE_INDEX.partition },
        ExpressionAttributeValues: { ':shard': { S: activeShardOf(taskId) } },
      }),
    );
    return (Items ?? []).some((item) => item[TABLE_KEYS.partition]?.S === taskId);
  }

  const echoTask = (taskId = randomUUID(), now = T0) => newTask({ taskId, arguments: { text: 'hi' }, now, ttlMs: 60_000 });

  async function claimedTask(now = T0 + 1): Promise<TaskRecord> {
    const { task } = await store.create(echoTask(randomUUID(), now - 1));
    const claimed = await store.claim(task.taskId, 'w1', now);
    assert.ok(claimed);
    return claimed;
  }

  /** A `CallToolResult` whose JSON is exactly `bytes` long, with multi-byte characters across chunk boundaries. */
  function resultOfSize(bytes: number, seed: string): Record<string, unknown> {
    const empty = JSON.stringify({ content: [{ type: 'text', text: '' }] });
    const filler = `${seed}ü€😀`; // 1 + 2 + 3 + 4 bytes beyond the seed
    let text = filler.repeat(Math.floor((bytes - empty.length) / Buffer.byteLength(filler)));
    text += 'x'.repeat(bytes - empty.length - Buffer.byteLength(text));
    const result = { content: [{ type: 'text', text }] };
    assert.equal(Buffer.byteLength(JSON.stringify(result)), bytes);
    return result;
  }

  it('ensureTaskTable creates the sparse active index, keys only', async () => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const index = Table?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === ACTIVE_INDEX.name);
    assert.ok(index);
    assert.deepEqual(index.KeySchema, [
      { AttributeName: ACTIVE_INDEX.partition, KeyType: 'HASH' },
      { AttributeName: ACTIVE_INDEX.sort, KeyType: 'RANGE' },
    ]);
    assert.equal(index.Projection?.ProjectionType, 'KEYS_ONLY');
    await ensureTaskTable(client, tableName); // a second call is harmless
  });

  it('request counts: create 1 PutItem, claim, heartbeat, release and finish 1 UpdateItem each, get 1 GetItem', async () => {
    const taskId = randomUUID();
    assert.deepEqual(await commandsOf(() => store.create(echoTask(taskId))), ['PutItem']);
    let claimed: TaskRecord | undefined;
    assert.deepEqual(await commandsOf(async () => (claimed = await store.claim(taskId, 'w1', T0 + 1))), ['UpdateItem']);
    assert.ok(claimed);
    assert.deepEqual(await commandsOf(() => store.heartbeat(taskId, 'w1', T0 + 2, { leaseMs: LEASE, statusMessage: 'busy' })), [
      'UpdateItem',
    ]);
    assert.deepEqual(await commandsOf(() => store.heartbeat(taskId, 'w1', T0 + 3, { leaseMs: LEASE })), ['UpdateItem']);
    assert.deepEqual(await commandsOf(() => store.heartbeat(taskId, 'w1', T0 + 3, { statusMessage: 'busy' })), ['UpdateItem']);
    assert.deepEqual(await commandsOf(() => store.release(taskId, 'w1', T0 + 4)), ['UpdateItem']);
    claimed = await store.claim(taskId, 'w2', T0 + 5);
    assert.ok(claimed);
    assert.deepEqual(await commandsOf(() => store.finish(claimed!, 'w2', { status: 'completed', result: { content: [] } }, T0 + 6)), [
      'UpdateItem',
    ]);
    assert.deepEqual(await commandsOf(() => store.get(taskId, 'alice', T0 + 7)), ['GetItem']);
    assert.deepEqual(await commandsOf(() => store.cancel(taskId, 'alice', T0 + 8)), ['GetItem']);
  });

  it('heartbeat learns cancelRequested without the row coming back', async () => {
    const task = await claimedTask();
    const returned = async (options: HeartbeatOptions) => {
      probe.sent.length = 0;
      await store.heartbeat(task.taskId, 'w1', T0 + 5, options);
      return Object.keys((probe.sent[0]?.output as { Attributes?: Item } | undefined)?.Attributes ?? {}).sort();
    };
    assert.deepEqual(await returned({ leaseMs: LEASE, statusMessage: 'busy' }), [
      'cancelRequested',
      'lastUpdatedAt',
      'leaseUntil',
      'statusMessage',
      'sweepAt',
      'version',
    ]);
    assert.deepEqual(await returned({ statusMessage: 'busy' }), ['cancelRequested', 'lastUpdatedAt', 'statusMessage', 'version']);
    assert.deepEqual(await returned({}), ['cancelRequested', 'version']);
  });

  it('only create, a renewing heartbeat, release, answer and reschedule write the index keys; claim and progress do not', async () => {
    const taskId = randomUUID();
    /** The update expression of the single request `action` sent. */
    const expressionOf = async (action: () => Promise<unknown>) => {
      probe.sent.length = 0;
      const requests: string[] = [];
      client.middlewareStack.add(
        (next) => async (args) => {
          requests.push(String((args.input as { UpdateExpression?: string }).UpdateExpression ?? ''));
          return next(args);
        },
        { step: 'initialize', name: 'captureExpression' },
      );
      try {
        await action();
      } finally {
        client.middlewareStack.remove('captureExpression');
      }
      assert.equal(requests.length, 1);
      return requests[0]!;
    };
    const sweepKey = (row: Item) => [row[ACTIVE_INDEX.partition]?.S, row[ACTIVE_INDEX.sort]?.N];

    await store.create(echoTask(taskId));
    const created = sweepKey(await rawRow(taskId));
    assert.deepEqual(created, [activeShardOf(taskId), String(T0 + W)]);

    assert.doesNotMatch(await expressionOf(() => store.claim(taskId, 'w1', T0 + 1)), /sweepAt|activeShard/);
    assert.deepEqual(sweepKey(await rawRow(taskId)), created, 'claim leaves the index entry where it is');
    assert.doesNotMatch(
      await expressionOf(() => store.heartbeat(taskId, 'w1', T0 + 2, { statusMessage: 'busy' })),
      /sweepAt|activeShard|leaseUntil/,
    );
    assert.deepEqual(sweepKey(await rawRow(taskId)), created, 'a progress-only heartbeat leaves the index entry where it is');

    assert.match(await expressionOf(() => store.heartbeat(taskId, 'w1', T0 + 3, { leaseMs: LEASE })), /sweepAt/);
    assert.deepEqual(sweepKey(await rawRow(taskId)), [activeShardOf(taskId), String(T0 + 3 + W)]);
    await store.release(taskId, 'w1', T0 + 100);
    assert.deepEqual(sweepKey(await rawRow(taskId)), [activeShardOf(taskId), String(T0 + 100 + W)]);
    assert.equal(await store.reschedule(taskId, T0 + 100 + W, T0 + 100 + 2 * W), true);
    assert.deepEqual(sweepKey(await rawRow(taskId)), [activeShardOf(taskId), String(T0 + 100 + 2 * W)]);
  });

  it('answer and cancel read once and write once when uncontended; fail too', async () => {
    const task = await claimedTask();
    await store.finish(task, 'w1', { status: 'input_required', inputRequests: { a: { method: 'roots/list' } } }, T0 + 2);
    assert.deepEqual(await commandsOf(() => store.answer(task.taskId, 'alice', { a: [] }, T0 + 3)), ['GetItem', 'UpdateItem']);
    assert.deepEqual(await commandsOf(() => store.cancel(task.taskId, 'alice', T0 + 4)), ['GetItem', 'UpdateItem']);
    assert.deepEqual(await commandsOf(() => store.cancel(task.taskId, 'alice', T0 + 5)), ['GetItem']);
    const other = await store.create(echoTask());
    assert.deepEqual(
      await commandsOf(() =>
        store.fail(other.task.taskId, { error: { code: -32603, message: 'x' }, statusMessage: 'gave up', now: T0 + 1 }),
      ),
      ['GetItem', 'UpdateItem'],
    );
  });

  it('sweeper requests: findDue queries each shard of the index, reschedule is one UpdateItem', async () => {
    assert.equal(DEFAULT_ACTIVE_INDEX_SHARDS, 4);
    assert.deepEqual(await commandsOf(() => store.findDue(T0, 10)), Array(DEFAULT_ACTIVE_INDEX_SHARDS).fill('Query'));
    for (const entry of probe.sent) assert.equal(entry.command, 'QueryCommand');
    const { task } = await store.create(echoTask());
    assert.deepEqual(await commandsOf(() => store.reschedule(task.taskId, T0 + GRACE, T0 + 2 * GRACE)), ['UpdateItem']);
    assert.deepEqual(await commandsOf(() => store.reschedule(task.taskId, T0 + GRACE, T0 + 2 * GRACE)), ['UpdateItem']);
  });

  it('step requests: saveStep is one PutItem (plus a read when the step exists), loadSteps one Query', async () => {
    const task = await claimedTask();
    assert.deepEqual(await commandsOf(() => store.saveStep(task.taskId, { name: 'a', value: 1, now: T0 + 2 })), ['PutItem']);
    assert.deepEqual(await commandsOf(() => store.saveStep(task.taskId, { name: 'a', value: 2, now: T0 + 3 })), ['PutItem', 'GetItem']);
    assert.deepEqual(await commandsOf(() => store.loadSteps(task.taskId)), ['Query']);
  });

  it('step items: sk is step#<name>, the value is JSON, expiresAt is stepRetentionMs after the write', async () => {
    const task = await claimedTask();
    await store.saveStep(task.taskId, { name: 'fetch #1', value: { ok: true }, now: T0 + 2_500 });
    const item = await rawItem(task.taskId, `${STEP_SK_PREFIX}fetch #1`);
    assert.ok(item);
    assert.equal(item['value']?.S, '{"ok":true}');
    assert.equal(item[TTL_ATTRIBUTE]?.N, String(Math.ceil((T0 + 2_500 + CONTRACT_POLICY.stepRetentionMs) / 1000)));
  });

  it('loadSteps pages through more than one query page of steps', async () => {
    const task = await claimedTask();
    const big = 'x'.repeat(200_000);
    for (let index = 0; index < 7; index += 1)
      await store.saveStep(task.taskId, { name: `s${index}`, value: `${index}${big}`, now: T0 + 2 });
    const commands = await commandsOf(async () => {
      const steps = await store.loadSteps(task.taskId);
      assert.equal(steps.size, 7);
      assert.equal(steps.get('s6'), `6${big}`);
    });
    assert.ok(commands.length > 1 && commands.every((command) => command === 'Query'), commands.join());
  });

  it('non-terminal rows never expire and sit in the active index; input_required and terminal rows leave it', async () => {
    const taskId = randomUUID();
    const shard = activeShardOf(taskId);
    assert.match(shard, /^s[0-3]$/);
    const inIndex = (row: Item) => [ACTIVE_INDEX.partition, ACTIVE_INDEX.sort].filter((name) => name in row);
    const expiry = (row: Item) => [TTL_ATTRIBUTE, 'expiresAtMs'].filter((name) => name in row);

    await store.create(echoTask(taskId));
    let row = await rawRow(taskId);
    assert.equal(row[ACTIVE_INDEX.partition]?.S, shard);
    assert.equal(row[ACTIVE_INDEX.sort]?.N, String(T0 + W));
    assert.deepEqual(expiry(row), []);
    assert.equal(await indexed(taskId), true);

    const first = await store.claim(taskId, 'w1', T0 + 1);
    assert.ok(first);
    row = await rawRow(taskId);
    assert.equal(row[ACTIVE_INDEX.sort]?.N, String(T0 + W), 'a claim leaves sweepAt where create put it');
    assert.deepEqual(expiry(row), []);

    await store.finish(first, 'w1', { status: 'input_required', inputRequests: { a: { method: 'roots/list' } } }, T0 + 2);
    row = await rawRow(taskId);
    assert.deepEqual(inIndex(row), []);
    assert.deepEqual(expiry(row), []);
    assert.equal(await indexed(taskId), false);

    await store.answer(taskId, 'alice', { a: [] }, T0 + 3);
    row = await rawRow(taskId);
    assert.equal(row[ACTIVE_INDEX.partition]?.S, shard);
    assert.equal(row[ACTIVE_INDEX.sort]?.N, String(T0 + 3 + W));
    assert.deepEqual(expiry(row), []);
    assert.equal(await indexed(taskId), true);

    const second = await store.claim(taskId, 'w2', T0 + 4);
    assert.ok(second);
    const finished = await store.finish(second, 'w2', { status: 'completed', result: {} }, T0 + 5_000);
    assert.equal(finished.ttlMs, 5_000 + RETENTION);
    row = await rawRow(taskId);
    assert.deepEqual(inIndex(row), []);
    assert.equal(row[TTL_ATTRIBUTE]?.N, String(expiresAtSeconds(T0, 5_000 + RETENTION)));
    assert.equal(row[TTL_ATTRIBUTE]?.N, String(Math.ceil((T0 + 5_000 + RETENTION) / 1000)));
    assert.equal(row['expiresAtMs']?.N, String(T0 + 5_000 + RETENTION));
    assert.equal(await indexed(taskId), false);
  });

  const endings: Array<{ name: string; end: (task: TaskRecord) => Promise<unknown> }> = [
    {
      name: 'fail',
      end: (task) => store.fail(task.taskId, { error: { code: -32603, message: 'x' }, statusMessage: 'gave up', now: T0 + 2 + LEASE }),
    },
    { name: 'cancel', end: (task) => store.cancel(task.taskId, 'alice', T0 + 2 + LEASE) },
    { name: 'finish (cancelled)', end: (task) => store.finish(task, 'w1', { status: 'cancelled' }, T0 + 2) },
  ];
  for (const { name, end } of endings) {
    it(`${name} takes the row out of the index and gives it expiresAt`, async () => {
      const task = await claimedTask();
      assert.equal(await indexed(task.taskId), true);
      await end(task);
      const row = await rawRow(task.taskId);
      assert.equal(ACTIVE_INDEX.partition in row || ACTIVE_INDEX.sort in row, false);
      assert.ok(row[TTL_ATTRIBUTE]);
      assert.equal(await indexed(task.taskId), false);
    });
  }

  it('removes the attributes that do not belong to the new status from the row', async () => {
    const taskId = randomUUID();
    await store.create(echoTask(taskId));
    const first = await store.claim(taskId, 'w1', T0 + 1);
    assert.ok(first);
    await store.finish(first, 'w1', { status: 'input_required', inputRequests: { a: { method: 'roots/list' } } }, T0 + 2);
    assert.ok((await rawRow(taskId))['inputRequests']);

    await store.answer(taskId, 'alice', { a: [] }, T0 + 3);
    assert.deepEqual(
      Object.keys(await rawRow(taskId)).filter((name) => ['inputRequests', 'leaseOwner', 'leaseUntil'].includes(name)),
      [],
    );

    const second = await store.claim(taskId, 'w2', T0 + 4);
    assert.ok(second);
    await store.finish(second, 'w2', { status: 'failed', error: { code: -32603, message: 'Internal error' } }, T0 + 5);
    const row = await rawRow(taskId);
    assert.deepEqual(
      ['inputRequests', 'result', 'resultRef', 'error', 'leaseOwner', 'leaseUntil'].filter((name) => name in row),
      ['error'],
    );
  });

  // --- large results ---------------------------------------------------------

  it(`a result of MAX_RESULT_BYTES (${MAX_RESULT_BYTES}) round-trips through chunk items`, async () => {
    const task = await claimedTask();
    const result = resultOfSize(MAX_RESULT_BYTES, 'a');
    let finished: TaskRecord | undefined;
    assert.deepEqual(await commandsOf(async () => (finished = await store.finish(task, 'w1', { status: 'completed', result }, T0 + 2))), [
      'BatchWriteItem',
      'UpdateItem',
    ]);
    assert.ok(finished?.status === 'completed');
    assert.deepEqual(finished.result, result);

    const row = await rawRow(task.taskId);
    assert.equal('result' in row, false);
    const ref = row['resultRef']?.M;
    assert.ok(ref);
    const chunks = await itemsOf(task.taskId, RESULT_SK_PREFIX);
    const count = Math.ceil(MAX_RESULT_BYTES / RESULT_CHUNK_BYTES);
    assert.equal(ref['chunks']?.N, String(count));
    assert.equal(chunks.length, count);
    for (const [index, chunk] of chunks.entries()) {
      assert.equal(chunk[TABLE_KEYS.sort]?.S, `${RESULT_SK_PREFIX}${ref['id']?.S}#${String(index).padStart(4, '0')}`);
      assert.equal(chunk[TTL_ATTRIBUTE]?.N, row[TTL_ATTRIBUTE]?.N);
    }

    let read: TaskRecord | undefined;
    const commands = await commandsOf(async () => (read = await store.get(task.taskId, 'alice', T0 + 3)));
    assert.deepEqual(read, finished);
    // One GetItem, then the chunks by key. Real DynamoDB answers up to 16 MB
    // in one BatchGetItem; dynalite stops each answer near 1 MB.
    assert.equal(commands[0], 'GetItem');
    assert.ok(commands.length >= 2 && commands.slice(1).every((command) => command === 'BatchGetItem'), commands.join());
  });

  it('a chunked result that fits one batch answer costs one GetItem and one BatchGetItem to read', async () => {
    const task = await claimedTask();
    const result = resultOfSize(2 * RESULT_CHUNK_BYTES - 1000, 'b');
    await store.finish(task, 'w1', { status: 'completed', result }, T0 + 2);
    assert.equal((await itemsOf(task.taskId, RESULT_SK_PREFIX)).length, 2);
    let read: TaskRecord | undefined;
    assert.deepEqual(await commandsOf(async () => (read = await store.get(task.taskId, 'alice', T0 + 3))), ['GetItem', 'BatchGetItem']);
    assert.deepEqual(read?.status === 'completed' && read.result, result);
    assert.deepEqual(
      await commandsOf(() => store.cancel(task.taskId, 'alice', T0 + 4)),
      ['GetItem'],
      'no chunk reads to decide on a terminal task',
    );
  });

  it('a result that fits the row stays in the row and costs exactly one GetItem to read', async () => {
    const task = await claimedTask();
    const result = resultOfSize(200_000, 'c');
    assert.deepEqual(await commandsOf(() => store.finish(task, 'w1', { status: 'completed', result }, T0 + 2)), ['UpdateItem']);
    assert.deepEqual(await itemsOf(task.taskId, RESULT_SK_PREFIX), []);
    let read: TaskRecord | undefined;
    assert.deepEqual(await commandsOf(async () => (read = await store.get(task.taskId, 'alice', T0 + 3))), ['GetItem']);
    assert.deepEqual(read?.status === 'completed' && read.result, result);
  });

  it('the chunks of an attempt that lost its lease are never mixed in', async () => {
    const stale = await claimedTask();
    const current = await store.claim(stale.taskId, 'w2', T0 + 1 + LEASE);
    assert.ok(current);
    const staleResult = resultOfSize(3 * RESULT_CHUNK_BYTES, 'd');
    await assert.rejects(store.finish(stale, 'w1', { status: 'completed', result: staleResult }, T0 + 2 + LEASE), LeaseLostError);
    const result = resultOfSize(2 * RESULT_CHUNK_BYTES, 'e');
    await store.finish(current, 'w2', { status: 'completed', result }, T0 + 3 + LEASE);
    assert.equal((await itemsOf(stale.taskId, RESULT_SK_PREFIX)).length, 5, 'both attempts wrote chunks');
    const read = await store.get(stale.taskId, 'alice', T0 + 4 + LEASE);
    assert.deepEqual(read?.status === 'completed' && read.result, result);
  });

  it('a chunked result is gone with its task once the task expires', async () => {
    const task = await claimedTask();
    const finished = await store.finish(task, 'w1', { status: 'completed', result: resultOfSize(RESULT_CHUNK_BYTES * 2, 'f') }, T0 + 2);
    assert.deepEqual(
      await commandsOf(async () => assert.equal(await store.get(task.taskId, 'alice', finished.createdAt + finished.ttlMs), undefined)),
      ['GetItem'],
    );
    assert.deepEqual(await commandsOf(async () => assert.equal(await store.get(task.taskId, 'mallory', T0 + 3), undefined)), ['GetItem']);
  });

  it('refuses step names that cannot be a sort key', async () => {
    const task = await claimedTask();
    await assert.rejects(store.saveStep(task.taskId, { name: 'x'.repeat(1020), value: 1, now: T0 + 2 }));
    await assert.rejects(store.saveStep(task.taskId, { name: 'lone \ud800 surrogate', value: 1, now: T0 + 2 }));
    assert.equal(await store.saveStep(task.taskId, { name: 'y'.repeat(1019), value: 1, now: T0 + 2 }), 1);
  });
});
