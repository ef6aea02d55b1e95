/**
 * Rows and journals written before replay checks existed: a task
 * row without `toolVersion`, `questions` or `progressMark`, and step
 * checkpoints without a `position`, exactly as the DynamoDB store wrote them
 * then. They must keep working: replayed by name, with the new step recorded
 * with its position, and answers recorded without a question fingerprint
 * returned as before. A row written before callbacks (no `callbacks`,
 * no `callbackWait`) reads as having none and takes them.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import * as z from 'zod';
import { ensureTaskTable, type LocalDynamoDb, startDynalite } from '../../bin/local/dynamodb.ts';
import { DEFAULT_SETTINGS } from '../../shared/config.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { defineTool, type ToolDefinition } from '../../shared/runtime/tool.ts';
import { processTaskMessage } from '../../shared/runtime/worker.ts';
import { activeShardOf, DynamoDbTaskStore, STEP_SK_PREFIX, TABLE_KEYS, TASK_ROW_SK } from '../../shared/tasks/dynamodb/index.ts';

type Item = Record<string, AttributeValue>;
const POLICY = { retentionMs: 3_600_000, sweepGraceMs: 60_000, leaseMs: 300_000, stepRetentionMs: 86_400_000 };

describe('task rows and journals in the format written before replay checks', () => {
  let local: LocalDynamoDb;
  let client: DynamoDBClient;
  const tableName = `tasks-${randomUUID()}`;
  let store: DynamoDbTaskStore;

  before(async () => {
    local = await startDynalite();
    client = new DynamoDBClient({
      endpoint: local.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    await ensureTaskTable(client, tableName);
    store = new DynamoDbTaskStore({ client, tableName, policy: POLICY });
  });
  after(async () => {
    client.destroy();
    await local.close();
  });

  /** A working row with every attribute the store wrote before this change, and none of the new ones. */
  function oldRow(taskId: string, tool: string, now: number, inputResponses: Record<string, unknown> = {}): Item {
    return {
      [TABLE_KEYS.partition]: { S: taskId },
      [TABLE_KEYS.sort]: { S: TASK_ROW_SK },
      status: { S: 'working' },
      owner: { S: 'alice' },
      tool: { S: tool },
      arguments: { S: '{}' },
      clientCapabilities: { S: JSON.stringify({ elicitation: {} }) },
      createdAt: { N: String(now - 60_000) },
      lastUpdatedAt: { N: String(now - 30_000) },
      ttlMs: { N: '3600000' },
      pollIntervalMs: { N: '1000' },
      inputResponses: { S: JSON.stringify(inputResponses) },
      issuedKeys: { S: JSON.stringify(Object.keys(inputResponses)) },
      cancelRequested: { BOOL: false },
      attempts: { N: '0' },
      version: { N: '7' },
      statusMessage: { S: 'Finished step 1 of 3' },
      activeShard: { S: activeShardOf(taskId) },
      sweepAt: { N: String(now) },
    };
  }

  /** A step checkpoint as written before positions: key, TTL and value only. */
  function oldStep(taskId: string, name: string, value: unknown, now: number): Item {
    return {
      [TABLE_KEYS.partition]: { S: taskId },
      [TABLE_KEYS.sort]: { S: STEP_SK_PREFIX + name },
      expiresAt: { N: String(Math.ceil((now + 86_400_000) / 1000)) },
      value: { S: JSON.stringify(value) },
    };
  }

  const put = (item: Item) => client.send(new PutItemCommand({ TableName: tableName, Item: item }));

  it('replays old checkpoints by name, records the new step with its position, and writes only new progress', async () => {
    const now = Date.now();
    const taskId = randomUUID();
    const ran: string[] = [];
    const tool = defineTool({
      name: 'three_steps',
      description: 'd',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_args, ctx) => {
        let sum = 0;
        for (let i = 1; i <= 3; i++) {
          sum += await ctx.step(`step-${i}`, async () => {
            ran.push(`step-${i}`);
            return i;
          });
          await ctx.progress(`Finished step ${i} of 3`);
        }
        return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } };
      },
    });
    await put(oldRow(taskId, 'three_steps', now));
    await put(oldStep(taskId, 'step-1', 1, now));
    await put(oldStep(taskId, 'step-2', 2, now));

    const read = await store.get(taskId, 'alice', now);
    assert.equal(read?.status, 'working');
    assert.equal(read?.toolVersion, undefined);
    assert.equal(read?.questions, undefined);
    assert.deepEqual(
      await store.loadJournal(taskId),
      new Map([
        ['step-1', { value: 1 }],
        ['step-2', { value: 2 }],
      ]),
    );

    const progress: string[] = [];
    const decorated = new Proxy(store, {
      get(target, property) {
        if (property === 'heartbeat') {
          return (id: string, owner: string, at: number, options: { statusMessage?: string }) => {
            if (options.statusMessage) progress.push(options.statusMessage);
            return target.heartbeat(id, owner, at, options);
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const tools = new Map<string, ToolDefinition>([[tool.name, tool]]);
    const disposition = await processTaskMessage(
      { taskId, reason: 'sweep' },
      {
        store: decorated,
        queue: new InMemoryTaskQueue(),
        tools,
        log: () => {},
        config: { ...DEFAULT_SETTINGS, progressIntervalMs: 0 },
      },
    );
    assert.equal(disposition, 'done');
    const done = await store.get(taskId, 'alice', Date.now());
    assert.equal(done?.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done?.status === 'completed' && done.result['structuredContent'], { sum: 6 });
    assert.deepEqual(ran, ['step-3'], 'recorded steps were not run again');
    // Progress from before the last recorded step is replay; from there on it is new (never older than what was written).
    assert.deepEqual(progress, ['Finished step 2 of 3', 'Finished step 3 of 3'], 'progress of replayed steps was not written again');
    const { Item: step3 } = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: `${STEP_SK_PREFIX}step-3` } },
      }),
    );
    assert.equal(step3?.['position']?.N, '3', 'the new checkpoint carries its position');
  });

  it('returns answers recorded before questions were fingerprinted', async () => {
    const now = Date.now();
    const taskId = randomUUID();
    const tool = defineTool({
      name: 'asks',
      description: 'd',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_args, ctx) => {
        const answer = await ctx.elicit('ok', {
          message: 'OK?',
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
        });
        return `answered ${answer.action}`;
      },
    });
    await put(oldRow(taskId, 'asks', now, { ok: { action: 'accept', content: { ok: true } } }));
    await processTaskMessage(
      { taskId, reason: 'resume' },
      {
        store,
        queue: new InMemoryTaskQueue(),
        tools: new Map([[tool.name, tool]]),
        log: () => {},
        config: DEFAULT_SETTINGS,
      },
    );
    const done = await store.get(taskId, 'alice', Date.now());
    assert.equal(done?.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done?.status === 'completed' && done.result['content'], [{ type: 'text', text: 'answered accept' }]);
  });

  it('a row written before callbacks (no callbacks attributes) reads as having none, suspends on one and takes its completion', async () => {
    const now = Date.now();
    const taskId = randomUUID();
    await put(oldRow(taskId, 'three_steps', now));
    const read = await store.get(taskId, 'alice', now);
    assert.equal(read?.callbacks, undefined);
    assert.equal(read?.callbackWait, undefined);
    const claimed = await store.claim(taskId, 'w1', now);
    assert.ok(claimed);
    const wait = { callbacks: { cb_1: { since: now, timeoutAt: now + 60_000 } } };
    assert.equal(await store.awaitCallbacks(taskId, 'w1', { seen: claimed.callbacks, wait, statusMessage: 'Waiting' }, now + 1), 'waiting');
    assert.equal(await store.completeCallback(taskId, 'cb_1', { result: 'ok' }, now + 2), 'resumed');
    const resumed = await store.get(taskId, 'alice', now + 3);
    assert.deepEqual(resumed?.callbacks, { cb_1: { result: 'ok', at: now + 2 } });
    assert.equal(resumed?.callbackWait, undefined);
  });
});
