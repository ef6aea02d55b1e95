/**
 * Lifecycle events end to end on the local stack: the unchanged handlers on
 * dynalite and fauxqs, publishing through the EventBridge adapter on a real
 * SDK client to a small local `PutEvents` endpoint (there is no EventBridge
 * emulator). From each place a task ends or asks a person: the worker (a
 * question, an end), the MCP function (a cancel of a waiting task), the
 * dead-letter handler and the sweeper (a wait past its deadline); and a
 * publish that keeps failing, which leaves the task as it was and is counted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { REGION } from '../../bin/local/emulators.ts';
import type { LocalStack } from '../../bin/local/options.ts';
import { LOCAL_CREDENTIALS } from '../../bin/local/sqs.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { ENV } from '../../shared/config.ts';
import { EventBridgePublisher } from '../../shared/events/eventbridge.ts';
import { PUBLISH_ATTEMPTS } from '../../shared/events/publisher.ts';
import { DETAIL_TYPES, EVENT_SOURCE } from '../../shared/events/task-events.ts';
import type { LogEvent } from '../../shared/log.ts';
import { type EventBridgeFake, type ReceivedEvent, startEventBridgeFake } from '../support/eventbridge-fake.ts';
import { newTask, sqsEvent } from '../support/factories.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';

const PUBLIC_URL = 'https://tasks.example.test';
const BUS = 'McpTasksEventsTest';
/** Short enough for the sweeper's deadline case to be reached by waiting, long enough for the other cases' questions. */
const WAIT_MS = 3_000;
const ACTION = 'rotate the payroll database credentials';

let dataDir: string;
let fake: EventBridgeFake;
let client: EventBridgeClient;
let stack: LocalStack;
const lines: LogEvent[] = [];

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-events-'));
  fake = await startEventBridgeFake();
  client = new EventBridgeClient({ endpoint: fake.url, region: REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  stack = await startLocalStack({
    port: 0,
    dataDir,
    env: { [ENV.publicUrl]: PUBLIC_URL, [ENV.maxInputWaitMs]: String(WAIT_MS) },
    events: new EventBridgePublisher({ client, busName: BUS }),
    log: (line) => void lines.push(line),
    // The sweeper runs at start-up, then only when a test invokes it.
    sweepIntervalMs: 3_600_000,
  });
});

