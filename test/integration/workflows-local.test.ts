/**
 * Workflow tools on the local stack started in process with `npm start`'s
 * settings (the test catalogue added, for `two_questions`): what needs a
 * hand inside the stack. A lost end event (its delivery fails once, as a
 * failed EventBridge target would drop it) is found by the safety net's
 * look once its time has come (the row's wait planted 15 minutes on); a
 * duplicated end event changes nothing; two questions of one execution come
 * with distinct tokens and each answer reaches its own state.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { readExecutionEvent } from '../../shared/engines/stepfunctions/index.ts';
import type { LogEvent } from '../../shared/log.ts';
import { TABLE_KEYS, TASK_ROW_SK } from '../../shared/tasks/dynamodb/index.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import type { AskedQuestion } from '../../shared/tasks/workflows-model.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc, type TaskView } from '../support/wire.ts';
import { statusChangeEvent } from '../support/workflow-fakes.ts';

const SETTLE_MS = 60_000;

describe('workflow tools on the local stack (in process)', () => {
  let dataDir: string;
  let stack: LocalStack;
  let dynamodb: DynamoDBClient;
  let sfn: SFNClient;
  const logged: LogEvent[] = [];
  /** Tasks whose next end event fails to be recorded (the event is then lost: the emulator does not retry). */
  const dropEndOf = new Set<string>();
  /** The question ids (digests of their tokens) the receiver recorded, by task. */
  const asked = new Map<string, string[]>();

  const decorated = (store: TaskStore): TaskStore =>
    new Proxy(store, {
      get(target, prop) {
        if (prop === 'endWorkflow') {
          return async (taskId: string, ...rest: Parameters<TaskStore['endWorkflow']> extends [string, ...infer R] ? R : never) => {
            if (dropEndOf.delete(taskId)) throw Object.assign(new Error('the target failed'), { name: 'ServiceUnavailable' });
            return target.endWorkflow(taskId, ...rest);
          };
        }
        if (prop === 'askFromWorkflow') {
          return async (taskId: string, question: AskedQuestion, ...rest: [never, number]) => {
            asked.set(taskId, [...(asked.get(taskId) ?? []), question.id]);
            return target.askFromWorkflow(taskId, question, ...rest);
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-workflows-'));
    stack = await startLocalStack({
      port: 0,
      dataDir,
      env: { ...process.env, TASKS_TOOLSET: 'test' },
      log: (event) => void logged.push(event),
      decorate: { store: decorated },
      instrument: (clients) => {
        dynamodb = clients.dynamodb;
        sfn = clients.stepFunctions!;
      },
    });
  });

  after(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const started = async (tool: string, args: Record<string, unknown>) => {
    const created = resultOf(await rpc(stack.url, 'tools/call', { name: tool, arguments: args }));
    return created['taskId'] as string;
  };
  const until = (taskId: string, done: (task: TaskView) => boolean) => pollUntil(stack.url, taskId, done, SETTLE_MS, 100);
  const answer = (taskId: string, key: string, content: Record<string, unknown>) =>
    rpc(stack.url, 'tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content } } });

  it('a lost end event: the look due 15 minutes after the start describes the execution once and settles the task', {
    timeout: 120_000,
  }, async () => {
    const taskId = await started('deploy_release', { release: 'lost@1.0.0', regions: ['eu-west-1'] });
    await until(taskId, (task) => task.status === 'input_required');
    dropEndOf.add(taskId);
    await answer(taskId, 'approval', { approve: true });
    const execution = `arn:aws:states:us-east-1:000000000000:execution:deploy-release:${taskId}`;
    const ended = async () => (await sfn.send(new DescribeExecutionCommand({ executionArn: execution }))).status;
    for (const deadline = Date.now() + SETTLE_MS; (await ended()) !== 'SUCCEEDED'; ) {
      assert.ok(Date.now() < deadline, 'the execution ends');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The emulator hands the end event to the consumer after the execution has ended: wait for it, to be lost.
    await waitFor('its end event to come, and be lost', () => !dropEndOf.has(taskId), SETTLE_MS, 100);
    // The run has suspended on the execution (no lease, its wait recorded), which has ended meanwhile.
    const key = { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } };
    await waitFor(
      'the run to suspend',
      async () => {
        const row = (await dynamodb.send(new GetItemCommand({ TableName: stack.config.tableName, Key: key, ConsistentRead: true }))).Item;
        return row?.['callbackWait'] !== undefined && row['leaseOwner'] === undefined && row['status']?.S === 'working';
      },
      SETTLE_MS,
      100,
    );
    assert.equal((await until(taskId, () => true)).status, 'working');
    // Fifteen minutes on: the row's wait is due (its look, and the sweeper's index entry).
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: stack.config.tableName,
        Key: key,
        UpdateExpression: 'SET #sweepAt = :past, #wait = :wait',
        ConditionExpression: 'attribute_not_exists(#leaseOwner)',
        ExpressionAttributeNames: { '#sweepAt': 'sweepAt', '#wait': 'callbackWait', '#leaseOwner': 'leaseOwner' },
        ExpressionAttributeValues: {
          ':past': { N: String(Date.now() - 1000) },
          ':wait': {
            S: JSON.stringify({
              callbacks: { workflow: { since: 0, timeoutAt: Date.now() + 10 ** 9, onCancel: true } },
              wakeAt: Date.now() - 1000,
            }),
          },
        },
      }),
    );
    const looks = logged.filter((event) => event.event === 'workflow-checked' && event['taskId'] === taskId).length;
    await stack.handlers.sweeper();
    const done = await until(taskId, (task) => task.status !== 'working');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.['structuredContent'], {
      release: 'lost@1.0.0',
      deployed: [{ region: 'eu-west-1', status: 'deployed' }],
      verified: true,
    });
    assert.equal(logged.filter((event) => event.event === 'workflow-checked' && event['taskId'] === taskId).length, looks + 1, 'one look');
  });

  it('a duplicated end event changes nothing', { timeout: 120_000 }, async () => {
    const taskId = await started('deploy_release', { release: 'dup@1.0.0', regions: ['us-east-1'] });
    await until(taskId, (task) => task.status === 'input_required');
    await answer(taskId, 'approval', { approve: true });
    const done = await until(taskId, (task) => task.status === 'completed');
    const execution = `arn:aws:states:us-east-1:000000000000:execution:deploy-release:${taskId}`;
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn: execution }));
    const event = statusChangeEvent(execution, 'SUCCEEDED', { output: described.output ?? null });
    assert.equal(readExecutionEvent(event).kind, 'end');
    assert.deepEqual(await stack.handlers.workflowEvents!(event), { recorded: 'ended' });
    assert.deepEqual(await stack.handlers.workflowEvents!(event), { recorded: 'ended' });
    const after = await until(taskId, () => true);
    assert.deepEqual(after, done);
  });

  it('two questions in one execution: distinct tokens, each answer reaching its own state', { timeout: 120_000 }, async () => {
    const taskId = await started('two_questions', {});
    let task = await until(taskId, (view) => view.status === 'input_required');
    assert.deepEqual(Object.keys(task.inputRequests ?? {}), ['pick']);
    await answer(taskId, 'pick', { colour: 'red' });
    task = await until(taskId, (view) => view.status === 'input_required' && view.inputRequests?.['pick#2'] !== undefined);
    assert.equal(task.inputRequests?.['pick#2']?.params?.['message'], 'Which colour next?');
    await answer(taskId, 'pick#2', { colour: 'blue' });
    const done = await until(taskId, (view) => view.status === 'completed');
    assert.deepEqual(done.result?.['structuredContent'], { first: 'red', second: 'blue' });
    const ids = asked.get(taskId) ?? [];
    assert.equal(ids.length, 2);
    assert.notEqual(ids[0], ids[1], 'each entry into a task-token state has a token of its own');
  });
});
