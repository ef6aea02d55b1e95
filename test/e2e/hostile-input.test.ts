/**
 * Hostile and unlucky input, item 1: the size budgets. Oversized
 * arguments, capabilities, answers and requestState are refused at the door,
 * over HTTP against the local stack and through the MCP Lambda handler
 * in-process (`stack.handlers.mcp`); a task whose row reaches DynamoDB's item
 * limit ends instead of looping; and a task with every budget at its maximum
 * still fits a row. Every task the suite gets accepted must reach a terminal
 * state before it ends. Spec items are cited as "spec N"
 * (docs/spec-requirements.md). The hazards, cited as "item N": 1 size budgets (hostile-input.test.ts), 2 nothing
 * silent, 3 a sealed requestState, 4 Origin and Host, 5 one error mapper, 6 concurrency
 * and fairness (the rest of them, hostile-requests.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_ANSWER_BYTES,
  MAX_ANSWERS_BYTES,
  MAX_ARGUMENTS_BYTES,
  MAX_CAPABILITIES_BYTES,
  MAX_REQUEST_STATE_BYTES,
} from '../../shared/tasks/limits.ts';
import { isTerminal } from '../../shared/tasks/model.ts';
import { newTask } from '../support/factories.ts';
import { waitFor } from '../support/wait.ts';
import { errorOf, type RpcResponse, resultOf, TASKS_CAPABILITIES, wires } from '../support/wire.ts';
import { hostileStack, PRINCIPAL, pad } from './hostile-stack.ts';

/** A `-32602` whose message names `limit` (the budget's byte count). */
function assertLimitRefusal(reply: RpcResponse, subject: RegExp, limit: number): void {
  const error = errorOf(reply);
  assert.equal(error.code, -32602, reply.text.slice(0, 300));
  assert.match(error.message, subject);
  assert.match(error.message, new RegExp(`the limit is ${limit} bytes`));
}