after(async () => {
  await stack?.close();
  client?.destroy();
  await fake?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const of = (taskId: string): ReceivedEvent[] => fake.events.filter((event) => event.detail['taskId'] === taskId);
const eventually = (taskId: string, count: number) =>
  waitFor(`${count} event(s) of ${taskId}`, () => (of(taskId).length >= count ? of(taskId) : undefined));

async function callTool(name: string, args: Record<string, unknown>): Promise<string> {
  const created = resultOf(await rpc(stack.url, 'tools/call', { name, arguments: args }));
  assert.equal(created['resultType'], 'task', JSON.stringify(created));
  return String(created['taskId']);
}

const waitingOn = (taskId: string) => pollUntil(stack.url, taskId, (task) => task.status !== 'working');

describe('lifecycle events on the local stack, through the EventBridge client', () => {
  it("the worker: a question for a person with the task page's link, then the completion, with no arguments or answers", async () => {
    const taskId = await callTool('approval_gate', { action: ACTION });
    assert.equal((await waitingOn(taskId)).status, 'input_required');
    const [asked] = await eventually(taskId, 1);
    assert.equal(asked?.source, EVENT_SOURCE);
    assert.equal(asked?.eventBusName, BUS);
    assert.equal(asked?.detailType, DETAIL_TYPES.question);
    assert.equal(asked?.detail['taskUrl'], `${PUBLIC_URL}/console/tasks/${taskId}`);
    assert.deepEqual(asked?.detail['questions'], [{ key: 'approval', message: 'Approval gate' }]);
    assert.equal(Date.parse(asked?.detail['deadline']) - Date.parse(asked?.detail['openedAt']), WAIT_MS);

    const answered = await rpc(stack.url, 'tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { approve: true, comment: 'carefully, please' } } },
    });
    assert.equal(answered.status, 200, answered.text);
    const [, ended] = await eventually(taskId, 2);
    assert.equal(ended?.detailType, DETAIL_TYPES.completed);
    assert.equal(ended?.detail['tool'], 'approval_gate');
    const text = JSON.stringify(of(taskId));
    for (const secret of [ACTION, 'carefully', 'Approved and done']) assert.ok(!text.includes(secret), `no event carries "${secret}"`);
  });

  it('the MCP function: a cancel of a waiting task publishes Task Cancelled', async () => {
    const taskId = await callTool('approval_gate', { action: ACTION });
    assert.equal((await waitingOn(taskId)).status, 'input_required');
    await eventually(taskId, 1);
    const cancel = await rpc(stack.url, 'tasks/cancel', { taskId });
    assert.equal(cancel.status, 200, cancel.text);
    // The cancel's answer comes after the publish: the event is there when it arrives.
    assert.deepEqual(
      of(taskId).map((event) => event.detailType),
      [DETAIL_TYPES.question, DETAIL_TYPES.cancelled],
    );
  });

  it('the dead-letter handler: a task whose last delivery failed ends with Task Failed', async () => {
    const { task } = await stack.store.create(newTask({ owner: stack.config.localPrincipal, tool: 'batch_process', now: Date.now() }));
    const response = await stack.handlers.deadLetter(sqsEvent([JSON.stringify({ taskId: task.taskId, reason: 'start' })]));
    assert.deepEqual(response, { batchItemFailures: [] });
    const [failed] = of(task.taskId);
    assert.equal(failed?.detailType, DETAIL_TYPES.failed);
    assert.equal(failed?.detail['errorCode'], -32603);
  });

  it('the sweeper: a question unanswered past its deadline ends with Task Failed', async () => {
    const taskId = await callTool('approval_gate', { action: ACTION });
    assert.equal((await waitingOn(taskId)).status, 'input_required');
    const [asked] = await eventually(taskId, 1);
    const deadline = Date.parse(asked?.detail['deadline']);
    await waitFor('the deadline to pass', () => Date.now() > deadline, WAIT_MS + 5_000);
    const swept = await stack.handlers.sweeper();
    assert.ok(swept.expired >= 1, JSON.stringify(swept));
    const [, failed] = of(taskId);
    assert.equal(failed?.detailType, DETAIL_TYPES.failed);
    assert.equal(failed?.detail['status'], 'failed');
  });

  it("a publish that keeps failing leaves the task's outcome and timing as written, and is logged and counted", async () => {
    const taskId = await callTool('approval_gate', { action: ACTION });
    assert.equal((await waitingOn(taskId)).status, 'input_required');
    await eventually(taskId, 1);
    const before = fake.requests.length;
    fake.failNext(PUBLISH_ATTEMPTS, 'error');
    const cancel = await rpc(stack.url, 'tasks/cancel', { taskId });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(cancel.body?.error, undefined, 'the cancel succeeds whatever became of its event');

    const attempts = fake.requests.slice(before).filter((request) => request.taskIds.includes(taskId));
    assert.equal(attempts.length, PUBLISH_ATTEMPTS, 'bounded: the first attempt and two retries');
    assert.ok(attempts.every((attempt) => attempt.failed === 'error'));
    assert.deepEqual(
      of(taskId).map((event) => event.detailType),
      [DETAIL_TYPES.question],
      'the end event was lost (at most once)',
    );
    const task = await stack.store.get(taskId, stack.config.localPrincipal, Date.now());
    assert.equal(task?.status, 'cancelled');
    assert.ok(task.lastUpdatedAt <= attempts[0]!.receivedAt, 'the state was written before the first publish');
    const lost = lines.filter((line) => line.event === 'events-failed' && line['taskId'] === taskId);
    assert.equal(lost.length, 1);
    assert.equal(lost[0]?.['EventsFailed'], 1);
    assert.deepEqual(lost[0]?.['detailTypes'], [DETAIL_TYPES.cancelled]);
  });
});
