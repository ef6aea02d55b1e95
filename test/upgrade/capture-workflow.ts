/**
 * Writes the workflow upgrade fixture of this version: `npx tsx
 * test/upgrade/capture-workflow.ts` runs the local stack (this version's
 * handlers on dynalite, fauxqs and the Step Functions emulator) with the
 * upgrade tools (`tools.ts`), starts `upgrade_workflow` and leaves its task
 * suspended, following its execution (which holds for a day). It writes every
 * item of the table, and every message the functions sent after the task was
 * created, to `test/upgrade/<version>/workflow.json`. Run once per release
 * whose workflow rows may change, and commit.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { startLocalStack } from '../../bin/local/stack.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';
import type { HeldMessage } from './capture.ts';
import { upgradeTools } from './tools.ts';

const ROOT = new URL('../../', import.meta.url);
const version = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string }).version;

/** What the workflow fixture holds. */
export interface WorkflowFixture {
  version: string;
  /** When the items were read (epoch ms). */
  capturedAt: number;
  /** The task that follows its execution, and that execution's ARN as its row records it. */
  task: string;
  execution: string;
  /** Every item of the task table, in DynamoDB's JSON (AttributeValue) form. */
  items: Array<Record<string, unknown>>;
  /** The messages on the task queue (none: a suspended task has nothing queued). */
  messages: HeldMessage[];
}

let dynamodb: DynamoDBClient | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-upgrade-capture-'));
const stack = await startLocalStack({
  port: 0,
  dataDir,
  tools: upgradeTools,
  env: {},
  log: () => {},
  events: 'off',
  sweepIntervalMs: 3_600_000,
  workflowWaitMs: 3_600_000,
  instrument: (clients) => {
    dynamodb = clients.dynamodb;
  },
});
try {
  const task = resultOf(await rpc(stack.url, 'tools/call', { name: 'upgrade_workflow', arguments: { name: 'workflow' } }))[
    'taskId'
  ] as string;
  await pollUntil(stack.url, task, (got) => got.status === 'working', 30_000);
  const followed = async () => {
    const scanned = await dynamodb!.send(new ScanCommand({ TableName: stack.config.tableName }));
    const row = scanned.Items?.find((item) => item['workflow']?.S !== undefined);
    return row && (JSON.parse(row['workflow']!.S!) as { execution?: string }).execution;
  };
  const execution = await waitFor('the task to follow its execution', followed, 30_000);
  await waitFor('the worker to suspend it', () => stack.workerStats().inFlight === 0, 30_000);
  const capturedAt = Date.now();
  const scanned = await dynamodb!.send(new ScanCommand({ TableName: stack.config.tableName }));
  const items = (scanned.Items ?? []).sort((a, b) => `${a['pk']?.S}/${a['sk']?.S}`.localeCompare(`${b['pk']?.S}/${b['sk']?.S}`)) as Array<
    Record<string, unknown>
  >;
  const fixture: WorkflowFixture = { version, capturedAt, task, execution, items, messages: [] };
  const dir = new URL(`test/upgrade/${version}/`, ROOT);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL('workflow.json', dir), `${JSON.stringify(fixture, null, 2)}\n`);
  console.log(`test/upgrade/${version}/workflow.json: ${items.length} items`);
} finally {
  await stack.close();
  rmSync(dataDir, { recursive: true, force: true });
}
