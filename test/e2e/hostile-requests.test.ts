/**
 * Hostile and unlucky input, items 2 to 6: a sealed requestState
 * that cannot be forged or replayed into another tool, Origin and Host checks,
 * one error mapper that never leaks exception text or another principal's
 * task, claim failures that show in the logs, and concurrency and fairness.
 * Every case runs over HTTP against the local stack and through the MCP Lambda
 * handler in-process (`stack.handlers.mcp`), and every task the suite gets
 * accepted must reach a terminal state before it ends. Spec items are cited as
 * "spec N" (docs/spec-requirements.md). The hazards, cited as "item N": 1 size budgets (hostile-input.test.ts), 2 nothing
 * silent, 3 a sealed requestState, 4 Origin and Host, 5 one error mapper, 6 concurrency
 * and fairness (the rest of them, hostile-requests.test.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { localTools } from '../../bin/local/tools.ts';
import { createMcpHandler } from '../../functions/mcp/app.ts';
import type { LogEvent } from '../../shared/log.ts';
import { MAX_TASK_ID_LENGTH } from '../../shared/tasks/limits.ts';
import { isTerminal } from '../../shared/tasks/model.ts';
import { waitFor } from '../support/wait.ts';
import { errorOf, mcpRequestEvent, type RpcResponse, rawPost, resultOf, wires } from '../support/wire.ts';
import { hostileStack, PRINCIPAL, pad } from './hostile-stack.ts';

describe('hostile and unlucky input', () => {
  const local = hostileStack();
  const { logs, boom, deniedClaims, callTask } = local;

  for (const wire of wires(() => local.stack)) {
    describe(`over ${wire.name}`, () => {
      // --- item 3: sealed requestState --------------------------------------
      it('item 3: a tampered requestState is refused with -32602; answers to keys never issued are ignored', async () => {
        const first = resultOf(await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {} }));
        assert.equal(first['resultType'], 'input_required');
        const state = String(first['requestState']);
        assert.match(state, /^v1\./);
        const answer = { value: { action: 'accept', content: { value: 'hello' } } };

        for (const forged of [`${state}-TAMPERED`, Buffer.from(JSON.stringify(answer)).toString('base64url')]) {
          const error = errorOf(
            await wire.call('tools/call', {
              name: 'test_streaming_elicitation',
              arguments: {},
              inputResponses: answer,
              requestState: forged,
            }),
          );
          assert.equal(error.code, -32602);
          assert.equal(error.message, 'Invalid or expired requestState');
        }
        // State minted for one tool does not open for another.
        const other = errorOf(
          await wire.call('tools/call', {
            name: 'test_input_required_result_tampered_state',
            arguments: {},
            inputResponses: { confirm: answer.value },
            requestState: state,
          }),
        );
        assert.equal(other.code, -32602);

        // Without the state the key was never issued: the tool asks again instead of answering.
        const unasked = resultOf(
          await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, inputResponses: answer }),
        );
        assert.equal(unasked['resultType'], 'input_required');
        // A prepare question cannot be skipped by answering it unasked (no task is created).
        const skipped = resultOf(
          await wire.call('tools/call', {
            name: 'test_tool_with_task',
            arguments: {},
            inputResponses: { user_name: { action: 'accept', content: { name: 'Eve' } } },
          }),
        );
        assert.equal(skipped['resultType'], 'input_required');

        const done = resultOf(
          await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, inputResponses: answer, requestState: state }),
        );
        assert.deepEqual(done['content'], [{ type: 'text', text: 'Received hello' }]);
      });

      // --- item 4: Origin and Host ------------------------------------------
      it('item 4: the local server refuses foreign Origin (and, at its HTTP front, Host) values with 403 and serves loopback ones', async () => {
        for (const headers of [{ Origin: 'http://evil.example' }, { Origin: 'null' }]) {
          const reply = await wire.call('tools/list', {}, { headers });
          assert.equal(reply.status, 403, `${JSON.stringify(headers)}: ${reply.text}`);
        }
        if (wire.name === 'http') {
          // The local front serves loopback Host names only (fetch cannot set Host: sent raw).
          assert.equal(await rawPost(local.stack.url, { Host: 'evil.example' }), 403);
          assert.equal(await rawPost(local.stack.url, { Host: `evil.example:${new URL(local.stack.url).port}` }), 403);
          assert.equal(await rawPost(local.stack.url, { Host: `localhost:${new URL(local.stack.url).port}` }), 200);
        }
        for (const headers of [{ Origin: 'http://localhost:5173' }, { Origin: 'http://127.0.0.1' }, {}]) {
          assert.equal((await wire.call('tools/list', {}, { headers })).status, 200, JSON.stringify(headers));
        }
      });

      // --- item 5: one error mapper -----------------------------------------
      // Spec 41 and 42: an invalid taskId is -32602 on tasks/get, tasks/update and tasks/cancel.
      it('item 5: client mistakes in any method answer -32602 without quoting schema issues', async () => {
        const cases: [string, Record<string, unknown>][] = [
          ['tools/call', { name: 5, arguments: {} }],
          ['tools/call', { name: 'greet', arguments: [1] }],
          ['tools/call', { name: 'greet', arguments: 'x' }],
          ['tools/call', { name: pad(3000), arguments: {} }],
          ['tasks/get', { taskId: pad(3000) }],
          ['tasks/cancel', { taskId: pad(3000) }],
          ['tasks/update', { taskId: pad(MAX_TASK_ID_LENGTH + 1), inputResponses: {} }],
        ];
        for (const [method, params] of cases) {
          const reply = await wire.call(method, params);
          const error = errorOf(reply);
          assert.equal(error.code, -32602, `${method} ${JSON.stringify(params).slice(0, 80)}: ${reply.text.slice(0, 300)}`);
          assert.doesNotMatch(error.message, /invalid_type|expected|x{129}|\[\s*\{/);
        }
      });

      it('item 5: unexpected errors become a bare -32603 "Internal error" (no raw exception text), logged by name', async () => {
        const label = `boom-${wire.name}`;
        boom.set(label, new Error(`Task id collision: ${'0f0f0f0f-0000-4000-8000-000000000000'}`));
        const reply = await wire.call('tools/call', { name: 'slow_compute', arguments: { seconds: 1, label } });
        assert.deepEqual(errorOf(reply), { code: -32603, message: 'Internal error' });
        assert.doesNotMatch(reply.text, /collision|0f0f0f0f/);
        assert.ok(logs.some((line) => line.event === 'request-error' && line['method'] === 'tools/call' && line['error'] === 'Error'));
      });

      // --- item 6: concurrency and fairness ---------------------------------
      // Spec 32 and 35: every tasks/cancel is acknowledged with an empty `complete` result; spec 19: it then reads `cancelled`.
      it('item 6: 20 parallel tasks/cancel on one running task are all acknowledged, and the task ends cancelled', async () => {
        const taskId = await callTask(wire, { seconds: 30 });
        await waitFor(
          'the task to be claimed',
          async () => (await local.stack.store.get(taskId, PRINCIPAL, Date.now()))?.lease !== undefined,
        );
        const replies = await Promise.all(Array.from({ length: 20 }, () => wire.call('tasks/cancel', { taskId })));
        for (const reply of replies) assert.deepEqual(resultOf(reply), resultOf(replies[0]!), reply.text);
        let status: string | undefined;
        await waitFor(
          () => `cancelled, still ${status}`,
          async () => (status = (await local.stack.store.get(taskId, PRINCIPAL, Date.now()))?.status) === 'cancelled',
          10_000,
          50,
        );
      });
    });
  }

  // --- the Lambda wire only: principals and event adapter ----------------------
  const lambda = () => wires(() => local.stack)[1]!;

  it("item 6: no error reveals another principal's task id (spec 41, 42, 56)", async () => {
    const taskId = await callTask(lambda(), { seconds: 30 }, { principal: 'alice' });
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update'] as const) {
      const reply = await lambda().call(
        method,
        { taskId, ...(method === 'tasks/update' ? { inputResponses: { confirm: { action: 'accept' } } } : {}) },
        { principal: 'mallory' },
      );
      assert.deepEqual(errorOf(reply), { code: -32602, message: 'Task not found' });
      assert.ok(!reply.text.includes(taskId));
    }
    assert.equal(resultOf(await lambda().call('tasks/cancel', { taskId }, { principal: 'alice' }))['resultType'], 'complete');
  });

  it('item 5: a malformed Host header gets a clean 400 from the event adapter, over HTTP too', async () => {
    for (const host of ['a b', '[', '%zz']) {
      const result = (await local.stack.handlers.mcp(
        mcpRequestEvent('tools/list', {}, { headers: { host } }),
      )) as APIGatewayProxyStructuredResultV2;
      assert.equal(result.statusCode, 400, `${host}: ${result.body}`);
      assert.equal(await rawPost(local.stack.url, { Host: host }), 400, `HTTP with Host ${host}`);
    }
  });

  it('item 4: deployed, Origin is checked against the allowed-origins setting (absent Origin allowed)', async () => {
    const deployed = createMcpHandler({
      config: { ...local.stack.config, allowedOrigins: ['https://app.example.com'] },
      store: local.stack.store,
      queue: local.stack.queue,
      tools: localTools('all'),
      log: () => {},
      stackSecret: async () => randomBytes(32),
    });
    const status = async (headers: Record<string, string | undefined>) =>
      (
        (await deployed(
          mcpRequestEvent('tools/list', {}, { headers: { host: 'abc.execute-api.us-east-1.amazonaws.com', ...headers } }),
        )) as APIGatewayProxyStructuredResultV2
      ).statusCode;
    assert.equal(await status({}), 200);
    assert.equal(await status({ origin: 'https://app.example.com' }), 200);
    assert.equal(await status({ origin: 'http://app.example.com' }), 403);
    assert.equal(await status({ origin: 'https://evil.example' }), 403);
    assert.equal(await status({ origin: 'http://localhost' }), 403);
  });

  // --- item 2: nothing silent -------------------------------------------------
  it('item 2: a claim failing with AccessDenied shows in the logs at once, with ids and the error name only', async () => {
    const taskId = await callTask(lambda(), { seconds: 1, label: 'denied' });
    deniedClaims.add(taskId);
    // The start message may already be on its way: send one more, which must be refused and logged.
    await local.stack.queue.send({ taskId, reason: 'start' });
    const line: LogEvent = await waitFor('a claim-failed line', () =>
      logs.find((l) => l.event === 'claim-failed' && l['taskId'] === taskId),
    );
    assert.equal(line['error'], 'AccessDeniedException');
    deniedClaims.delete(taskId);
  });
});

describe('optional cap on unfinished tasks per principal (item 6)', () => {
  let stack: LocalStack;
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-cap-'));
    stack = await startLocalStack({
      port: 0,
      dataDir,
      log: () => {},
      env: { TASKS_TOOLSET: 'all', TASKS_MAX_UNFINISHED_TASKS: '2', TASKS_CANCEL_CHECK_MS: '100' },
    });
  });
  after(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  for (const wire of wires(() => stack)) {
    it(`refuses a third unfinished task with a clear error until one ends (over ${wire.name})`, async () => {
      const start = async () => wire.call('tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
      const started = [resultOf(await start()), resultOf(await start())];
      const ids = started.map((task) => String(task['taskId']));
      const refused = errorOf(await start());
      assert.equal(refused.code, -32602);
      assert.match(refused.message, /Too many unfinished tasks: the limit is 2 per principal/);
      // When to try again: the shortest poll interval the principal's unfinished tasks were given.
      const retryAfterMs = Math.min(...started.map((task) => Number(task['pollIntervalMs'])));
      assert.deepEqual(refused.data, { reason: 'unfinished-task-limit', limit: 2, retryAfterMs });
      // Another principal is not affected.
      const other = await stack.handlers.mcp(
        mcpRequestEvent('tools/call', { name: 'slow_compute', arguments: { seconds: 0.2 } }, { principal: 'bob' }),
      );
      assert.match(JSON.stringify(other), /resultType\\":\\"task/);
      assert.equal(resultOf(await wire.call('tasks/cancel', { taskId: ids[0] }))['resultType'], 'complete');
      const third: RpcResponse = await waitFor(
        'the slot to be freed',
        async () => {
          const reply = await start();
          return reply.body?.error ? undefined : reply;
        },
        10_000,
        100,
      );
      ids.push(String(resultOf(third)['taskId']));
      // Every task started here ends.
      for (const taskId of ids) await wire.call('tasks/cancel', { taskId });
      for (const taskId of ids) {
        await waitFor(
          `task ${taskId} to end`,
          async () => {
            const task = await stack.store.get(taskId, PRINCIPAL, Date.now());
            return task !== undefined && isTerminal(task.status);
          },
          10_000,
          50,
        );
      }
    });
  }
});
