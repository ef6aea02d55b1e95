/**
 * Results expire when the docs say, on `npm start` defaults: a task that
 * waited for a person (`approval_gate`, answered through `tasks/update`)
 * ends with `ttlMs` and its row's TTL attribute at its end plus
 * `TASKS_RETENTION_MS`, and no `ttlMs` advertised on the way (created,
 * working, waiting) was later than that. While it waited, the row itself
 * expired at the input deadline plus the retention.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { REGION } from '../../bin/local/emulators.ts';
import type { LocalStack } from '../../bin/local/options.ts';
import { LOCAL_CREDENTIALS } from '../../bin/local/sqs.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { TABLE_KEYS, TASK_ROW_SK, TTL_ATTRIBUTE } from '../../shared/tasks/dynamodb/index.ts';
import { getTask, pollUntil, resultOf, rpc } from '../support/wire.ts';

let stack: LocalStack;
let dataDir: string;
let client: DynamoDBClient;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-expiry-'));
  stack = await startLocalStack({
    port: 0,
    dataDir,
    log: () => {},
    env: {},
    instrument: ({ endpoints }) => {
      client = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: REGION, credentials: LOCAL_CREDENTIALS });
    },
  });
});
after(async () => {
  client?.destroy();
  await stack?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The row's TTL attribute (epoch seconds), as DynamoDB would delete it by. */
async function rowExpiresAt(taskId: string): Promise<number | undefined> {
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: stack.config.tableName,
      Key: { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } },
      ConsistentRead: true,
    }),
  );
  const value = Item?.[TTL_ATTRIBUTE]?.N;
  return value === undefined ? undefined : Number(value);
}

describe('a task that waited for a person', () => {
  it('ends with ttlMs and its row expiry at its end + retention; nothing advertised before was later', { timeout: 60_000 }, async () => {
    const { retentionMs, maxInputWaitMs } = stack.config;
    const created = resultOf(await rpc(stack.url, 'tools/call', { name: 'approval_gate', arguments: { action: 'rotate keys' } }));
    const taskId = String(created['taskId']);
    const advertised = [Number(created['ttlMs'])];
    const waiting = await pollUntil(stack.url, taskId, (task) => {
      advertised.push(Number(task.ttlMs));
      return task.status === 'input_required';
    });
    const createdAt = Date.parse(waiting.createdAt);
    const waitStarted = Date.parse(waiting.lastUpdatedAt);
    assert.equal(await rowExpiresAt(taskId), Math.ceil((waitStarted + maxInputWaitMs + retentionMs) / 1000), 'the wait backstop');
    advertised.push(Number((await getTask(stack.url, taskId)).ttlMs));

    resultOf(
      await rpc(stack.url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { approve: true } } } }),
    );
    const done = await pollUntil(stack.url, taskId, (task) => {
      advertised.push(Number(task.ttlMs));
      return task.status === 'completed';
    });
    const end = Date.parse(done.lastUpdatedAt);
    assert.equal(done.ttlMs, end - createdAt + retentionMs, 'ttlMs: the end + the retention');
    assert.equal(await rowExpiresAt(taskId), Math.ceil((createdAt + Number(done.ttlMs)) / 1000), "the row's expiry: the same");
    assert.ok(Number(done.ttlMs) < maxInputWaitMs, 'not the input deadline');
    for (const value of advertised) assert.ok(value <= Number(done.ttlMs), `advertised ${value} ≤ final ${done.ttlMs}`);
  });
});
