/**
 * Hostile and unlucky input (issue 9): every case runs over HTTP against the
 * local stack and through the MCP Lambda handler in-process
 * (`stack.handlers.mcp`), and every task the suite gets accepted must reach a
 * terminal state before it ends. Spec items are cited as "spec N"
 * (spec/tasks-extension.md); issue items as "item N".
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createMcpHandler } from '../../functions/mcp/app.ts';
import { startLocalStack, type LocalStack } from '../../infra/local/stack.ts';
import { localTools } from '../../infra/local/tools.ts';
import type { LogEvent } from '../../shared/log.ts';
import {
  MAX_ANSWER_BYTES,
  MAX_ANSWERS_BYTES,
  MAX_ARGUMENTS_BYTES,
  MAX_CAPABILITIES_BYTES,
  MAX_REQUEST_STATE_BYTES,
  MAX_TASK_ID_LENGTH,
} from '../../shared/tasks/limits.ts';
import { isTerminal } from '../../shared/tasks/model.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { parseMessages, requestMeta, rpc, TASKS_CAPABILITIES, type JsonRpcMessage, type RpcOptions } from '../support/mcp-http.ts';
import { principalFor } from '../../shared/auth/principal.ts';

const PRINCIPAL = 'local';

/** A response as both wires give it back. */
interface Reply {
  status: number;
  body: JsonRpcMessage | undefined;
  text: string;
}

/** One way into the endpoint: `http` (the local HTTP adapter) or `lambda` (the handler, in-process). */
interface Wire {
  name: 'http' | 'lambda';
  call(method: string, params?: Record<string, unknown>, options?: RpcOptions & { principal?: string }): Promise<Reply>;
}

let nextId = 1;

/** The HTTP API event the MCP function receives for this request. */
function lambdaEvent(method: string, params: Record<string, unknown>, options: RpcOptions & { principal?: string } = {}): APIGatewayProxyEventV2 {
  const meta = options.meta === undefined ? requestMeta(options.capabilities ?? TASKS_CAPABILITIES) : options.meta;
  const headers: Record<string, string> = {
    host: '127.0.0.1:3000',
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (method === 'tools/call' && typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
  if (method.startsWith('tasks/') && typeof params['taskId'] === 'string') headers['mcp-name'] = params['taskId'];
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) delete headers[name.toLowerCase()];
    else headers[name.toLowerCase()] = value;
  }
  const body = options.rawBody ?? JSON.stringify({ jsonrpc: '2.0', id: options.id ?? nextId++, method, params: meta === null ? params : { ...params, _meta: meta } });
  return {
    version: '2.0',
    routeKey: 'POST /mcp',
    rawPath: '/mcp',
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      domainName: '127.0.0.1',
      domainPrefix: 'test',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: `req-${nextId}`,
      routeKey: 'POST /mcp',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
      ...(options.principal ? { authorizer: { jwt: { claims: { sub: options.principal }, scopes: [] } } } : {}),
    } as APIGatewayProxyEventV2['requestContext'],
    body,
    isBase64Encoded: false,
  };
}

function wires(stack: () => LocalStack): Wire[] {
  return [
    {
      name: 'http',
      async call(method, params = {}, options = {}) {
        assert.equal(options.principal, undefined, 'the HTTP wire has no authorizer');
        const response = await rpc(stack().url, method, params, options);
        return { status: response.status, body: response.body, text: response.text };
      },
    },
    {
      name: 'lambda',
      async call(method, params = {}, options = {}) {
        const result = (await stack().handlers.mcp(lambdaEvent(method, params, options))) as APIGatewayProxyStructuredResultV2;
        const text = result.body ?? '';
        const contentType = String(result.headers?.['content-type'] ?? '');
        const messages = parseMessages(text, contentType);
        return { status: result.statusCode ?? 200, body: messages.find((m) => 'result' in m || 'error' in m), text };
      },
    },
  ];
}

function errorOf(reply: Reply): { code: number; message: string; data?: unknown } {
  assert.ok(reply.body?.error, `expected a JSON-RPC error, got HTTP ${reply.status}: ${reply.text.slice(0, 500)}`);
  return reply.body.error;
}

