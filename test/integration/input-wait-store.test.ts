/**
 * Waits for input with a deadline (`StorePolicy.maxInputWaitMs`), on both
 * stores: a waiting task enters the sweep index when it starts waiting and
 * leaves or moves when it stops (answered, cancelled, expired), and nothing in
 * between touches the index; past the deadline `findDue` returns it and
 * `expireWait` ends it failed; the TTL it advertises covers the deadline.
 * Plus the upgrade path: a row written before the setting existed (waiting,
 * no `sweepAt`) still reads, waits and resumes.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTaskTable, type LocalDynamoDb, startDynalite } from '../../bin/local/dynamodb.ts';
import { inputWaitExpired, sweep } from '../../shared/runtime/sweeper.ts';
import { ACTIVE_INDEX, activeShardOf, DynamoDbTaskStore, TABLE_KEYS, TASK_ROW_SK } from '../../shared/tasks/dynamodb/index.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory/index.ts';
import type { InputRequest, TaskRecord } from '../../shared/tasks/model.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { CLOCK_MARGIN_MS, renderedTtlMs } from '../../shared/tasks/ttl.ts';
import { newTask, storePolicy } from '../support/factories.ts';

const MAX_WAIT = 86_400_000;
const POLICY = storePolicy({ maxInputWaitMs: MAX_WAIT });
const W = POLICY.leaseMs + POLICY.sweepGraceMs;
const OWNER = 'alice';
const ELICIT: InputRequest = { method: 'elicitation/create', params: { mode: 'form', message: 'Sure?' } };

let t0 = 1_800_000_000_000;
/** Each case gets a sweeper window of its own (the stores are shared within a suite). */
const window = () => (t0 += 10 * MAX_WAIT);

async function waitingTask(store: TaskStore, now: number, requests: Record<string, InputRequest> = { a: ELICIT }): Promise<TaskRecord> {
  const taskId = randomUUID();
  await store.create(newTask({ taskId, owner: OWNER, tool: 'confirm', clientCapabilities: { elicitation: {} }, now, ttlMs: 60_000 }));
  const claimed = (await store.claim(taskId, 'w1', now + 1))!;
  return store.finish(claimed, 'w1', { status: 'input_required', inputRequests: requests }, now + 2);
}

const stores: Array<
  [string, () => Promise<{ store: TaskStore; close: () => Promise<void>; dynamo?: { client: DynamoDBClient; tableName: string } }>]
> = [
  ['in-memory store', async () => ({ store: new InMemoryTaskStore(POLICY), close: async () => {} })],
  [
    'DynamoDB store (dynalite)',
    async () => {
      const local: LocalDynamoDb = await startDynalite();
      const client = new DynamoDBClient({
        endpoint: local.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 't', secretAccessKey: 't' },
      });
      const tableName = `tasks-${randomUUID()}`;
      await ensureTaskTable(client, tableName);
      return {
        store: new DynamoDbTaskStore({ client, tableName, policy: POLICY }),
        dynamo: { client, tableName },
        close: async () => {
          client.destroy();
          await local.close();
        },
      };
    },
  ],
];

