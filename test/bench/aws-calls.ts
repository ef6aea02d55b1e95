/**
 * `npm run bench`: what a task costs in AWS calls, counted (not estimated) on
 * the local stack, which runs the unchanged handlers against dynalite and
 * fauxqs. Every call the functions' DynamoDB and SQS clients make is counted,
 * and so are the event source mapping's receives and deletes.
 *
 * Printed next to the design's minimum for each scenario; polling is reported
 * per `tasks/get` (the client decides how often it polls).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { startLocalStack } from '../../infra/local/stack.ts';
import { rpc } from '../support/mcp-http.ts';

type Counts = Map<string, number>;
const counts: Counts = new Map();

function countCalls(client: DynamoDBClient | SQSClient, service: string): void {
  (client.middlewareStack as DynamoDBClient['middlewareStack']).add(
    (next, context) => async (args) => {
      const output = await next(args);
      const command = context.commandName?.replace(/Command$/, '') ?? 'unknown';
      // The mapping's empty long polls cost the same whether or not tasks run; count receives that delivered work.
      const delivered = command !== 'ReceiveMessage' || ((output.output as { Messages?: unknown[] }).Messages?.length ?? 0) > 0;
      if (delivered) counts.set(`${service}.${command}`, (counts.get(`${service}.${command}`) ?? 0) + 1);
      return output;
    },
    { step: 'initialize', name: `count-${service}-calls` },
  );
}

const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-bench-'));
process.env.TASKS_CANCEL_CHECK_MS ??= '60000';
const stack = await startLocalStack({ port: 0, dataDir, instrumentPollerClient: (client) => countCalls(client, 'SQS(mapping)') });
const deps = await import('../../functions/lib/deps.ts');
countCalls(deps.dynamodb, 'DynamoDB');
countCalls(deps.sqs, 'SQS');

async function waitFor(taskId: string, statuses: string[]): Promise<Record<string, unknown>> {
  const before = new Map(counts);
  for (;;) {
    const task = (await rpc(stack.url, 'tasks/get', { taskId })).body?.result ?? {};
    if (statuses.includes(String(task['status']))) {
      // Polls are the client's choice: take them out of the task's own cost.
      const polls = (counts.get('DynamoDB.GetItem') ?? 0) - (before.get('DynamoDB.GetItem') ?? 0);
      counts.set('DynamoDB.GetItem', (counts.get('DynamoDB.GetItem') ?? 0) - polls);
      return task;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Row {
  scenario: string;
  counts: Counts;
  minimum: Record<string, number>;
}
const rows: Row[] = [];

async function scenario(name: string, minimum: Record<string, number>, run: () => Promise<void>): Promise<void> {
  counts.clear();
  await run();
  await new Promise((resolve) => setTimeout(resolve, 1500)); // let the mapping delete what it handled
  rows.push({ scenario: name, counts: new Map(counts), minimum });
}

await scenario('simple task, create → result', { writes: 3, reads: 0, sqs: 3 }, async () => {
  const created = await rpc(stack.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.01 } });
  await waitFor(String(created.body?.result?.['taskId']), ['completed']);
});

await scenario('one input round (create → input_required → update → result)', { writes: 6, reads: 1, sqs: 6 }, async () => {
  const created = await rpc(stack.url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'bench.txt' } });
  const taskId = String(created.body?.result?.['taskId']);
  const waiting = await waitFor(taskId, ['input_required']);
  const [key] = Object.keys(waiting['inputRequests'] as object);
  await rpc(stack.url, 'tasks/update', { taskId, inputResponses: { [String(key)]: { action: 'accept', content: { confirm: true } } } });
  await waitFor(taskId, ['completed']);
});

const probe = await rpc(stack.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.01 } });
await waitFor(String(probe.body?.result?.['taskId']), ['completed']);
const getsBefore = counts.get('DynamoDB.GetItem') ?? 0;
for (let i = 0; i < 10; i++) await rpc(stack.url, 'tasks/get', { taskId: String(probe.body?.result?.['taskId']) });
const getsPerPoll = ((counts.get('DynamoDB.GetItem') ?? 0) - getsBefore) / 10;

await stack.close();
await rm(dataDir, { recursive: true, force: true });

const sum = (c: Counts, prefix: string, ops: string[]) => ops.reduce((n, op) => n + (c.get(`${prefix}.${op}`) ?? 0), 0);
console.log('\nAWS calls per task, counted on the local stack (polling excluded)\n');
console.log('| scenario | DynamoDB writes | (min) | DynamoDB reads | (min) | SQS requests | (min) | detail |');
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const writes = sum(row.counts, 'DynamoDB', ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
  const reads = sum(row.counts, 'DynamoDB', ['GetItem', 'Query', 'BatchGetItem']);
  const sqs = [...row.counts].filter(([k]) => k.startsWith('SQS')).reduce((n, [, v]) => n + v, 0);
  const detail = [...row.counts].filter(([, v]) => v > 0).map(([k, v]) => `${k}×${v}`).join(', ');
  console.log(`| ${row.scenario} | ${writes} | ${row.minimum['writes']} | ${reads} | ${row.minimum['reads']} | ${sqs} | ${row.minimum['sqs']} | ${detail} |`);
}
console.log(`\nEach tasks/get: ${getsPerPoll} DynamoDB GetItem (strongly consistent); minimum 1.\n`);
