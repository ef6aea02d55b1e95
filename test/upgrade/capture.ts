/**
 * Writes the upgrade fixtures of this version: `npx tsx test/upgrade/capture.ts`
 * runs the local stack (this version's handlers on dynalite and fauxqs) with
 * the upgrade tools (`tools.ts`) and leaves four tasks where an upgrade may
 * find them: `queued` (its start message on the queue, never run),
 * `question` (waiting for an answer), `sleeping` (asleep, its wake-up
 * message on the queue) and `completed`. It writes every item of the table
 * and every message held back from the queue, as the SDK would send them, to
 * `test/upgrade/<version>/fixture.json`. Run once per release, and commit.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { startLocalStack } from '../../bin/local/stack.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';
import { upgradeTools } from './tools.ts';

const ROOT = new URL('../../', import.meta.url);
const version = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string }).version;

/** A message the functions sent to the task queue, as SQS received it. */
export interface HeldMessage {
  body: string;
  delaySeconds?: number;
}

/** What a fixture file holds. */
export interface Fixture {
  version: string;
  /** When the items were read (epoch ms): their times are moved by `now - capturedAt` when loaded. */
  capturedAt: number;
  /** The task of each state, by id. */
  tasks: { queued: string; question: string; sleeping: string; completed: string };
  /** Every item of the task table, in DynamoDB's JSON (AttributeValue) form. */
  items: Array<Record<string, unknown>>;
  /** The messages on the task queue. */
  messages: HeldMessage[];
}

let holdAll = false;
const held: HeldMessage[] = [];
let dynamodb: DynamoDBClient | undefined;

/** Keeps from the queue every message while `holdAll`, and every wake-up: they are the fixture's. */
function holdMessages(sqs: SQSClient): void {
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { MessageBody?: string; DelaySeconds?: number };
      if (context.commandName !== 'SendMessageCommand' || input.MessageBody === undefined) return next(args);
      const reason = (JSON.parse(input.MessageBody) as { reason?: string }).reason;
      if (!holdAll && reason !== 'wake') return next(args);
      held.push({ body: input.MessageBody, ...(input.DelaySeconds === undefined ? {} : { delaySeconds: input.DelaySeconds }) });
      return { output: { MessageId: `held-${held.length}`, $metadata: {} }, response: {} } as never;
    },
    { step: 'initialize', name: 'holdTaskMessages' },
  );
}

const dataDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-upgrade-capture-'));
const stack = await startLocalStack({
  port: 0,
  dataDir,
  tools: upgradeTools,
  env: {},
  log: () => {},
  events: 'off',
  sweepIntervalMs: 3_600_000,
  instrument: (clients) => {
    dynamodb = clients.dynamodb;
    holdMessages(clients.sqs);
  },
});
try {
  const call = async (tool: string, args: Record<string, unknown>) =>
    resultOf(await rpc(stack.url, 'tools/call', { name: tool, arguments: args }))['taskId'] as string;
  const completed = await call('upgrade_work', { name: 'completed' });
  await pollUntil(stack.url, completed, (task) => task.status === 'completed', 30_000);
  const question = await call('upgrade_question', { name: 'question' });
  await pollUntil(stack.url, question, (task) => task.status === 'input_required', 30_000);
  const sleeping = await call('upgrade_sleep', { name: 'sleeping', ms: 2_000 });
  await waitFor('the wake-up message', () => held.length === 1, 30_000);
  await waitFor('the worker to finish', () => stack.workerStats().inFlight === 0, 30_000);
  holdAll = true;
  const queued = await call('upgrade_work', { name: 'queued' });
  const capturedAt = Date.now();
  const scanned = await dynamodb!.send(new ScanCommand({ TableName: stack.config.tableName }));
  const items = (scanned.Items ?? []).sort((a, b) => `${a['pk']?.S}/${a['sk']?.S}`.localeCompare(`${b['pk']?.S}/${b['sk']?.S}`)) as Array<
    Record<string, unknown>
  >;
  const fixture: Fixture = { version, capturedAt, tasks: { queued, question, sleeping, completed }, items, messages: held };
  const dir = new URL(`test/upgrade/${version}/`, ROOT);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL('fixture.json', dir), `${JSON.stringify(fixture, null, 2)}\n`);
  console.log(`test/upgrade/${version}/fixture.json: ${items.length} items, ${held.length} messages`);
} finally {
  await stack.close();
  rmSync(dataDir, { recursive: true, force: true });
}
