/**
 * The local stack behaves like the deployed one where it matters:
 * batches run concurrently with the deployed batch size and concurrency; at
 * start-up it takes back what a previous life left (leases, queued and
 * sleeping work, a torn sparse index); a graceful stop hands running work
 * back; and replay mistakes end their task `failed`, naming the step or key.
 * Everything here runs with the settings `npm start` uses (plus the test catalogue).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { startDynalite } from '../../bin/local/dynamodb.ts';
import { REGION } from '../../bin/local/emulators.ts';
import { LOCAL_CREDENTIALS, localSqsClient } from '../../bin/local/sqs.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { EFFECTS_DIR_ENV, readEffects } from '../../functions/fixtures/durability/effects.ts';
import { WORKER_BATCH_SIZE } from '../../infra/event-sources.ts';
import type { LogEvent } from '../../shared/log.ts';
import { ACTIVE_INDEX, DEFAULT_ACTIVE_INDEX_SHARDS, TABLE_KEYS } from '../../shared/tasks/dynamodb/index.ts';
import { createTask, uniqueLabel } from '../support/durable.ts';
import { openLevel, withTable } from '../support/dynalite-level.ts';
import { newTask } from '../support/factories.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';

let root: string;
let effectsDir: string;
let previousEffectsDir: string | undefined;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcp-tasks-recovery-'));
  effectsDir = join(root, 'effects');
  // The in-process stacks' fixtures record their effects here (the child process gets it in its env).
  previousEffectsDir = process.env[EFFECTS_DIR_ENV];
  process.env[EFFECTS_DIR_ENV] = effectsDir;
});
after(async () => {
  if (previousEffectsDir === undefined) delete process.env[EFFECTS_DIR_ENV];
  else process.env[EFFECTS_DIR_ENV] = previousEffectsDir;
  await rm(root, { recursive: true, force: true });
});

describe('local stack with npm start defaults', () => {
  let stack: LocalStackProcess;
  before(async () => {
    // Only the catalogue differs from `npm start`: the fixtures below are test tools.
    stack = await startLocalStackProcess({ env: { TASKS_TOOLSET: 'test', [EFFECTS_DIR_ENV]: effectsDir } });
  });
  after(async () => {
    await stack?.stop();
  });

  it('fails a task whose step names come from chance, naming the step', async () => {
    const label = uniqueLabel('random');
    const taskId = await createTask(stack.url, 'random_step', { label });
    const task = await pollUntil(stack.url, taskId, (current) => current.status !== 'working', 60_000, 200);
    assert.equal(task.status, 'failed', JSON.stringify(task));
    assert.match(task.error?.message ?? '', /Replay diverged at step "fetch-[a-z0-9]+"/);
    assert.equal((task.error?.data as { reason?: string } | undefined)?.reason, 'replay-divergence');
    assert.deepEqual(readEffects(label, effectsDir), ['fetch'], 'the diverging step did not run again');
  });

  it('fails a task that reuses an input key for a different question, naming the key', async () => {
    const taskId = await createTask(stack.url, 'reused_key', {});
    const waiting = await pollUntil(stack.url, taskId, (current) => current.status !== 'working', 60_000, 200);
    assert.equal(waiting.status, 'input_required', JSON.stringify(waiting));
    assert.deepEqual(Object.keys(waiting.inputRequests ?? {}), ['details']);
    resultOf(await rpc(stack.url, 'tasks/update', { taskId, inputResponses: { details: { action: 'accept', content: { name: 'Ada' } } } }));
    const task = await pollUntil(
      stack.url,
      taskId,
      (current) => current.status !== 'working' && current.status !== 'input_required',
      60_000,
      200,
    );
    assert.equal(task.status, 'failed', JSON.stringify(task));
    assert.match(task.error?.message ?? '', /Input key "details" was used for a different question/);
  });
});

describe('local stack start-up recovery (in-process)', () => {
  const logs: LogEvent[] = [];
  const log = (event: LogEvent) => void logs.push(event);

  /** Every entry of the active-task index, read straight from dynalite's API. */
  async function indexEntries(endpoint: string): Promise<Array<{ pk: string; sweepAt: number }>> {
    const client = new DynamoDBClient({ endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
    try {
      const entries: Array<{ pk: string; sweepAt: number }> = [];
      for (let shard = 0; shard < DEFAULT_ACTIVE_INDEX_SHARDS; shard++) {
        const { Items } = await client.send(
          new QueryCommand({
            TableName: 'tasks',
            IndexName: ACTIVE_INDEX.name,
            KeyConditionExpression: '#s = :s',
            ExpressionAttributeNames: { '#s': ACTIVE_INDEX.partition },
            ExpressionAttributeValues: { ':s': { S: `s${shard}` } },
          }),
        );
        for (const item of Items ?? []) entries.push({ pk: item[TABLE_KEYS.partition]!.S!, sweepAt: Number(item[ACTIVE_INDEX.sort]!.N) });
      }
      return entries;
    } finally {
      client.destroy();
    }
  }

  const pkOf = (value: Record<string, unknown>) => (value[TABLE_KEYS.partition] as { S: string }).S;
  const rowKey = (taskId: string) => ({ [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: 'task' } });

  /**
   * Torn writes, as a SIGKILL inside dynalite leaves them (it writes an
   * item's index entries, then the item): the entry of `missing` is deleted
   * (a terminal write's entry removal landed, its item did not); `moved` gets
   * an orphan entry at a `sweepAt` its row does not have, sorting first (a
   * move whose item write was lost); and a task with no row at all gets one
   * (a create whose item write was lost). The orphans are made by the API
   * and kept when the API removes them, so their keys are dynalite's own.
   */
  async function tearIndex(dataDir: string, missing: string, moved: string): Promise<void> {
    const ghost = randomUUID();
    const original = await withTable(dataDir, async (client) => {
      const { Item } = await client.send(new GetItemCommand({ TableName: 'tasks', Key: rowKey(moved) }));
      await client.send(
        new UpdateItemCommand({
          TableName: 'tasks',
          Key: rowKey(moved),
          UpdateExpression: 'SET #s = :early',
          ExpressionAttributeNames: { '#s': ACTIVE_INDEX.sort },
          ExpressionAttributeValues: { ':early': { N: '1' } },
        }),
      );
      await client.send(
        new PutItemCommand({
          TableName: 'tasks',
          Item: { ...rowKey(ghost), [ACTIVE_INDEX.partition]: { S: 's0' }, [ACTIVE_INDEX.sort]: { N: '2' } },
        }),
      );
      return Item![ACTIVE_INDEX.sort]!;
    });
    let level = await openLevel(dataDir, ACTIVE_INDEX.name);
    const orphans = (await level.entries()).filter(([, value]) => pkOf(value) === moved || pkOf(value) === ghost);
    await level.level.close();
    assert.equal(orphans.length, 2);
    await withTable(dataDir, async (client) => {
      await client.send(
        new UpdateItemCommand({
          TableName: 'tasks',
          Key: rowKey(moved),
          UpdateExpression: 'SET #s = :back',
          ExpressionAttributeNames: { '#s': ACTIVE_INDEX.sort },
          ExpressionAttributeValues: { ':back': original },
        }),
      );
      await client.send(new DeleteItemCommand({ TableName: 'tasks', Key: rowKey(ghost) }));
    });
    level = await openLevel(dataDir, ACTIVE_INDEX.name);
    for (const [key, value] of orphans) await level.level.put(key, value);
    const [missingKey] = (await level.entries()).find(([, value]) => pkOf(value) === missing)!;
    await level.level.del(missingKey);
    await level.level.close();
  }

  it('runs 20 tasks at once (each finishes only when all 20 are running)', async (t) => {
    const dataDir = join(root, 'concurrency');
    const label = uniqueLabel('rendezvous');
    const parties = 20;
    let endpoint = '';
    const stack = await startLocalStack({
      port: 0,
      dataDir,
      env: { TASKS_TOOLSET: 'test' },
      log,
      instrument: ({ endpoints }) => (endpoint = endpoints.sqs),
    });
    const sqs = localSqsClient(endpoint, REGION);
    try {
      const ids: string[] = [];
      for (let i = 0; i < parties; i++) {
        const taskId = randomUUID();
        await stack.store.create(newTask({ taskId, owner: 'local', tool: 'rendezvous', arguments: { label, parties }, now: Date.now() }));
        ids.push(taskId);
      }
      // All 20 start messages on the queue in two sends, as a burst of clients would put them there.
      const started = Date.now();
      for (const chunk of [ids.slice(0, 10), ids.slice(10)]) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: stack.config.queueUrl,
            Entries: chunk.map((taskId, i) => ({ Id: String(i), MessageBody: JSON.stringify({ taskId, reason: 'start' }) })),
          }),
        );
      }
      for (const taskId of ids) {
        const task = await waitFor(
          `${taskId} to finish`,
          async () => {
            const current = await stack.store.get(taskId, 'local', Date.now());
            return current?.status !== 'working' && current;
          },
          180_000,
          100,
        );
        assert.equal(task.status, 'completed', JSON.stringify(task));
        assert.ok(task.status === 'completed' && !task.result['isError'], JSON.stringify(task));
      }
      t.diagnostic(
        `${parties} rendezvous tasks finished ${Date.now() - started} ms after their messages were sent; ${stack.workerStats().peak} ` +
          `batches at most at once`,
      );
      assert.equal(readEffects(label, effectsDir).length, parties);
      // Batches of at most WORKER_BATCH_SIZE records: 20 running at once took several batches in flight together.
      assert.ok(stack.workerStats().peak >= Math.ceil(parties / WORKER_BATCH_SIZE), `peak ${stack.workerStats().peak}`);
    } finally {
      sqs.destroy();
      await stack.close();
    }
  });

  it('puts a row missing from the index back, removes orphan entries, and runs both tasks', async () => {
    const dataDir = join(root, 'torn');
    const label = uniqueLabel('torn');
    const env = { TASKS_TOOLSET: 'test' };
    let stack = await startLocalStack({ port: 0, dataDir, env, log });
    // Tasks written but never enqueued: they wait for the sweeper (minutes away), as if their messages were lost.
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const taskId = randomUUID();
      await stack.store.create(newTask({ taskId, owner: 'local', tool: 'counter', arguments: { label, ms: 0 }, now: Date.now() }));
      ids.push(taskId);
    }
    await stack.close();
    const [missing, moved] = ids as [string, string];
    await tearIndex(dataDir, missing, moved);

    // The simulation worked: the index is torn as described.
    const dynamo = await startDynalite({ path: join(dataDir, 'dynamodb') });
    const torn = await indexEntries(dynamo.endpoint);
    await dynamo.close();
    assert.ok(!torn.some((entry) => entry.pk === missing), 'the row is missing from the index');
    assert.equal(torn.length, 3, `one real entry and two orphans: ${JSON.stringify(torn)}`);

    logs.length = 0;
    stack = await startLocalStack({ port: 0, dataDir, env, log });
    try {
      assert.equal(stack.recovery.orphansRemoved, 2, JSON.stringify(stack.recovery));
      assert.equal(stack.recovery.requeued, 2);
      assert.equal(stack.recovery.voidedLeases, 0);
      for (const taskId of ids) {
        const task = await waitFor(
          `${taskId} to finish`,
          async () => {
            const current = await stack.store.get(taskId, 'local', Date.now());
            return current?.status === 'completed' && current;
          },
          60_000,
          100,
        );
        assert.equal(task.status, 'completed');
      }
      assert.deepEqual(readEffects(label, effectsDir), ['ran', 'ran']);
      assert.ok(logs.some((event) => event.event === 'recovered' && event['taskId'] === missing));
    } finally {
      await stack.close();
    }
    // Finished tasks leave the index; no orphan is left behind to sort first for the sweeper.
    const repaired = await startDynalite({ path: join(dataDir, 'dynamodb') });
    try {
      assert.deepEqual(await indexEntries(repaired.endpoint), []);
    } finally {
      await repaired.close();
    }
  });

  it('makes a repaired row due for the sweeper again', async () => {
    const dataDir = join(root, 'swept');
    const env = { TASKS_TOOLSET: 'test' };
    const stack = await startLocalStack({ port: 0, dataDir, env, log });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const taskId = randomUUID();
      await stack.store.create(
        newTask({ taskId, owner: 'local', tool: 'counter', arguments: { label: uniqueLabel('swept'), ms: 0 }, now: Date.now() }),
      );
      ids.push(taskId);
    }
    await stack.close();
    const [missing, moved] = ids as [string, string];
    await tearIndex(dataDir, missing, moved);
    // Recovery alone, on the data directory: the table and index it leaves.
    const dynamo = await startDynalite({ path: join(dataDir, 'dynamodb') });
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
    try {
      const { recoverAtStart } = await import('../../bin/local/recovery.ts');
      const sent: string[] = [];
      const now = Date.now();
      const report = await recoverAtStart({
        client,
        tableName: 'tasks',
        queue: { send: async (message) => void sent.push(message.taskId) },
        sweepWindowMs: 360_000,
        activeIndexShards: DEFAULT_ACTIVE_INDEX_SHARDS,
        now,
        log,
      });
      assert.deepEqual(sent.sort(), [...ids].sort());
      assert.equal(report.orphansRemoved, 2);
      const { DynamoDbTaskStore } = await import('../../shared/tasks/dynamodb/index.ts');
      const store = new DynamoDbTaskStore({
        client,
        tableName: 'tasks',
        policy: { leaseMs: 300_000, sweepGraceMs: 60_000, retentionMs: 3_600_000, stepRetentionMs: 86_400_000 },
      });
      // Both rows are on the index at their rows' sweepAt: the sweeper finds them when they are due, and nothing else.
      assert.deepEqual((await store.findDue(now + 360_000, 10)).sort(), [...ids].sort());
      assert.deepEqual(await store.findDue(now, 10), [], 'no orphan sorts first');
      const entries = await indexEntries(dynamo.endpoint);
      assert.equal(entries.length, 2, JSON.stringify(entries));
    } finally {
      client.destroy();
      await dynamo.close();
    }
  });

  it('hands running work back on a graceful stop, and takes it up at the next start', async () => {
    const dataDir = join(root, 'graceful');
    const label = uniqueLabel('graceful');
    const env = { TASKS_TOOLSET: 'test' };
    logs.length = 0;
    let stack = await startLocalStack({ port: 0, dataDir, env, log, drainMs: 200 });
    const taskId = await createTask(stack.url, 'step_sequence', { label, steps: 6, stepMs: 1000 });
    await waitFor('the first step', () => readEffects(label, effectsDir).length >= 1, 60_000);
    await stack.close();
    assert.ok(
      logs.some((event) => event.event === 'handed-back' && event['taskId'] === taskId),
      'the running task was handed back',
    );

    logs.length = 0;
    stack = await startLocalStack({ port: 0, dataDir, env, log });
    try {
      assert.equal(stack.recovery.voidedLeases, 0, 'no lease was left behind');
      assert.ok(stack.recovery.requeued >= 1);
      const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', 60_000, 200);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.deepEqual(done.result?.['structuredContent'], { sum: 21 });
    } finally {
      await stack.close();
    }
  });
});
