/**
 * Upgrades keep what is in flight: each release's fixture (`test/upgrade/<version>/`,
 * written by that version's code with `test/upgrade/capture.ts`) is loaded
 * into a fresh local stack of this version, its table items as they were and
 * its queue messages sent again, with every time moved forward by how long
 * ago it was captured (as if the release had been replaced a moment after
 * writing them). This version then finishes every task: the queued one runs,
 * the sleeping one wakes, the one waiting for an answer takes it and ends,
 * and the completed one keeps its result. A release's workflow fixture
 * (`workflow.json`, `capture-workflow.ts`) holds a Step Functions tool's task
 * suspended on its execution, its row written before rows named their engine:
 * this version reads it as Step Functions' and ends it by the execution's
 * status-change event.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type AttributeValue, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startLocalStack } from '../../bin/local/stack.ts';
import { engineNamed } from '../../shared/engines/port.ts';
import type { WorkflowRecord } from '../../shared/tasks/workflows-model.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';
import { statusChangeEvent } from '../support/workflow-fakes.ts';
import type { Fixture } from '../upgrade/capture.ts';
import type { WorkflowFixture } from '../upgrade/capture-workflow.ts';
import { upgradeTools } from '../upgrade/tools.ts';

const FIXTURES = fileURLToPath(new URL('../upgrade/', import.meta.url));
const versions = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** Times within this distance of the capture are the rows' own (creation, updates, deadlines, expiry). */
const WINDOW_MS = 400 * 24 * 3600 * 1000;

/**
 * An item with its times moved by `deltaMs`: numbers that are epoch
 * milliseconds or seconds near the capture, and epoch milliseconds inside
 * strings (an index's sort key, a sleep's checkpoint), zero-padding kept.
 */
function moved(value: AttributeValue, capturedAt: number, deltaMs: number): AttributeValue {
  const near = (n: number, unit: number) => Math.abs(n * unit - capturedAt) < WINDOW_MS;
  if (value.N !== undefined) {
    const n = Number(value.N);
    if (near(n, 1)) return { N: String(n + deltaMs) };
    if (near(n, 1000)) return { N: String(n + Math.round(deltaMs / 1000)) };
    return value;
  }
  if (value.S !== undefined) {
    return {
      S: value.S.replace(/\d{13,15}/g, (digits) =>
        near(Number(digits), 1) ? String(Number(digits) + deltaMs).padStart(digits.length, '0') : digits,
      ),
    };
  }
  if (value.M !== undefined) return { M: Object.fromEntries(Object.entries(value.M).map(([k, v]) => [k, moved(v, capturedAt, deltaMs)])) };
  if (value.L !== undefined) return { L: value.L.map((v) => moved(v, capturedAt, deltaMs)) };
  return value;
}

/** A fresh local stack of this version with the fixture's items and messages in it, its times moved forward. */
async function loaded(fixture: Pick<Fixture, 'capturedAt' | 'items' | 'messages'>) {
  let dynamodb: DynamoDBClient | undefined;
  let sqs: SQSClient | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-upgrade-'));
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
      sqs = clients.sqs;
    },
  });
  const deltaMs = Date.now() - fixture.capturedAt;
  for (const item of fixture.items) {
    const Item = Object.fromEntries(
      Object.entries(item as Record<string, AttributeValue>).map(([k, v]) => [k, moved(v, fixture.capturedAt, deltaMs)]),
    );
    await dynamodb!.send(new PutItemCommand({ TableName: stack.config.tableName, Item }));
  }
  for (const message of fixture.messages) {
    await sqs!.send(
      new SendMessageCommand({
        QueueUrl: stack.config.queueUrl,
        MessageBody: message.body,
        ...(message.delaySeconds === undefined ? {} : { DelaySeconds: message.delaySeconds }),
      }),
    );
  }
  return { stack, dataDir };
}

const textOf = (task: Record<string, unknown>) => (task['result'] as { content: Array<{ text: string }> }).content[0]?.text;

for (const version of versions) {
  describe(`the tasks ${version} left in flight`, () => {
    it('are finished by this version', async () => {
      const fixture = JSON.parse(readFileSync(join(FIXTURES, version, 'fixture.json'), 'utf8')) as Fixture;
      const { stack, dataDir } = await loaded(fixture);
      try {
        const { tasks } = fixture;
        const done = (id: string) => pollUntil(stack.url, id, (task) => task.status === 'completed' || task.status === 'failed', 60_000);

        assert.equal(textOf((await done(tasks.completed)) as Record<string, unknown>), 'worked for completed');
        assert.equal(textOf((await done(tasks.queued)) as Record<string, unknown>), 'worked for queued');
        assert.equal(textOf((await done(tasks.sleeping)) as Record<string, unknown>), 'fell asleep for sleeping, woke up');

        const waiting = resultOf(await rpc(stack.url, 'tasks/get', { taskId: tasks.question }));
        assert.equal(waiting['status'], 'input_required');
        assert.deepEqual(Object.keys(waiting['inputRequests'] as object), ['go']);
        resultOf(
          await rpc(stack.url, 'tasks/update', {
            taskId: tasks.question,
            inputResponses: { go: { action: 'accept', content: { go: true } } },
          }),
        );
        assert.equal(textOf((await done(tasks.question)) as Record<string, unknown>), 'prepared question, then went on');
      } finally {
        await stack.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}

for (const version of versions.filter((version) => existsSync(join(FIXTURES, version, 'workflow.json')))) {
  describe(`the workflow task ${version} left following its execution`, () => {
    it("is read as a Step Functions task and ended by its execution's event", async () => {
      const fixture = JSON.parse(readFileSync(join(FIXTURES, version, 'workflow.json'), 'utf8')) as WorkflowFixture;
      const row = fixture.items.find((item) => (item['sk'] as AttributeValue).S === 'task')!;
      const workflow = JSON.parse((row['workflow'] as AttributeValue).S!) as WorkflowRecord;
      assert.equal(workflow.execution, fixture.execution);
      assert.equal(engineNamed(workflow), 'stepfunctions', "a row without an engine is Step Functions'");
      const { stack, dataDir } = await loaded(fixture);
      try {
        const following = resultOf(await rpc(stack.url, 'tasks/get', { taskId: fixture.task }));
        assert.equal(following['status'], 'working');
        assert.equal(following['statusMessage'], 'Running upgrade-hold');
        const event = statusChangeEvent(fixture.execution, 'SUCCEEDED', { output: JSON.stringify({ held: 'workflow' }) });
        assert.deepEqual(await stack.handlers.workflowEvents!(event), { recorded: 'resumed' });
        const done = await pollUntil(stack.url, fixture.task, (task) => task.status === 'completed' || task.status === 'failed', 60_000);
        assert.equal(textOf(done as Record<string, unknown>), 'held for workflow');
        assert.deepEqual(await stack.handlers.workflowEvents!(event), { recorded: 'ended' });
      } finally {
        await stack.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}
