/**
 * Ended tasks' status messages on the DynamoDB store, for rows the previous
 * release wrote (raw items with the attributes it wrote: an ended row with
 * the message from before its end, and no `finalMessage`): `tasks/get` of
 * both eras and the fallback's `task_status` say the status's default, never
 * that the task goes on.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { LocalDynamoDb } from '../../bin/local/dynamodb.ts';
import { DEFAULT_SETTINGS } from '../../shared/config.ts';
import { createEndpoint, type Endpoint } from '../../shared/protocol/endpoint.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { DynamoDbTaskStore, TABLE_KEYS, TASK_ROW_SK, TTL_ATTRIBUTE } from '../../shared/tasks/dynamodb/index.ts';
import { localTable } from '../support/dynalite-table.ts';
import { storePolicy } from '../support/factories.ts';
import { resultOf, rpc } from '../support/wire.ts';

const OWNER = 'alice';

/** A task row exactly as the previous release's codec wrote an ended task (no `finalMessage`). */
function oldEndedRow(taskId: string, status: 'completed' | 'cancelled', statusMessage: string, now: number) {
  const end = now - 1_000;
  return {
    [TABLE_KEYS.partition]: { S: taskId },
    [TABLE_KEYS.sort]: { S: TASK_ROW_SK },
    status: { S: status },
    owner: { S: OWNER },
    tool: { S: 'approval_gate' },
    arguments: { S: JSON.stringify({ action: 'deploy web@1.4.2' }) },
    clientCapabilities: { S: JSON.stringify({ elicitation: {} }) },
    createdAt: { N: String(end - 60_000) },
    lastUpdatedAt: { N: String(end) },
    ttlMs: { N: String(60_000 + 3_600_000) },
    pollIntervalMs: { N: '1000' },
    inputResponses: { S: JSON.stringify({ approval: { action: 'accept', content: { approve: true } } }) },
    issuedKeys: { S: JSON.stringify(['approval']) },
    cancelRequested: { BOOL: status === 'cancelled' },
    attempts: { N: '0' },
    version: { N: '6' },
    statusMessage: { S: statusMessage },
    [TTL_ATTRIBUTE]: { N: String(Math.ceil((end + 3_600_000) / 1000)) },
    expiresAtMs: { N: String(end + 3_600_000) },
    ...(status === 'completed'
      ? { result: { S: JSON.stringify({ content: [{ type: 'text', text: 'Done' }], resultType: 'complete' }) } }
      : {}),
  };
}

describe('ended tasks written by the previous release, on every surface', () => {
  let local: LocalDynamoDb;
  let client: DynamoDBClient;
  let tableName: string;
  let endpoint: Endpoint;
  before(async () => {
    ({ local, client, tableName } = await localTable());
    const store = new DynamoDbTaskStore({ client, tableName, policy: storePolicy() });
    const key = randomBytes(32);
    endpoint = createEndpoint({
      store,
      queue: new InMemoryTaskQueue(),
      tools: new Map(),
      config: DEFAULT_SETTINGS,
      log: () => {},
      stackSecret: async () => key,
      originPolicy: { kind: 'loopback' },
    });
  });
  after(async () => {
    client.destroy();
    await local.close();
  });

  const target = (request: Request) => endpoint.fetch(request, OWNER);

  for (const [status, before, expected] of [
    ['completed', 'Approved; carrying out: deploy web@1.4.2', 'Completed'],
    ['completed', 'Called back; the task goes on', 'Completed'],
    ['cancelled', "Waiting for a person to answer on the task's page: http://127.0.0.1:3000/console/tasks/x", 'Cancelled'],
  ] as const) {
    it(`${status} with "${before.slice(0, 30)}…" reads "${expected}" in tasks/get (both eras) and task_status`, async () => {
      const taskId = randomUUID();
      await client.send(new PutItemCommand({ TableName: tableName, Item: oldEndedRow(taskId, status, before, Date.now()) }));

      const modern = resultOf(await rpc(target, 'tasks/get', { taskId }));
      assert.deepEqual([modern['status'], modern['statusMessage']], [status, expected]);
      const legacy = resultOf(await rpc(target, 'tasks/get', { taskId }, { protocolVersion: '2025-11-25', meta: null }));
      assert.deepEqual([legacy['status'], legacy['statusMessage']], [status, expected]);
      const fallback = resultOf(await rpc(target, 'tools/call', { name: 'task_status', arguments: { taskId } }, { capabilities: {} }));
      assert.doesNotMatch(JSON.stringify(fallback), /carrying out|goes on|Waiting for a person/);
      if (status === 'cancelled') {
        assert.match(String((fallback['content'] as Array<{ text: string }>)[0]?.text), /was cancelled; the tool did not finish/);
      }
    });
  }
});
