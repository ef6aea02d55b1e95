/**
 * The wire contract of the Tasks extension against the local stack
 * (`startLocalStack`, what `npm start` runs: dynalite + fauxqs + HTTP adapter
 * + SQS poller), started once in process for the whole file. Most cases hand
 * their request to the MCP function as the API Gateway event it would get
 * (`throughHandler`: no HTTP hop); the ones about HTTP itself — the adapter's
 * answer and headers, a body that does not parse, the 413 for a large body,
 * a streamed response — go over real HTTP to the stack's adapter.
 *
 * Every task-method response is validated against the extension's own
 * schemas (`@modelcontextprotocol/ext-tasks/core/v2`); test names cite the
 * numbered requirements of `docs/spec-requirements.md`.
 *
 * Not covered here: a task created by one principal being invisible to
 * another (items 56, 41): `test/integration/identity.test.ts` checks it with
 * authorizer claims, and the task store contract suite checks that foreign
 * tasks read as not found.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { assertValid } from '../support/schemas.ts';
import {
  errorOf,
  getTask,
  LEGACY_TASKS_ONLY,
  NO_CAPABILITIES,
  PROTOCOL_VERSION,
  pollUntil,
  type RpcTarget,
  requestMeta,
  resultOf,
  rpc,
  TASKS_EXTENSION,
  throughHandler,
  wireHelpers,
} from '../support/wire.ts';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** Keys a `CreateTaskResult` must never carry (spec §1.4, §1.6, §1.7; legacy names from §10). */
const NOT_ON_CREATE = ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval'];

let stack: LocalStack | undefined;
let dataDir: string | undefined;
/** The MCP function, called in process. */
let mcp: RpcTarget;
/** The stack's HTTP adapter, `http://127.0.0.1:<port>/mcp`, for the cases about HTTP itself. */
let httpUrl: string;

const { callTool, createTask, callSync, cancelTask, assertError, assertMissingTasksCapability, terminal, textOf, assertUnguessableId } =
  wireHelpers(() => mcp);

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-wire-'));
  // A fresh data directory, removed after; otherwise the settings `npm start` uses.
  stack = await startLocalStack({ port: 0, dataDir, log: () => {}, env: { TASKS_TOOLSET: 'all' } });
  mcp = throughHandler(stack.handlers.mcp);
  httpUrl = stack.url;
});

