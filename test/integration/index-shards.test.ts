/**
 * The index shard count as a deploy setting, on dynalite through the real
 * SDK (and fauxqs for the sweeper's sends): a count that grows keeps every
 * unfinished task found, whether its row was written before or after, and a
 * backlog spread over every shard is swept in one run, well within a sweep
 * interval.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type AttributeValue, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { ensureTaskTable, type LocalDynamoDb, startDynalite } from '../../bin/local/dynamodb.ts';
import { recoverAtStart } from '../../bin/local/recovery.ts';
import { LOCAL_CREDENTIALS, type LocalSqs, localSqsClient, startLocalSqs } from '../../bin/local/sqs.ts';
import { Ops } from '../../bin/ops/ops.ts';
import { DEFAULT_SETTINGS, loadConfig } from '../../shared/config.ts';
import { SqsTaskQueue } from '../../shared/queue/sqs-queue.ts';
import { SWEEP_PAGE, sweep } from '../../shared/runtime/sweeper.ts';
import {
  ACTIVE_INDEX,
  activeShardOf,
  DynamoDbTaskStore,
  MAX_ACTIVE_INDEX_SHARDS,
  TABLE_KEYS,
  TASK_ROW_SK,
} from '../../shared/tasks/dynamodb/index.ts';
import { sweepWindow } from '../../shared/tasks/predicates.ts';
import { newTask, storePolicy } from '../support/factories.ts';

const POLICY = storePolicy();
const W = sweepWindow(POLICY);
const T0 = 1_700_000_000_000;
const silent = () => undefined;

let dynamo: LocalDynamoDb;
let client: DynamoDBClient;
let sqs: LocalSqs;
let sqsClient: SQSClient;

before(async () => {
  dynamo = await startDynalite();
  client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  sqs = await startLocalSqs();
  sqsClient = localSqsClient(sqs.endpoint, sqs.region);
});

after(async () => {
  client.destroy();
  sqsClient.destroy();
  await dynamo.close();
  await sqs.close();
});

async function freshTable(): Promise<string> {
  const tableName = `tasks-${randomUUID()}`;
  await ensureTaskTable(client, tableName);
  return tableName;
}

function storeWith(tableName: string, activeIndexShards: number): DynamoDbTaskStore {
  return new DynamoDbTaskStore({ client, tableName, policy: { ...POLICY, activeIndexShards } });
}

async function shardOfRow(tableName: string, taskId: string): Promise<string | undefined> {
  const key: Record<string, AttributeValue> = { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } };
  const { Item } = await client.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return Item?.[ACTIVE_INDEX.partition]?.S;
}

async function createMany(store: DynamoDbTaskStore, prefix: string, count: number, now: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, index) => `${prefix}-${index}`);
  for (let start = 0; start < ids.length; start += 25) {
    await Promise.all(ids.slice(start, start + 25).map((taskId) => store.create(newTask({ taskId, now }))));
  }
  return ids;
}

describe('index shard count', () => {
  it('the setting is read, defaults to 4 and is bounded', () => {
    const base = { TASKS_TABLE_NAME: 't', TASKS_QUEUE_URL: 'q' };
    assert.equal(loadConfig(base).activeIndexShards, 4);
    assert.equal(DEFAULT_SETTINGS.activeIndexShards, 4);
    assert.equal(loadConfig({ ...base, TASKS_ACTIVE_INDEX_SHARDS: '8' }).activeIndexShards, 8);
    const most = String(MAX_ACTIVE_INDEX_SHARDS);
    assert.equal(loadConfig({ ...base, TASKS_ACTIVE_INDEX_SHARDS: most }).activeIndexShards, MAX_ACTIVE_INDEX_SHARDS);
    assert.throws(
      () => loadConfig({ ...base, TASKS_ACTIVE_INDEX_SHARDS: String(MAX_ACTIVE_INDEX_SHARDS + 1) }),
      new RegExp(`at most ${most}`),
    );
    assert.throws(() => loadConfig({ ...base, TASKS_ACTIVE_INDEX_SHARDS: '0' }), /TASKS_ACTIVE_INDEX_SHARDS/);
  });

  it('shard names are prefix-stable: a task lands among the first n shards of every count n', () => {
    for (const taskId of Array.from({ length: 200 }, () => randomUUID())) {
      for (const count of [1, 2, 4, 8, 16, 64]) {
        const index = Number(activeShardOf(taskId, count).slice(1));
        assert.ok(index >= 0 && index < count, `${taskId} under ${count}: s${index}`);
      }
    }
  });

  it('growing the count from 4 to 8 keeps every unfinished task swept, rows written before and after', async () => {
    const tableName = await freshTable();
    const before4 = await createMany(storeWith(tableName, 4), 'old', 40, T0);
    const store8 = storeWith(tableName, 8);
    const after8 = await createMany(store8, 'new', 40, T0);

    const oldShards = new Set(await Promise.all(before4.map((id) => shardOfRow(tableName, id))));
    const newShards = new Set(await Promise.all(after8.map((id) => shardOfRow(tableName, id))));
    assert.ok(
      [...oldShards].every((shard) => ['s0', 's1', 's2', 's3'].includes(String(shard))),
      [...oldShards].join(),
    );
    assert.ok(
      [...newShards].some((shard) => ['s4', 's5', 's6', 's7'].includes(String(shard))),
      'the new count uses the new shards',
    );

    // A row written under 4 and then claimed and released under 8 keeps being found too.
    const moved = before4[0]!;
    assert.ok(await store8.claim(moved, 'w1', T0 + 1));
    await store8.release(moved, 'w1', T0 + 2);

    const sent: string[] = [];
    const result = await sweep({
      store: store8,
      queue: { send: async (message) => void sent.push(message.taskId) },
      config: POLICY,
      log: silent,
      now: () => T0 + 2 + W,
    });
    assert.deepEqual([...result.requeued].sort(), [...before4, ...after8].sort());
    assert.deepEqual([...sent].sort(), [...before4, ...after8].sort());
    // And nothing is left due: every task was rescheduled one window ahead.
    assert.deepEqual(await store8.findDue(T0 + 2 + W, 1000), []);
  });

  it('a backlog of 600 tasks over all 8 shards is swept in one run, page after page (how fast is for the bench to say)', async () => {
    const tableName = await freshTable();
    const store = storeWith(tableName, 8);
    const count = 600;
    const ids = await createMany(store, 'stuck', count, T0);
    const shards = new Set(await Promise.all(ids.map((id) => shardOfRow(tableName, id))));
    assert.equal(shards.size, 8, `every shard holds some of the backlog: ${[...shards].join()}`);
    assert.ok(count > 4 * SWEEP_PAGE, 'more than a few pages');

    const queue = new SqsTaskQueue({ client: sqsClient, queueUrl: sqs.queueUrl });
    // The run's clock is the test's: a busy machine must not end the run at its deadline before the backlog is through.
    const result = await sweep({ store, queue, config: POLICY, log: silent, now: () => T0 + W });
    assert.equal(result.requeued.length, count);
    assert.equal(new Set(result.requeued).size, count, 'each task once');
    const { Attributes } = await sqsClient.send(
      new GetQueueAttributesCommand({ QueueUrl: sqs.queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.equal(Number(Attributes?.['ApproximateNumberOfMessages']), count);
  });

  it('the operator commands and the local recovery read every shard of the grown count', async () => {
    const tableName = await freshTable();
    const before4 = await createMany(storeWith(tableName, 4), 'old', 20, T0);
    const after8 = await createMany(storeWith(tableName, 8), 'new', 20, T0);
    const all = [...before4, ...after8].sort();
    const policy = { ...POLICY, maxInputWaitMs: 86_400_000, activeIndexShards: 8 };
    const ops = new Ops({ dynamodb: client, sqs: sqsClient, tableName, queueUrl: sqs.queueUrl, deadLetterQueueUrl: sqs.dlqUrl, policy });
    assert.deepEqual((await ops.working(100)).map((task) => task.taskId).sort(), all);
    const underFour = new Ops({
      dynamodb: client,
      sqs: sqsClient,
      tableName,
      queueUrl: sqs.queueUrl,
      deadLetterQueueUrl: sqs.dlqUrl,
      policy: { ...policy, activeIndexShards: 4 },
    });
    assert.ok((await underFour.working(100)).length < all.length, 'a reader of the old count alone misses the new shards');

    const sent: string[] = [];
    const report = await recoverAtStart({
      client,
      tableName,
      queue: { send: async (message) => void sent.push(message.taskId) },
      sweepWindowMs: W,
      activeIndexShards: 8,
      now: T0,
      log: silent,
    });
    assert.equal(report.orphansRemoved, 0, 'every index entry of every shard matched its row');
    assert.deepEqual(sent.sort(), all);
    const shards = await Promise.all(all.map((id) => shardOfRow(tableName, id)));
    assert.ok(
      all.every((id, index) => shards[index] === activeShardOf(id, 8)),
      'recovery re-homes rows to the shards of the current count',
    );
  });

  it('a task that stays due (neither reschedulable nor expirable) does not keep a run going', async () => {
    const tableName = await freshTable();
    const store = storeWith(tableName, 4);
    const [taskId] = await createMany(store, 'stays', 1, T0);
    let reads = 0;
    const stubborn = {
      findDue: async (now: number, limit: number) => {
        reads += 1;
        return store.findDue(now, limit);
      },
      reschedule: async () => false,
      expireWait: async () => undefined,
    } as unknown as DynamoDbTaskStore;
    const result = await sweep(
      { store: stubborn, queue: { send: async () => {} }, config: POLICY, log: silent, now: () => T0 + W },
      { page: 1 },
    );
    assert.deepEqual(result, { requeued: [], expired: [] });
    assert.equal(reads, 2, `a second page holding only ${taskId} again ends the run`);
  });
});