for (const [name, make] of stores) {
  describe(`waits for input with a deadline: ${name}`, () => {
    let store: TaskStore;
    let close: () => Promise<void>;
    let dynamo: { client: DynamoDBClient; tableName: string } | undefined;
    before(async () => ({ store, close, dynamo } = await make()));
    after(async () => close());

    it('starting to wait puts the task on the index at its deadline; the row expires at deadline + retention, it advertises age + retention', async () => {
      const base = window();
      const task = await waitingTask(store, base);
      assert.equal(task.status, 'input_required');
      assert.equal(task.sweepAt, base + 2 + MAX_WAIT);
      assert.equal(task.keptUntil, base + 2 + MAX_WAIT + POLICY.retentionMs);
      assert.equal(task.ttlMs, 2 + POLICY.retentionMs, 'not stretched to the deadline');
      assert.equal((await store.get(task.taskId, OWNER, base + 3))?.keptUntil, task.keptUntil, 'read back as written');
      if (dynamo) {
        const { Item } = await dynamo.client.send(
          new GetItemCommand({
            TableName: dynamo.tableName,
            Key: { [TABLE_KEYS.partition]: { S: task.taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } },
          }),
        );
        assert.equal(Item?.['expiresAt']?.N, String(Math.ceil(task.keptUntil! / 1000)), "the table's TTL attribute: the backstop");
      }
      // Advertised while waiting: as a running task, age + retention.
      assert.equal(renderedTtlMs(task, base + 100 + CLOCK_MARGIN_MS, POLICY.retentionMs), 100 + POLICY.retentionMs);
      assert.deepEqual(await store.findDue(base + 1 + MAX_WAIT, 10), []);
      assert.deepEqual(await store.findDue(base + 2 + MAX_WAIT, 10), [task.taskId]);
      await store.cancel(task.taskId, OWNER, base + 3); // leaves the index to the next case
    });

    it('past the deadline the sweeper ends it failed, saying it waited too long, with a TTL of its end + retention', async () => {
      const base = window();
      const task = await waitingTask(store, base);
      const deadline = task.sweepAt!;
      assert.equal(await store.reschedule(task.taskId, deadline, deadline + W), false, 'a waiting task is not re-enqueued');
      assert.equal(
        await store.expireWait(task.taskId, { error: inputWaitExpired().error, statusMessage: 'x', now: deadline - 1 }),
        undefined,
        'not before its deadline',
      );

      const lines: Array<Record<string, unknown>> = [];
      const sent: string[] = [];
      const result = await sweep({
        store,
        queue: { send: async (message) => void sent.push(message.taskId) },
        config: { ...POLICY, maxInputWaitMs: MAX_WAIT },
        now: () => deadline + 5,
        log: (line) => lines.push(line),
      });
      assert.deepEqual(result, { requeued: [], expired: [task.taskId] });
      assert.deepEqual(sent, [], 'nothing to run');
      const ended = (await store.get(task.taskId, OWNER, deadline + 6))!;
      assert.equal(ended.status, 'failed');
      assert.equal(
        ended.status === 'failed' && ended.error.message,
        'The task waited for input longer than the server allows (1 day) and was abandoned',
      );
      assert.equal(ended.statusMessage, ended.status === 'failed' ? ended.error.message : '');
      assert.equal(ended.ttlMs, deadline + 5 - base + POLICY.retentionMs, 'its end + retention');
      assert.ok(ended.ttlMs >= renderedTtlMs(task, deadline + 5 + CLOCK_MARGIN_MS, POLICY.retentionMs), 'never shorter than advertised');
      assert.equal(ended.keptUntil, undefined);
      assert.equal(ended.sweepAt, undefined, 'off the index');
      assert.deepEqual(await store.findDue(deadline + 10 * MAX_WAIT, 10), []);
      assert.equal(lines.find((l) => l['event'] === 'task-ended')?.['reason'], 'input-wait-expired');
      // Expiring twice changes nothing.
      assert.equal(
        await store.expireWait(task.taskId, { error: inputWaitExpired().error, statusMessage: 'x', now: deadline + 7 }),
        undefined,
      );
    });

    it('a partial answer keeps the deadline (no index write); the last answer moves the task to working, due one lease + grace later', async () => {
      const base = window();
      const task = await waitingTask(store, base, { a: ELICIT, b: ELICIT });
      await store.answer(task.taskId, OWNER, { a: 'A' }, base + 10);
      const partial = (await store.get(task.taskId, OWNER, base + 11))!;
      assert.equal(partial.sweepAt, task.sweepAt);
      assert.equal(partial.ttlMs, task.ttlMs);
      await store.answer(task.taskId, OWNER, { b: 'B' }, base + 20);
      const resumed = (await store.get(task.taskId, OWNER, base + 21))!;
      assert.equal(resumed.status, 'working');
      assert.equal(resumed.sweepAt, base + 20 + W);
      assert.equal(resumed.ttlMs, task.ttlMs, 'the TTL written for the wait stays: never shortened');
      assert.ok(renderedTtlMs(resumed, base + 21, POLICY.retentionMs) >= task.ttlMs);
      assert.equal(
        await store.expireWait(task.taskId, { error: inputWaitExpired().error, statusMessage: 'x', now: base + 10 * MAX_WAIT }),
        undefined,
        'a working task is not expired',
      );
      await store.cancel(task.taskId, OWNER, base + 22); // leaves the index to the next case
    });

    it('cancelling a waiting task takes it off the index', async () => {
      const base = window();
      const task = await waitingTask(store, base);
      assert.equal((await store.cancel(task.taskId, OWNER, base + 10, { statusMessage: 'Stopped' })).result, 'cancelled');
      const cancelled = (await store.get(task.taskId, OWNER, base + 11))!;
      assert.equal(cancelled.statusMessage, 'Stopped');
      assert.ok(cancelled.ttlMs >= task.ttlMs);
      assert.deepEqual(await store.findDue(base + 10 * MAX_WAIT, 10), []);
    });
  });
}