describe('hostile and unlucky input', () => {
  const local = hostileStack();
  const { logs, accepted } = local;

  for (const wire of wires(() => local.stack)) {
    describe(`over ${wire.name}`, () => {
      // --- item 1: size budgets at the door --------------------------------
      it('item 1: refuses arguments over their budget with -32602 naming the limit, before anything is written', async () => {
        const created = logs.filter((line) => line.event === 'task-created').length;
        assertLimitRefusal(
          await wire.call('tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: pad(409_244) } }),
          /^arguments/,
          MAX_ARGUMENTS_BYTES,
        );
        assertLimitRefusal(
          await wire.call('tools/call', { name: 'greet', arguments: { name: pad(MAX_ARGUMENTS_BYTES) } }),
          /^arguments/,
          MAX_ARGUMENTS_BYTES,
        );
        assert.equal(logs.filter((line) => line.event === 'task-created').length, created);
      });

      it('item 1: refuses client capabilities over their budget', async () => {
        const capabilities = { ...TASKS_CAPABILITIES, experimental: { padding: { data: pad(MAX_CAPABILITIES_BYTES) } } };
        assertLimitRefusal(
          await wire.call('tools/call', { name: 'slow_compute', arguments: { seconds: 1 } }, { capabilities }),
          /^clientCapabilities/,
          MAX_CAPABILITIES_BYTES,
        );
      });

      it('item 1: refuses answers over the per-key and per-task budgets (tasks/update and inline), and a 3 MB answer (item 5)', async () => {
        const taskResult = resultOf(await wire.call('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } }));
        const taskId = String(taskResult['taskId']);
        accepted.push({ taskId, owner: PRINCIPAL });
        const big = { action: 'accept', content: { confirm: true, note: pad(MAX_ANSWER_BYTES) } };
        assertLimitRefusal(
          await wire.call('tasks/update', { taskId, inputResponses: { confirm: big } }),
          /^inputResponses\["confirm"\]/,
          MAX_ANSWER_BYTES,
        );
        const many = Object.fromEntries(
          Array.from({ length: 3 }, (_, i) => [`k${i}`, { action: 'accept', content: { note: pad(50 * 1024) } }]),
        );
        assertLimitRefusal(await wire.call('tasks/update', { taskId, inputResponses: many }), /^inputResponses is/, MAX_ANSWERS_BYTES);
        const huge = await wire.call('tasks/update', {
          taskId,
          inputResponses: { confirm: { action: 'accept', content: { note: pad(3 * 1024 * 1024) } } },
        });
        assert.equal(errorOf(huge).code, -32602);
        assertLimitRefusal(
          await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, inputResponses: { value: big } }),
          /^inputResponses\["value"\]/,
          MAX_ANSWER_BYTES,
        );
      });

      it("item 1: refuses answers that would take all of a task's answers over the per-task budget", async () => {
        const taskId = String(resultOf(await wire.call('tools/call', { name: 'multi_input', arguments: {} }))['taskId']);
        accepted.push({ taskId, owner: PRINCIPAL });
        /** An answer of exactly MAX_ANSWER_BYTES serialised bytes. */
        const full = (field: string) => {
          const empty = JSON.stringify({ action: 'accept', content: { [field]: '' } }).length;
          return { action: 'accept', content: { [field]: pad(MAX_ANSWER_BYTES - empty) } };
        };
        await waitFor(
          'the task to ask',
          async () => (await local.stack.store.get(taskId, PRINCIPAL, Date.now()))?.status === 'input_required',
        );
        assert.equal(
          resultOf(await wire.call('tasks/update', { taskId, inputResponses: { name: full('name') } }))['resultType'],
          'complete',
        );
        assertLimitRefusal(
          await wire.call('tasks/update', { taskId, inputResponses: { color: full('color') } }),
          /^inputResponses \(all answers of the task\)/,
          MAX_ANSWERS_BYTES,
        );
        assert.equal((await local.stack.store.get(taskId, PRINCIPAL, Date.now()))?.status, 'input_required');
      });

      it('item 1: refuses a requestState over its budget', async () => {
        const reply = await wire.call('tools/call', {
          name: 'test_streaming_elicitation',
          arguments: {},
          requestState: `v1.${pad(MAX_REQUEST_STATE_BYTES)}.x`,
        });
        const error = errorOf(reply);
        assert.equal(error.code, -32602);
        assert.match(error.message, new RegExp(`requestState is over its limit of ${MAX_REQUEST_STATE_BYTES} bytes`));
      });
    });
  }

  // --- item 1: rows at the limit end ------------------------------------------
  /** A task row as close to DynamoDB's item limit as the store will write (the door never allows one). */
  async function taskAtTheLimit(): Promise<string> {
    for (let size = 409_500; size > 400_000; size -= 16) {
      const taskId = crypto.randomUUID();
      try {
        await local.stack.store.create(
          newTask({
            taskId,
            owner: PRINCIPAL,
            tool: 'slow_compute',
            arguments: { seconds: 1, label: pad(size) },
            clientCapabilities: TASKS_CAPABILITIES,
            now: Date.now(),
          }),
        );
      } catch {
        continue;
      }
      accepted.push({ taskId, owner: PRINCIPAL });
      return taskId;
    }
    throw new Error('no row near the limit could be written');
  }

  it('item 1: a task whose row is at the size limit ends failed with a diagnostic instead of looping', async () => {
    const taskId = await taskAtTheLimit();
    await local.stack.queue.send({ taskId, reason: 'start' });
    let status: string | undefined;
    const task = await waitFor(
      () => `the task to end, still ${status}`,
      async () => {
        const row = await local.stack.store.get(taskId, PRINCIPAL, Date.now());
        status = row?.status;
        return row && isTerminal(row.status) ? row : undefined;
      },
      15_000,
      50,
    );
    assert.equal(task.status, 'failed');
    assert.match(task.statusMessage ?? '', /size limit/);
    assert.match(task.statusMessage ?? '', /arguments and answers were removed/);
    assert.deepEqual(task.arguments, {});
    assert.ok(logs.some((l) => l.event === 'claim-failed' && l['taskId'] === taskId && l['error'] === 'TaskRowRejectedError'));
    // Counted like any other end: the failed-task alarm sees it.
    const ended = logs.filter((l) => l.event === 'task-ended' && l['taskId'] === taskId);
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!['TasksEnded'], 1);
    assert.equal(ended[0]!['TaskFailed'], 1);
  });

  it('item 1: the dead-letter handler ends a task at the size limit failed, slimming its row', async () => {
    const taskId = await taskAtTheLimit();
    const body = JSON.stringify({ taskId, reason: 'start' });
    const record = {
      messageId: `m-${taskId}`,
      body,
      receiptHandle: 'r',
      attributes: {},
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:dlq',
      awsRegion: 'us-east-1',
    };
    const response = await local.stack.handlers.deadLetter({ Records: [record as never] });
    assert.deepEqual(response.batchItemFailures, []);
    const task = await local.stack.store.get(taskId, PRINCIPAL, Date.now());
    assert.equal(task?.status, 'failed');
    assert.match(task?.statusMessage ?? '', /size limit.*arguments and answers were removed/);
  });

  for (const wire of wires(() => local.stack)) {
    // Spec 32: tasks/cancel is acknowledged whatever the task's size.
    it(`item 1: tasks/cancel works on a task at the size limit (over ${wire.name})`, async () => {
      const taskId = await taskAtTheLimit();
      assert.equal(resultOf(await wire.call('tasks/cancel', { taskId }))['resultType'], 'complete');
      const task = await local.stack.store.get(taskId, PRINCIPAL, Date.now());
      assert.equal(task?.status, 'cancelled');
      assert.match(task?.statusMessage ?? '', /arguments and answers were removed/);
    });
  }
});