after(async () => {
  await stack?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------

describe('discovery', () => {
  it('item 62, §5.1: server/discover advertises the tasks extension and no legacy capabilities.tasks', async () => {
    // Over HTTP: the adapter's answer is JSON.
    const response = await rpc(httpUrl, 'server/discover', {}, { capabilities: NO_CAPABILITIES });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const result = resultOf(response);
    assert.equal(result['resultType'], 'complete');
    assert.ok((result['supportedVersions'] as string[]).includes(PROTOCOL_VERSION));
    const capabilities = result['capabilities'] as Record<string, unknown>;
    assert.deepEqual((capabilities['extensions'] as Record<string, unknown>)[TASKS_EXTENSION], {});
    assert.ok(!('tasks' in capabilities), 'no legacy capabilities.tasks');
    assert.ok(capabilities['tools'], 'tools are advertised');
  });

  it('tools/list lists the product and fixture tools, each with an object JSON Schema and no legacy taskSupport', async () => {
    const result = resultOf(await rpc(mcp, 'tools/list', {}));
    const tools = result['tools'] as Array<Record<string, unknown> & { name: string; inputSchema: Record<string, unknown> }>;
    for (const tool of tools) {
      assertValid('Tool', tool);
      assert.equal(tool.inputSchema['type'], 'object', tool.name);
      assert.ok(!('execution' in tool), `${tool.name}: no execution.taskSupport in the 2026-07-28 Tool`);
    }
    const names = tools.map((tool) => tool.name);
    for (const name of [
      'batch_process',
      'approval_gate',
      'greet',
      'slow_compute',
      'failing_job',
      'protocol_error_job',
      'confirm_delete',
      'multi_input',
      'test_tool_with_task',
      'test_missing_capability',
      'test_streaming_elicitation',
      'test_logging_tool',
    ]) {
      assert.ok(names.includes(name), `tools/list includes ${name}`);
    }
    const batch = tools.find((tool) => tool.name === 'batch_process')!;
    const properties = batch.inputSchema['properties'] as Record<string, { type?: string }>;
    assert.equal(properties['items']?.type, 'array');
    assert.deepEqual(batch.inputSchema['required'], ['items']);
  });
});

describe('tools/call', () => {
  it('item 5: a synchronous tool (greet) answers resultType "complete", never a task', async () => {
    const result = await callSync('greet', { name: 'Ada' });
    assert.equal(textOf(result), 'Hello, Ada!');
  });

  it('items 1, 4, 11, 55: an optional tool with the extension declared answers a flat CreateTaskResult, readable at once by tasks/get', async () => {
    const created = await createTask('slow_compute', { seconds: 60, label: 'create' });
    try {
      for (const key of NOT_ON_CREATE) assert.ok(!Object.hasOwn(created, key), `CreateTaskResult must not carry ${key}`);
      assert.equal(created['status'], 'working');
      for (const key of ['createdAt', 'lastUpdatedAt']) {
        const value = created[key] as string;
        assert.match(value, ISO_8601, key);
        assert.ok(!Number.isNaN(Date.parse(value)), key);
      }
      assert.ok(Number.isSafeInteger(created['ttlMs']) && (created['ttlMs'] as number) > 0, 'ttlMs is a positive integer');
      assert.ok(
        Number.isSafeInteger(created['pollIntervalMs']) && (created['pollIntervalMs'] as number) > 0,
        'pollIntervalMs is a positive integer',
      );
      assertUnguessableId(created.taskId);

      // Durable before the answer (item 11): no delay, no retry.
      const task = await getTask(mcp, created.taskId);
      assert.equal(task.resultType, 'complete');
      assert.equal(task.taskId, created.taskId);
      assert.equal(task.status, 'working'); // item 16
      assert.equal(task.createdAt, created['createdAt']);
    } finally {
      await cancelTask(created.taskId);
    }
  });

  it('item 55: every task gets a fresh id', async () => {
    const ids = await Promise.all([1, 2, 3].map(async () => (await createTask('failing_job')).taskId));
    assert.equal(new Set(ids).size, 3);
  });

  it('item 2, §5.4: without the extension an optional tool runs synchronously (slow_compute seconds 0)', async () => {
    const result = await callSync('slow_compute', { seconds: 0, label: 'sync' }, { capabilities: NO_CAPABILITIES });
    assert.match(textOf(result), /Computed sync after 0s/);
  });

  it('item 2: without the extension a call that would have become a task still runs synchronously (seconds 1)', async () => {
    const result = await callSync('slow_compute', { seconds: 1, label: 'sync-1' }, { capabilities: NO_CAPABILITIES });
    assert.match(textOf(result), /Computed sync-1 after 1s/);
  });

  it('item 3: a task-only tool (failing_job) without the extension → -32021 naming the extension, HTTP 400', async () => {
    assertMissingTasksCapability(await callTool('failing_job', {}, { capabilities: NO_CAPABILITIES }));
  });

  it('items 2, 85: the extension declared on an earlier request does not carry over to the next', async () => {
    await createTask('failing_job');
    assertMissingTasksCapability(await callTool('failing_job', {}, { capabilities: { elicitation: {} } }));
  });

  it('item 58: a client declaring only the legacy tasks capability is non-declaring', async () => {
    assertMissingTasksCapability(await callTool('failing_job', {}, { capabilities: LEGACY_TASKS_ONLY }));
    await callSync('slow_compute', { seconds: 0 }, { capabilities: LEGACY_TASKS_ONLY });
  });

  it('item 84: a tool needing sampling the client did not declare → -32021 with requiredCapabilities.sampling, HTTP 400', async () => {
    const error = assertError(await callTool('test_missing_capability', {}, { capabilities: NO_CAPABILITIES }), -32021, 400);
    assert.deepEqual((error.data as { requiredCapabilities?: unknown }).requiredCapabilities, { sampling: {} });
  });

  it('an unknown tool → JSON-RPC error -32602 naming the tool', async () => {
    const error = assertError(await callTool('no_such_tool', {}), -32602);
    assert.match(error.message, /no_such_tool/);
  });

  it('invalid arguments → a tool result with isError, not a task and not a protocol error', async () => {
    const optional = await callSync('slow_compute', { seconds: 'soon' });
    assert.equal(optional.isError, true);
    assert.match(textOf(optional), /seconds/);
    const taskOnly = await callSync('confirm_delete', { filename: 42 });
    assert.equal(taskOnly.isError, true);
    assert.match(textOf(taskOnly), /filename/);
  });

  it('item 61: the legacy params.task is ignored, never an opt-in', async () => {
    const legacy = { task: { ttl: 60_000, pollInterval: 100 } };
    const greet = await callSync('greet', { name: 'legacy-hint' }, {}, legacy);
    assert.equal(textOf(greet), 'Hello, legacy-hint!');
    // Without the extension, params.task does not turn a call into a task…
    await callSync('slow_compute', { seconds: 0 }, { capabilities: NO_CAPABILITIES }, legacy);
    assertMissingTasksCapability(await callTool('failing_job', {}, { capabilities: NO_CAPABILITIES }, legacy));
    // …and with it, the task carries none of the legacy field names.
    const response = await callTool('failing_job', {}, {}, legacy);
    const created = resultOf(response);
    assertValid('CreateTaskResult', created);
    for (const key of NOT_ON_CREATE) assert.ok(!Object.hasOwn(created, key), key);
  });

  it('item 13: test_tool_with_task gathers input through a multi-round-trip request, then creates the task', async () => {
    const first = resultOf(await callTool('test_tool_with_task', {}));
    assertValid('CallToolResult', first);
    assert.equal(first['resultType'], 'input_required');
    assert.ok(!('taskId' in first), 'no task before the input is gathered');
    const requests = first['inputRequests'] as Record<string, { method: string }>;
    assertValid('InputRequests', requests);
    const [key] = Object.keys(requests);
    assert.ok(key);
    assert.equal(requests[key]!.method, 'elicitation/create');

    const second = await callTool(
      'test_tool_with_task',
      {},
      {},
      {
        inputResponses: { [key]: { action: 'accept', content: { name: 'Alice' } } },
        ...(first['requestState'] === undefined ? {} : { requestState: first['requestState'] }),
      },
    );
    const created = resultOf(second);
    assert.equal(created['resultType'], 'task', second.text);
    assertValid('CreateTaskResult', created);
    for (const key of NOT_ON_CREATE) assert.ok(!Object.hasOwn(created, key), key);

    const done = await pollUntil(mcp, created['taskId'] as string, terminal);
    assert.equal(done.status, 'completed');
    assert.match(textOf(done.result), /Alice/);
  });
});

describe('tasks/* gating, routing and errors', () => {
  let realTaskId: string;
  before(async () => {
    // Unvalidated on purpose: these tests are about gating, not about the CreateTaskResult shape.
    realTaskId = resultOf(await callTool('confirm_delete', { filename: 'gating.txt' }))['taskId'] as string;
  });
  after(async () => {
    await cancelTask(realTaskId);
  });

  const calls = (taskId: string): Array<[string, Record<string, unknown>]> => [
    ['tasks/get', { taskId }],
    ['tasks/update', { taskId, inputResponses: {} }],
    ['tasks/cancel', { taskId }],
  ];

  it('item 45: tasks/get, tasks/update and tasks/cancel without the extension on that request → -32021, even for an unknown id', async () => {
    for (const [method, params] of calls('gate-test')) {
      assertMissingTasksCapability(await rpc(mcp, method, params, { capabilities: NO_CAPABILITIES }));
    }
  });

  it('item 45: … and for a task the same client created with the extension declared', async () => {
    for (const [method, params] of calls(realTaskId)) {
      assertMissingTasksCapability(await rpc(mcp, method, params, { capabilities: { elicitation: {} } }));
      assertMissingTasksCapability(await rpc(mcp, method, params, { capabilities: LEGACY_TASKS_ONLY })); // item 58
    }
    // The refused cancel changed nothing.
    assert.notEqual((await getTask(mcp, realTaskId)).status, 'cancelled');
  });

  it('item 41: tasks/get on an unknown id → -32602', async () => {
    assertError(await rpc(mcp, 'tasks/get', { taskId: 'tasks-conformance-nonexistent-12345' }), -32602);
  });

  it('item 42: tasks/update on an unknown id → -32602', async () => {
    assertError(await rpc(mcp, 'tasks/update', { taskId: 'no-such-task', inputResponses: { confirm: { action: 'accept' } } }), -32602);
  });

  it('item 42: tasks/cancel on an unknown id → -32602', async () => {
    assertError(await rpc(mcp, 'tasks/cancel', { taskId: 'no-such-task' }), -32602);
  });

  it('tasks/get without a taskId and tasks/update without inputResponses → -32602', async () => {
    assertError(await rpc(mcp, 'tasks/get', {}), -32602);
    assertError(await rpc(mcp, 'tasks/update', { taskId: realTaskId }), -32602);
  });

  it('item 60: tasks/result → -32601, HTTP 404', async () => {
    assertError(await rpc(mcp, 'tasks/result', { taskId: realTaskId }), -32601, 404);
    assertError(await rpc(mcp, 'tasks/result', { taskId: realTaskId }, { headers: { 'Mcp-Name': realTaskId } }), -32601, 404);
  });

  it('§10: tasks/list → -32601, HTTP 404', async () => {
    assertError(await rpc(mcp, 'tasks/list', {}), -32601, 404);
  });

  it('item 79: tasks/get without Mcp-Name → -32020, HTTP 400', async () => {
    assertError(await rpc(mcp, 'tasks/get', { taskId: realTaskId }, { headers: { 'Mcp-Name': undefined } }), -32020, 400);
  });

  it('item 79: Mcp-Name not matching params.taskId on tasks/get, tasks/update, tasks/cancel → -32020, HTTP 400', async () => {
    for (const [method, params] of calls(realTaskId)) {
      assertError(await rpc(mcp, method, params, { headers: { 'Mcp-Name': 'sep-2663-wrong-task-id' } }), -32020, 400);
    }
    assert.equal((await getTask(mcp, realTaskId)).taskId, realTaskId, 'the refused cancel changed nothing');
    assert.notEqual((await getTask(mcp, realTaskId)).status, 'cancelled');
  });

  it('item 79: Mcp-Method not matching the body method → -32020, HTTP 400', async () => {
    assertError(await callTool('greet', { name: 'header-mismatch' }, { headers: { 'Mcp-Method': 'tasks/get' } }), -32020, 400);
    assertError(await rpc(mcp, 'tasks/get', { taskId: realTaskId }, { headers: { 'Mcp-Method': undefined } }), -32020, 400);
  });

  it('item 82: a request without _meta → -32602, HTTP 400', async () => {
    assertError(await rpc(mcp, 'tasks/get', { taskId: realTaskId }, { meta: null }), -32602, 400);
    assertError(await callTool('greet', { name: 'x' }, { meta: null }), -32602, 400);
  });

  it('item 82: _meta without clientCapabilities or without protocolVersion → -32602, HTTP 400', async () => {
    const { ['io.modelcontextprotocol/clientCapabilities']: _caps, ...noCapabilities } = requestMeta();
    assertError(await rpc(mcp, 'tasks/get', { taskId: realTaskId }, { meta: noCapabilities }), -32602, 400);
    const { ['io.modelcontextprotocol/protocolVersion']: _version, ...noVersion } = requestMeta();
    assertError(await rpc(mcp, 'tasks/get', { taskId: realTaskId }, { meta: noVersion }), -32602, 400);
  });

  it('an unsupported protocol version → -32022 with data.supported and data.requested, HTTP 400', async () => {
    const error = assertError(await rpc(mcp, 'tasks/get', { taskId: realTaskId }, { protocolVersion: 'v999.0.0' }), -32022, 400);
    const data = error.data as { supported?: string[]; requested?: string };
    assert.ok(data.supported?.includes(PROTOCOL_VERSION));
    assert.equal(data.requested, 'v999.0.0');
  });

  it('MCP-Protocol-Version header differing from _meta, or missing → -32020, HTTP 400', async () => {
    assertError(await rpc(mcp, 'server/discover', {}, { meta: requestMeta(undefined, 'v999.0.0') }), -32020, 400);
    assertError(await rpc(mcp, 'server/discover', {}, { headers: { 'MCP-Protocol-Version': undefined } }), -32020, 400);
  });

  it('a malformed JSON body → -32700 parse error, HTTP 400', async () => {
    const response = await rpc(httpUrl, 'tasks/get', { taskId: realTaskId }, { rawBody: '{"jsonrpc":"2.0","id":1,"method":' });
    assertError(response, -32700, 400);
    assert.equal(response.body?.id, null);
  });

  it("a body over the endpoint's 4 MiB limit (but under the front's 10 MB) → 413 with a JSON-RPC error", async () => {
    const big = 'x'.repeat(5 * 1024 * 1024);
    const message = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'slow_compute', arguments: { seconds: 1, label: big }, _meta: requestMeta() },
    };
    const response = await rpc(httpUrl, 'tools/call', { name: 'slow_compute', arguments: {} }, { rawBody: JSON.stringify(message) });
    assert.equal(response.status, 413, response.text.slice(0, 200));
    assert.equal(errorOf(response).code, -32600);
  });

  it('§5.3: a JSON-RPC batch → -32600 Invalid Request, HTTP 400 (one request per POST)', async () => {
    const message = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: requestMeta() } };
    const response = await rpc(mcp, 'server/discover', {}, { rawBody: JSON.stringify([message]) });
    assert.equal(response.status, 400, response.text);
    const error = errorOf(response);
    assert.equal(error.code, -32600, `expected Invalid Request, got ${response.text}`);
    assert.doesNotMatch(error.message, /Unsupported protocol version/, 'the error must not claim that 2026-07-28 is unsupported');
  });

  it('§5.3: a batch of envelope-less requests under MCP-Protocol-Version 2026-07-28 → -32600 too, not "2026-07-28 unsupported"', async () => {
    const message = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} };
    for (const rawBody of [JSON.stringify([message]), '[]']) {
      const response = await rpc(mcp, 'server/discover', {}, { rawBody });
      assert.equal(response.status, 400, `${rawBody}: ${response.text}`);
      const error = errorOf(response);
      assert.doesNotMatch(error.message, /Unsupported protocol version/, `${rawBody}: the server supports 2026-07-28 (${response.text})`);
      assert.equal(error.code, -32600, `${rawBody}: ${response.text}`);
    }
  });

  it('a body that is not a JSON object → -32600 Invalid Request, HTTP 400', async () => {
    for (const rawBody of ['42', '"tasks/get"', 'null']) {
      const response = await rpc(mcp, 'server/discover', {}, { rawBody });
      assert.equal(response.status, 400, `${rawBody}: ${response.text}`);
      assert.equal(errorOf(response).code, -32600, `${rawBody}: ${response.text}`);
    }
  });

  it('an unknown method → -32601, HTTP 404', async () => {
    assertError(await rpc(mcp, 'unknown/method', {}), -32601, 404);
  });
});