describe('rows written before waits had a deadline (DynamoDB)', () => {
  let close: () => Promise<void>;
  let dynamo: { client: DynamoDBClient; tableName: string };
  let store: TaskStore;
  before(async () => {
    const made = await stores[1]![1]();
    ({ store, close } = made);
    dynamo = made.dynamo!;
  });
  after(async () => close());

  it('a waiting row without sweepAt reads, is not expired, advertises a growing TTL and resumes when answered', async () => {
    const base = window();
    const taskId = randomUUID();
    // The row as the previous version wrote it when a task started waiting: no index attributes.
    const item: Record<string, AttributeValue> = {
      [TABLE_KEYS.partition]: { S: taskId },
      [TABLE_KEYS.sort]: { S: TASK_ROW_SK },
      status: { S: 'input_required' },
      owner: { S: OWNER },
      tool: { S: 'confirm' },
      arguments: { S: '{}' },
      clientCapabilities: { S: '{"elicitation":{}}' },
      createdAt: { N: String(base) },
      lastUpdatedAt: { N: String(base + 2) },
      ttlMs: { N: String(POLICY.retentionMs + 2) },
      pollIntervalMs: { N: '1000' },
      inputResponses: { S: '{}' },
      issuedKeys: { S: '["a"]' },
      cancelRequested: { BOOL: false },
      attempts: { N: '0' },
      version: { N: '3' },
      inputRequests: { S: JSON.stringify({ a: ELICIT }) },
    };
    await dynamo.client.send(new PutItemCommand({ TableName: dynamo.tableName, Item: item }));
    const old = (await store.get(taskId, OWNER, base + 3))!;
    assert.equal(old.status, 'input_required');
    assert.equal(old.sweepAt, undefined);
    assert.equal(
      renderedTtlMs(old, base + 10 * MAX_WAIT + CLOCK_MARGIN_MS, POLICY.retentionMs),
      10 * MAX_WAIT + POLICY.retentionMs,
      'no deadline: it never expires, as before',
    );
    assert.deepEqual(await store.findDue(base + 100 * MAX_WAIT, 10), []);
    assert.equal(
      await store.expireWait(taskId, { error: inputWaitExpired().error, statusMessage: 'x', now: base + 100 * MAX_WAIT }),
      undefined,
    );
    assert.deepEqual(await store.answer(taskId, OWNER, { a: 'yes' }, base + 50), { accepted: ['a'], resumed: true });
    const { Item } = await dynamo.client.send(
      new GetItemCommand({
        TableName: dynamo.tableName,
        Key: { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } },
        ConsistentRead: true,
      }),
    );
    assert.equal(Item?.['status']?.S, 'working');
    assert.equal(Item?.[ACTIVE_INDEX.sort]?.N, String(base + 50 + W));
  });

  it('a waiting row of the release before row expiry (TTL stretched to its deadline) keeps what it advertised and ends with it', async () => {
    const base = window();
    const taskId = randomUUID();
    const stretched = 2 + MAX_WAIT + POLICY.retentionMs;
    const item: Record<string, AttributeValue> = {
      [TABLE_KEYS.partition]: { S: taskId },
      [TABLE_KEYS.sort]: { S: TASK_ROW_SK },
      status: { S: 'input_required' },
      owner: { S: OWNER },
      tool: { S: 'confirm' },
      arguments: { S: '{}' },
      clientCapabilities: { S: '{"elicitation":{}}' },
      createdAt: { N: String(base) },
      lastUpdatedAt: { N: String(base + 2) },
      ttlMs: { N: String(stretched) },
      pollIntervalMs: { N: '1000' },
      inputResponses: { S: '{}' },
      issuedKeys: { S: '["a"]' },
      cancelRequested: { BOOL: false },
      attempts: { N: '0' },
      version: { N: '3' },
      inputRequests: { S: JSON.stringify({ a: ELICIT }) },
      [ACTIVE_INDEX.partition]: { S: activeShardOf(taskId) },
      [ACTIVE_INDEX.sort]: { N: String(base + 2 + MAX_WAIT) },
    };
    await dynamo.client.send(new PutItemCommand({ TableName: dynamo.tableName, Item: item }));
    const old = (await store.get(taskId, OWNER, base + 3))!;
    assert.equal(old.keptUntil, undefined, 'no row expiry: it had none');
    assert.equal(renderedTtlMs(old, base + 100, POLICY.retentionMs), stretched, 'what it advertised before, never less');
    assert.equal((await store.cancel(taskId, OWNER, base + 200)).result, 'cancelled');
    const ended = (await store.get(taskId, OWNER, base + 201))!;
    assert.equal(ended.ttlMs, stretched, 'ends with the longest it advertised');
  });
});