describe('size budgets against the row they protect (item 1)', () => {
  it('a task with every client-controlled part at its budget fits a row, through claim, a question and its end', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { startDynalite, ensureTaskTable } = await import('../../bin/local/dynamodb.ts');
    const { DynamoDbTaskStore, taskRowBytes } = await import('../../shared/tasks/dynamodb/index.ts');
    const { DYNAMODB_ITEM_LIMIT_BYTES, jsonBytes } = await import('../../shared/tasks/limits.ts');
    const dynamo = await startDynalite({});
    const client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    try {
      await ensureTaskTable(client, 'tasks');
      const store = new DynamoDbTaskStore({
        client,
        tableName: 'tasks',
        policy: { sweepGraceMs: 60_000, leaseMs: 300_000, retentionMs: 3_600_000, stepRetentionMs: 86_400_000 },
      });
      /** A JSON object of exactly `bytes` serialised bytes. */
      const filled = (bytes: number) => ({ p: pad(bytes - jsonBytes({ p: '' })) });
      const answers = { a: filled(MAX_ANSWER_BYTES - 8), b: filled(MAX_ANSWERS_BYTES - MAX_ANSWER_BYTES - 64) };
      assert.ok(jsonBytes(answers) <= MAX_ANSWERS_BYTES);
      const taskId = crypto.randomUUID();
      const owner = `https://issuer.example.com/#${pad(200)}`;
      const { task } = await store.create(
        newTask({
          taskId,
          owner,
          tool: 'approval_gate',
          arguments: filled(MAX_ARGUMENTS_BYTES),
          clientCapabilities: filled(MAX_CAPABILITIES_BYTES),
          inputResponses: answers,
          now: Date.now(),
        }),
      );
      const created = taskRowBytes(task);
      const claimed = await store.claim(taskId, crypto.randomUUID(), Date.now());
      assert.ok(claimed);
      const question = {
        method: 'elicitation/create' as const,
        params: { message: pad(2000), requestedSchema: { type: 'object', properties: {} } },
      };
      const waiting = await store.finish(
        claimed,
        claimed.lease!.owner,
        { status: 'input_required', inputRequests: { c: question } },
        Date.now(),
      );
      const { result: failed } = await store.cancel(taskId, owner, Date.now());
      assert.equal(failed, 'cancelled');
      const ended = await store.get(taskId, owner, Date.now());
      const measured = { created, waiting: taskRowBytes(waiting), ended: taskRowBytes(ended!) };
      console.log(`measured row sizes with every budget at its maximum: ${JSON.stringify(measured)} (limit ${DYNAMODB_ITEM_LIMIT_BYTES})`);
      for (const size of Object.values(measured))
        assert.ok(size < DYNAMODB_ITEM_LIMIT_BYTES - 100 * 1024, `${size} leaves under 100 KiB for the row's own fields`);
    } finally {
      client.destroy();
      await dynamo.close();
    }
  });
});