function resultOf(reply: Reply): Record<string, unknown> {
  assert.ok(reply.body?.result, `expected a result, got HTTP ${reply.status}: ${reply.text.slice(0, 500)}`);
  return reply.body.result;
}

/** A `-32602` whose message names `limit` (the budget's byte count). */
function assertLimitRefusal(reply: Reply, subject: RegExp, limit: number): void {
  const error = errorOf(reply);
  assert.equal(error.code, -32602, reply.text.slice(0, 300));
  assert.match(error.message, subject);
  assert.match(error.message, new RegExp(`the limit is ${limit} bytes`));
}

const pad = (bytes: number) => 'x'.repeat(bytes);

/** A `tools/list` POSTed with node:http, which (unlike fetch) sends any `Host`; resolves to the status. */
function rawPost(url: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: requestMeta() } });
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: new URL(url).port,
        path: '/mcp',
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/list',
          ...headers,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('hostile and unlucky input (issue 9)', () => {
  let stack: LocalStack;
  let dataDir: string;
  const logs: LogEvent[] = [];
  /** Every task the suite got accepted, with its owner: each must end. */
  const accepted: { taskId: string; owner: string }[] = [];
  /** Task ids whose claim the decorated store refuses with AccessDenied. */
  const deniedClaims = new Set<string>();
  /** Labels whose task creation throws raw exception text. */
  const boom = new Map<string, Error>();

  const decorateStore = (store: TaskStore): TaskStore => {
    const overrides: Partial<TaskStore> = {
      claim: (taskId, ...rest) => {
        if (deniedClaims.has(taskId)) {
          const error = new Error('User is not authorized to perform: dynamodb:UpdateItem');
          error.name = 'AccessDeniedException';
          return Promise.reject(error);
        }
        return store.claim(taskId, ...rest);
      },
      create: (task, options) => {
        const label = (task.arguments as { label?: unknown }).label;
        const error = typeof label === 'string' ? boom.get(label) : undefined;
        return error ? Promise.reject(error) : store.create(task, options);
      },
    };
    return new Proxy(store, {
      get(target, property, receiver) {
        if (property in overrides) return overrides[property as keyof TaskStore];
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };

  const callTask = async (wire: Wire, args: Record<string, unknown>, options: RpcOptions & { principal?: string } = {}) => {
    const result = resultOf(await wire.call('tools/call', { name: 'slow_compute', arguments: args }, options));
    assert.equal(result['resultType'], 'task');
    const taskId = String(result['taskId']);
    // An authorizer's subject owns its tasks as issuer + subject (the claims here carry no issuer).
    accepted.push({ taskId, owner: options.principal === undefined ? PRINCIPAL : principalFor('', options.principal) });
    return taskId;
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-hostile-'));
    stack = await startLocalStack({
      port: 0,
      dataDir,
      log: (event) => void logs.push(event),
      visibilityTimeoutSeconds: 2,
      maxReceiveCount: 2,
      sweepIntervalMs: 60_000,
      env: { TASKS_TOOLSET: 'all', TASKS_CANCEL_CHECK_MS: '100', TASKS_LEASE_MS: '60000' },
      decorate: { store: decorateStore },
    });
  });

  after(async () => {
    try {
      // Every accepted task ends: cancel what is still running, then check.
      for (const { taskId, owner } of accepted) {
        const task = await stack.store.get(taskId, owner, Date.now());
        if (task && !isTerminal(task.status)) await stack.store.cancel(taskId, owner, Date.now());
      }
      const deadline = Date.now() + 15_000;
      for (const { taskId, owner } of accepted) {
        for (;;) {
          const task = await stack.store.get(taskId, owner, Date.now());
          assert.ok(task, `task ${taskId} vanished`);
          if (isTerminal(task.status)) break;
          assert.ok(Date.now() < deadline, `task ${taskId} is still ${task.status}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      // Nothing sensitive in any log line: no arguments, answers or padding.
      const text = logs.map((line) => JSON.stringify(line)).join('\n');
      assert.doesNotMatch(text, /xxxxxxxxxx|Task id collision|not authorized/);
    } finally {
      await stack?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  for (const wire of wires(() => stack)) {
    describe(`over ${wire.name}`, () => {
      // --- item 1: size budgets at the door --------------------------------
      it('item 1: refuses arguments over their budget with -32602 naming the limit, before anything is written', async () => {
        const created = logs.filter((line) => line.event === 'task-created').length;
        assertLimitRefusal(await wire.call('tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: pad(409_244) } }), /^arguments/, MAX_ARGUMENTS_BYTES);
        assertLimitRefusal(await wire.call('tools/call', { name: 'greet', arguments: { name: pad(MAX_ARGUMENTS_BYTES) } }), /^arguments/, MAX_ARGUMENTS_BYTES);
        assert.equal(logs.filter((line) => line.event === 'task-created').length, created);
      });

      it('item 1: refuses client capabilities over their budget', async () => {
        const capabilities = { ...TASKS_CAPABILITIES, experimental: { padding: { data: pad(MAX_CAPABILITIES_BYTES) } } };
        assertLimitRefusal(await wire.call('tools/call', { name: 'slow_compute', arguments: { seconds: 1 } }, { capabilities }), /^clientCapabilities/, MAX_CAPABILITIES_BYTES);
      });

      it('item 1: refuses answers over the per-key and per-task budgets (tasks/update and inline), and a 3 MB answer (item 5)', async () => {
        const taskResult = resultOf(await wire.call('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } }));
        const taskId = String(taskResult['taskId']);
        accepted.push({ taskId, owner: PRINCIPAL });
        const big = { action: 'accept', content: { confirm: true, note: pad(MAX_ANSWER_BYTES) } };
        assertLimitRefusal(await wire.call('tasks/update', { taskId, inputResponses: { confirm: big } }), /^inputResponses\["confirm"\]/, MAX_ANSWER_BYTES);
        const many = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`k${i}`, { action: 'accept', content: { note: pad(50 * 1024) } }]));
        assertLimitRefusal(await wire.call('tasks/update', { taskId, inputResponses: many }), /^inputResponses is/, MAX_ANSWERS_BYTES);
        const huge = await wire.call('tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { note: pad(3 * 1024 * 1024) } } } });
        assert.equal(errorOf(huge).code, -32602);
        assertLimitRefusal(
          await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, inputResponses: { value: big } }),
          /^inputResponses\["value"\]/,
          MAX_ANSWER_BYTES,
        );
      });

      it('item 1: refuses answers that would take all of a task\'s answers over the per-task budget', async () => {
        const taskId = String(resultOf(await wire.call('tools/call', { name: 'multi_input', arguments: {} }))['taskId']);
        accepted.push({ taskId, owner: PRINCIPAL });
        /** An answer of exactly MAX_ANSWER_BYTES serialised bytes. */
        const full = (field: string) => {
          const empty = JSON.stringify({ action: 'accept', content: { [field]: '' } }).length;
          return { action: 'accept', content: { [field]: pad(MAX_ANSWER_BYTES - empty) } };
        };
        const deadline = Date.now() + 10_000;
        while ((await stack.store.get(taskId, PRINCIPAL, Date.now()))?.status !== 'input_required') {
          assert.ok(Date.now() < deadline, 'the task never asked');
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        assert.equal(resultOf(await wire.call('tasks/update', { taskId, inputResponses: { name: full('name') } }))['resultType'], 'complete');
        assertLimitRefusal(await wire.call('tasks/update', { taskId, inputResponses: { color: full('color') } }), /^inputResponses \(all answers of the task\)/, MAX_ANSWERS_BYTES);
        assert.equal((await stack.store.get(taskId, PRINCIPAL, Date.now()))?.status, 'input_required');
      });

      it('item 1: refuses a requestState over its budget', async () => {
        const reply = await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, requestState: `v1.${pad(MAX_REQUEST_STATE_BYTES)}.x` });
        const error = errorOf(reply);
        assert.equal(error.code, -32602);
        assert.match(error.message, new RegExp(`requestState is over its limit of ${MAX_REQUEST_STATE_BYTES} bytes`));
      });

      // --- item 3: sealed requestState --------------------------------------
      it('item 3: a tampered requestState is refused with -32602; answers to keys never issued are ignored', async () => {
        const first = resultOf(await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {} }));
        assert.equal(first['resultType'], 'input_required');
        const state = String(first['requestState']);
        assert.match(state, /^v1\./);
        const answer = { value: { action: 'accept', content: { value: 'hello' } } };

        for (const forged of [`${state}-TAMPERED`, Buffer.from(JSON.stringify(answer)).toString('base64url')]) {
          const error = errorOf(await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, inputResponses: answer, requestState: forged }));
          assert.equal(error.code, -32602);
          assert.equal(error.message, 'Invalid or expired requestState');
        }
        // State minted for one tool does not open for another.
        const other = errorOf(await wire.call('tools/call', { name: 'test_input_required_result_tampered_state', arguments: {}, inputResponses: { confirm: answer.value }, requestState: state }));
        assert.equal(other.code, -32602);

        // Without the state the key was never issued: the tool asks again instead of answering.
        const unasked = resultOf(await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, inputResponses: answer }));
        assert.equal(unasked['resultType'], 'input_required');
        // A prepare question cannot be skipped by answering it unasked (no task is created).
        const skipped = resultOf(await wire.call('tools/call', { name: 'test_tool_with_task', arguments: {}, inputResponses: { user_name: { action: 'accept', content: { name: 'Eve' } } } }));
        assert.equal(skipped['resultType'], 'input_required');

        const done = resultOf(await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {}, inputResponses: answer, requestState: state }));
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
          assert.equal(await rawPost(stack.url, { Host: 'evil.example' }), 403);
          assert.equal(await rawPost(stack.url, { Host: `evil.example:${new URL(stack.url).port}` }), 403);
          assert.equal(await rawPost(stack.url, { Host: `localhost:${new URL(stack.url).port}` }), 200);
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
        const deadline = Date.now() + 10_000;
        while ((await stack.store.get(taskId, PRINCIPAL, Date.now()))?.lease === undefined) {
          assert.ok(Date.now() < deadline, 'the task was never claimed');
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        const replies = await Promise.all(Array.from({ length: 20 }, () => wire.call('tasks/cancel', { taskId })));
        for (const reply of replies) assert.deepEqual(resultOf(reply), resultOf(replies[0]!), reply.text);
        for (;;) {
          const task = await stack.store.get(taskId, PRINCIPAL, Date.now());
          if (task?.status === 'cancelled') break;
          assert.ok(Date.now() < deadline + 10_000, `still ${task?.status}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      });
    });
  }

  // --- the Lambda wire only: principals and event adapter ----------------------
  const lambda = () => wires(() => stack)[1]!;

  it("item 6: no error reveals another principal's task id (spec 41, 42, 56)", async () => {
    const taskId = await callTask(lambda(), { seconds: 30 }, { principal: 'alice' });
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update'] as const) {
      const reply = await lambda().call(method, { taskId, ...(method === 'tasks/update' ? { inputResponses: { confirm: { action: 'accept' } } } : {}) }, { principal: 'mallory' });
      assert.deepEqual(errorOf(reply), { code: -32602, message: 'Task not found' });
      assert.ok(!reply.text.includes(taskId));
    }
    assert.equal(resultOf(await lambda().call('tasks/cancel', { taskId }, { principal: 'alice' }))['resultType'], 'complete');
  });

  it('item 5: a malformed Host header gets a clean 400 from the event adapter, over HTTP too', async () => {
    for (const host of ['a b', '[', '%zz']) {
      const result = (await stack.handlers.mcp(lambdaEvent('tools/list', {}, { headers: { host } }))) as APIGatewayProxyStructuredResultV2;
      assert.equal(result.statusCode, 400, `${host}: ${result.body}`);
      assert.equal(await rawPost(stack.url, { Host: host }), 400, `HTTP with Host ${host}`);
    }
  });

  it('item 4: deployed, Origin is checked against the allowed-origins setting (absent Origin allowed)', async () => {
    const deployed = createMcpHandler({
      config: { ...stack.config, allowedOrigins: ['https://app.example.com'] },
      store: stack.store,
      queue: stack.queue,
      tools: localTools('all'),
      log: () => {},
      requestStateKey: async () => randomBytes(32),
    });
    const status = async (headers: Record<string, string | undefined>) =>
      ((await deployed(lambdaEvent('tools/list', {}, { headers: { host: 'abc.execute-api.us-east-1.amazonaws.com', ...headers } }))) as APIGatewayProxyStructuredResultV2).statusCode;
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
    await stack.queue.send({ taskId, reason: 'start' });
    const deadline = Date.now() + 10_000;
    let line: LogEvent | undefined;
    while (!(line = logs.find((l) => l.event === 'claim-failed' && l['taskId'] === taskId))) {
      assert.ok(Date.now() < deadline, 'no claim-failed line');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(line['error'], 'AccessDeniedException');
    deniedClaims.delete(taskId);
  });

  // --- item 1: rows at the limit end ------------------------------------------
  /** A task row as close to DynamoDB's item limit as the store will write (the door never allows one). */
  async function taskAtTheLimit(): Promise<string> {
    for (let size = 409_500; size > 400_000; size -= 16) {
      const taskId = crypto.randomUUID();
      try {
        await stack.store.create({
          taskId,
          owner: PRINCIPAL,
          tool: 'slow_compute',
          arguments: { seconds: 1, label: pad(size) },
          clientCapabilities: TASKS_CAPABILITIES,
          inputResponses: {},
          now: Date.now(),
          ttlMs: 3_600_000,
          pollIntervalMs: 1000,
        });
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
    await stack.queue.send({ taskId, reason: 'start' });
    const deadline = Date.now() + 15_000;
    for (;;) {
      const task = await stack.store.get(taskId, PRINCIPAL, Date.now());
      if (task && isTerminal(task.status)) {
        assert.equal(task.status, 'failed');
        assert.match(task.statusMessage ?? '', /size limit/);
        assert.match(task.statusMessage ?? '', /arguments and answers were removed/);
        assert.deepEqual(task.arguments, {});
        break;
      }
      assert.ok(Date.now() < deadline, `still ${task?.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(logs.some((l) => l.event === 'claim-failed' && l['taskId'] === taskId && l['error'] === 'TaskRowRejectedError'));
  });

  it('item 1: the dead-letter handler ends a task at the size limit failed, slimming its row', async () => {
    const taskId = await taskAtTheLimit();
    const body = JSON.stringify({ taskId, reason: 'start' });
    const record = { messageId: `m-${taskId}`, body, receiptHandle: 'r', attributes: {}, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:dlq', awsRegion: 'us-east-1' };
    const response = await stack.handlers.deadLetter({ Records: [record as never] });
    assert.deepEqual(response.batchItemFailures, []);
    const task = await stack.store.get(taskId, PRINCIPAL, Date.now());
    assert.equal(task?.status, 'failed');
    assert.match(task?.statusMessage ?? '', /size limit.*arguments and answers were removed/);
  });

  for (const wire of wires(() => stack)) {
    // Spec 32: tasks/cancel is acknowledged whatever the task's size.
    it(`item 1: tasks/cancel works on a task at the size limit (over ${wire.name})`, async () => {
      const taskId = await taskAtTheLimit();
      assert.equal(resultOf(await wire.call('tasks/cancel', { taskId }))['resultType'], 'complete');
      const task = await stack.store.get(taskId, PRINCIPAL, Date.now());
      assert.equal(task?.status, 'cancelled');
      assert.match(task?.statusMessage ?? '', /arguments and answers were removed/);
    });
  }
});

describe('optional cap on unfinished tasks per principal (issue 9, item 6)', () => {
  let stack: LocalStack;
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-cap-'));
    stack = await startLocalStack({ port: 0, dataDir, log: () => {}, env: { TASKS_TOOLSET: 'all', TASKS_MAX_UNFINISHED_TASKS: '2', TASKS_CANCEL_CHECK_MS: '100' } });
  });
  after(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  for (const wire of wires(() => stack)) {
    it(`refuses a third unfinished task with a clear error until one ends (over ${wire.name})`, async () => {
      const start = async () => wire.call('tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
      const ids = [resultOf(await start())['taskId'], resultOf(await start())['taskId']].map(String);
      const refused = errorOf(await start());
      assert.equal(refused.code, -32602);
      assert.match(refused.message, /Too many unfinished tasks: the limit is 2 per principal/);
      assert.deepEqual(refused.data, { reason: 'unfinished-task-limit', limit: 2 });
      // Another principal is not affected.
      const other = await stack.handlers.mcp(lambdaEvent('tools/call', { name: 'slow_compute', arguments: { seconds: 0.2 } }, { principal: 'bob' }));
      assert.match(JSON.stringify(other), /resultType\\":\\"task/);
      assert.equal(resultOf(await wire.call('tasks/cancel', { taskId: ids[0] }))['resultType'], 'complete');
      const deadline = Date.now() + 10_000;
      let third: Reply;
      while ((third = await start()).body?.error) {
        assert.ok(Date.now() < deadline, 'the slot was never freed');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      ids.push(String(resultOf(third)['taskId']));
      // Every task started here ends.
      for (const taskId of ids) await wire.call('tasks/cancel', { taskId });
      for (const taskId of ids) {
        for (;;) {
          const task = await stack.store.get(taskId, PRINCIPAL, Date.now());
          if (task && isTerminal(task.status)) break;
          assert.ok(Date.now() < deadline + 10_000);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    });
  }
});

describe('size budgets against the row they protect (issue 9, item 1)', () => {
  it('a task with every client-controlled part at its budget fits a row, through claim, a question and its end', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { startDynalite, ensureTaskTable } = await import('../../infra/local/dynamodb.ts');
    const { DynamoDbTaskStore, taskRowBytes } = await import('../../shared/tasks/dynamodb-store.ts');
    const { DYNAMODB_ITEM_LIMIT_BYTES, jsonBytes } = await import('../../shared/tasks/limits.ts');
    const dynamo = await startDynalite({});
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    try {
      await ensureTaskTable(client, 'tasks');
      const store = new DynamoDbTaskStore({ client, tableName: 'tasks', policy: { sweepGraceMs: 60_000, leaseMs: 300_000, retentionMs: 3_600_000, stepRetentionMs: 86_400_000 } });
      /** A JSON object of exactly `bytes` serialised bytes. */
      const filled = (bytes: number) => ({ p: pad(bytes - jsonBytes({ p: '' })) });
      const answers = { a: filled(MAX_ANSWER_BYTES - 8), b: filled(MAX_ANSWERS_BYTES - MAX_ANSWER_BYTES - 64) };
      assert.ok(jsonBytes(answers) <= MAX_ANSWERS_BYTES);
      const taskId = crypto.randomUUID();
      const owner = `https://issuer.example.com/#${pad(200)}`;
      const { task } = await store.create({
        taskId,
        owner,
        tool: 'approval_gate',
        arguments: filled(MAX_ARGUMENTS_BYTES),
        clientCapabilities: filled(MAX_CAPABILITIES_BYTES),
        inputResponses: answers,
        now: Date.now(),
        ttlMs: 3_600_000,
        pollIntervalMs: 1000,
      });
      const created = taskRowBytes(task);
      const claimed = await store.claim(taskId, crypto.randomUUID(), Date.now(), 300_000);
      assert.ok(claimed);
      const question = { method: 'elicitation/create' as const, params: { message: pad(2000), requestedSchema: { type: 'object', properties: {} } } };
      const waiting = await store.finish(claimed, claimed.lease!.owner, { status: 'input_required', inputRequests: { c: question } }, Date.now());
      const failed = await store.cancel(taskId, owner, Date.now());
      assert.equal(failed, 'cancelled');
      const ended = await store.get(taskId, owner, Date.now());
      const measured = { created, waiting: taskRowBytes(waiting), ended: taskRowBytes(ended!) };
      console.log(`measured row sizes with every budget at its maximum: ${JSON.stringify(measured)} (limit ${DYNAMODB_ITEM_LIMIT_BYTES})`);
      for (const size of Object.values(measured)) assert.ok(size < DYNAMODB_ITEM_LIMIT_BYTES - 100 * 1024, `${size} leaves under 100 KiB for the row's own fields`);
    } finally {
      client.destroy();
      await dynamo.close();
    }
  });
});
