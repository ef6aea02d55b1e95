/**
 * End to end with real MCP clients against the local stack (HTTP front,
 * dynalite, fauxqs, SQS poller and worker: `bin/local/main.ts`):
 *
 * - the MCP TypeScript SDK v2 client (`@modelcontextprotocol/client`),
 *   pinned to 2026-07-28 and declaring the Tasks extension;
 * - `@modelcontextprotocol/ext-tasks`' requester session on top of it, an
 *   independent implementation of the requester side (polling, input
 *   answering, cancellation);
 * - the same SDK client in its default 2025-era mode, and a hand-written
 *   2025-11-25 client, which must still get synchronous tool results.
 *
 * Every task-method response is also read off the wire and validated against
 * `@modelcontextprotocol/ext-tasks/core/v2` (see `../support/clients.ts`).
 */
import assert, { AssertionError } from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProtocolError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { ApplicationElicitResult, SerializedTaskReference } from '@modelcontextprotocol/ext-tasks/client';
import {
  assertMcpName,
  connectExtTasksSession,
  connectSdkClient,
  type ExtTasksConnection,
  LEGACY_PROTOCOL_VERSION,
  rawResult,
  type SdkConnection,
  SdkTasks,
  type WireRecorder,
} from '../support/clients.ts';
import { CANCEL_SETTLES_MS, type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { assertValid } from '../support/schemas.ts';
import { sleep } from '../support/wait.ts';
import { PROTOCOL_VERSION, parseMessages, TASKS_EXTENSION } from '../support/wire.ts';

/** How long an ext-tasks execution may take to settle before the test explains why not. */
const SETTLE_TIMEOUT_MS = 15_000;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** Keys a CreateTaskResult must not carry (spec §1.4). */
const NOT_ON_CREATE = ['result', 'error', 'inputRequests', 'requestState'];
/** Keys an empty ack must not carry (spec §1.6, §1.7). */
const NOT_ON_ACK = ['taskId', 'status', 'result', 'error', 'inputRequests'];

let stack: LocalStackProcess;

before(async () => {
  // The settings `npm start` uses.
  stack = await startLocalStackProcess({ env: { TASKS_TOOLSET: 'all' } });
});

after(async () => {
  await stack?.stop();
});

function textOf(result: unknown): string {
  const blocks = (result as { content?: unknown } | undefined)?.content;
  const content = Array.isArray(blocks) ? (blocks as Array<{ type?: string; text?: string }>) : [];
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
}

function assertAbsent(value: Record<string, unknown>, keys: string[], what: string): void {
  for (const key of keys) assert.equal(key in value, false, `${what} must not carry "${key}": ${JSON.stringify(value)}`);
}

/** Every recorded `tasks/*` exchange for `taskId`: Mcp-Name set, raw result valid for its method. */
function assertTaskTraffic(wire: WireRecorder, taskId: string): void {
  const schemaFor = { 'tasks/get': 'GetTaskResult', 'tasks/update': 'UpdateTaskResult', 'tasks/cancel': 'CancelTaskResult' } as const;
  for (const [method, schema] of Object.entries(schemaFor)) {
    for (const exchange of wire.requests(method, taskId)) {
      assertMcpName(exchange, taskId);
      assert.equal(exchange.headers.get('mcp-method'), method);
      assert.equal(exchange.headers.get('mcp-protocol-version'), PROTOCOL_VERSION);
      assertValid(schema, rawResult(exchange));
    }
  }
}

describe('MCP TypeScript SDK v2 client (2026-07-28)', () => {
  let connection: SdkConnection;
  let tasks: SdkTasks;

  before(async () => {
    connection = await connectSdkClient(stack.url, 'modern');
    tasks = new SdkTasks(connection, () => `stack log (tail):\n${stack.output().split('\n').slice(-30).join('\n')}`);
  });

  after(async () => {
    await connection?.close();
  });

  it('negotiates 2026-07-28 through server/discover, sees the Tasks extension and lists the tools', async () => {
    assert.equal(connection.client.getProtocolEra(), 'modern');
    assert.equal(connection.client.getNegotiatedProtocolVersion(), PROTOCOL_VERSION);
    assert.deepEqual(connection.client.getServerCapabilities()?.extensions?.[TASKS_EXTENSION], {});

    const { tools } = await connection.client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of ['slow_compute', 'confirm_delete', 'multi_input', 'batch_process', 'approval_gate'])
      assert.ok(names.includes(name), `missing ${name} in ${names.join(', ')}`);
    const listed = rawResult(connection.wire.last('tools/list'));
    for (const tool of listed['tools'] as unknown[]) assertValid('Tool', tool);
  });

  it('synchronous tools (greet, slow_compute {seconds: 0}) answer inline with a plain CallToolResult', async () => {
    for (const [name, args, text] of [
      ['greet', { name: 'Ada' }, 'Hello, Ada!'],
      ['slow_compute', { seconds: 0 }, 'Computed result after 0s'],
    ] as const) {
      const outcome = await tasks.callTool(name, args);
      assert.equal(outcome.kind, 'result', `${name}: ${JSON.stringify(outcome)}`);
      if (outcome.kind !== 'result') continue;
      assert.equal(textOf(outcome.result), text);
      const raw = rawResult(connection.wire.last('tools/call', (exchange) => exchange.request?.params?.['name'] === name));
      assert.equal(raw['resultType'], 'complete');
      assertValid('CallToolResult', raw);
    }
  });

  it('confirm_delete: CreateTaskResult → working → input_required → tasks/update → completed', { timeout: 30_000 }, async () => {
    const outcome = await tasks.callTool('confirm_delete', { filename: 'report.txt' });
    assert.equal(outcome.kind, 'task', `expected a task, got ${JSON.stringify(outcome)}`);
    if (outcome.kind !== 'task') return;
    // SDK 2.4.0 does not surface CreateTaskResult: callTool rejects, and the handle is read off the wire.
    assert.equal(outcome.sdkError.code, SdkErrorCode.UnsupportedResultType);
    assert.deepEqual(outcome.sdkError.data, { resultType: 'task', method: 'tools/call' });
    const created = outcome.created;
    assert.equal(created['resultType'], 'task');
    assertAbsent(created, NOT_ON_CREATE, 'CreateTaskResult');
    const taskId = created['taskId'] as string;

    // The SDK sent the envelope with our capabilities and the standard headers.
    const call = connection.wire.last('tools/call', (exchange) => exchange.response?.result?.['taskId'] === taskId);
    assert.equal(call.headers.get('mcp-name'), 'confirm_delete');
    const meta = call.request?.params?.['_meta'] as Record<string, unknown>;
    assert.deepEqual(meta['io.modelcontextprotocol/clientCapabilities'], { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } });

    // Poll (honouring pollIntervalMs) until the worker asks for confirmation.
    const waiting = await tasks.pollUntil(taskId, (task) => task.status !== 'working', {
      timeoutMs: 15_000,
      firstDelayMs: created['pollIntervalMs'] as number,
    });
    assert.equal(waiting.task.status, 'input_required', `statuses: ${waiting.statuses.join(' → ')}`);
    assert.ok(created['status'] === 'working' || waiting.statuses.includes('working'), 'working was never observed');
    if (waiting.task.status !== 'input_required') return;
    const requests = waiting.task.inputRequests;
    assert.deepEqual(Object.keys(requests), ['confirm']);
    const request = requests['confirm']!;
    assert.equal(request.method, 'elicitation/create');
    assert.match(JSON.stringify(request.params), /Delete report\.txt\?/);

    const ack = await tasks.update(taskId, { confirm: { action: 'accept', content: { confirm: true } } });
    assert.equal(ack['resultType'], 'complete');
    assertAbsent(ack, NOT_ON_ACK, 'tasks/update ack');

    const done = await tasks.pollUntil(taskId, (task) => TERMINAL.has(task.status), { timeoutMs: 15_000 });
    assert.equal(done.task.status, 'completed', `statuses: ${done.statuses.join(' → ')}; last: ${JSON.stringify(done.raw)}`);
    if (done.task.status !== 'completed') return;
    assert.equal(done.task.result['isError'] ?? false, false);
    assert.match(textOf(done.task.result), /Deleted report\.txt/);
    assertValid('CallToolResult', done.task.result);
    assertTaskTraffic(connection.wire, taskId);
  });

  it('slow_compute {seconds: 30}: tasks/cancel while it runs → empty ack → cancelled within seconds', { timeout: 30_000 }, async () => {
    const outcome = await tasks.callTool('slow_compute', { seconds: 30, label: 'cancel-me' });
    assert.equal(outcome.kind, 'task', `expected a task, got ${JSON.stringify(outcome)}`);
    if (outcome.kind !== 'task') return;
    const taskId = outcome.created['taskId'] as string;

    // Let the worker pick it up (~1 s, polling at the advertised interval); it stays working meanwhile.
    const seen: string[] = [];
    let interval = outcome.created['pollIntervalMs'] as number;
    for (const until = Date.now() + 1_000; Date.now() < until; ) {
      await sleep(interval);
      const { task } = await tasks.get(taskId);
      seen.push(task.status);
      interval = task.pollIntervalMs ?? interval;
    }
    assert.ok(seen.length > 0 && seen.every((status) => status === 'working'), `statuses before cancel: ${seen.join(', ')}`);

    const cancelledAt = Date.now();
    const ack = await tasks.cancel(taskId);
    assert.equal(ack['resultType'], 'complete');
    assertAbsent(ack, NOT_ON_ACK, 'tasks/cancel ack');

    const done = await tasks.pollUntil(taskId, (task) => TERMINAL.has(task.status), { timeoutMs: CANCEL_SETTLES_MS });
    assert.equal(done.task.status, 'cancelled', `statuses: ${done.statuses.join(' → ')}; last: ${JSON.stringify(done.raw)}`);
    assert.ok(Date.now() - cancelledAt < CANCEL_SETTLES_MS);

    // Cancelling a terminal task is acknowledged the same way (and changes nothing).
    const again = await tasks.cancel(taskId);
    assertAbsent(again, NOT_ON_ACK, 'tasks/cancel ack');
    assert.equal((await tasks.get(taskId)).task.status, 'cancelled');
    assertTaskTraffic(connection.wire, taskId);
  });
});

describe('@modelcontextprotocol/ext-tasks requester session (on the SDK v2 client)', () => {
  let connection: ExtTasksConnection;

  before(async () => {
    // The "user": approves the gate, and answers multi_input's two questions.
    connection = await connectExtTasksSession(stack.url, (_request, context): ApplicationElicitResult => {
      switch (context.inputId) {
        case 'approval':
          return { action: 'accept', content: { approve: true, comment: 'ship it' } };
        case 'name':
          return { action: 'accept', content: { name: 'x', confirm: true } };
        case 'color':
          return { action: 'accept', content: { color: 'teal' } };
        case 'user_name':
          return { action: 'accept', content: { name: 'Alice' } };
        default:
          return { action: 'decline' };
      }
    });
  });

  after(async () => {
    await connection?.close();
  });

  it('sees the extension and offers execution, cancellation and input responses', () => {
    assert.deepEqual(
      { ...connection.session.capabilities },
      { inventory: 'known-handles', execution: true, cancellation: true, inputResponses: true, requestedRetention: false },
    );
  });

  it('approval_gate: working → input_required → answered through tasks/update → completed', { timeout: 30_000 }, async () => {
    const execution = await connection.session.callTool(
      'approval_gate',
      { action: 'deploy web@1.4.2' },
      { task: { preference: 'require' } },
    );
    assert.equal(execution.kind, 'task');
    if (execution.kind !== 'task') return;
    const taskId = execution.handle.taskId;

    const statuses: string[] = [];
    const { outcome } = await explained(
      connection.wire,
      taskId,
      execution.settle({
        signal: AbortSignal.timeout(SETTLE_TIMEOUT_MS),
        onEvent: (event) => {
          if (event.type === 'task') statuses.push(event.task.status);
        },
      }),
    );
    assert.equal(outcome.status, 'completed', `outcome: ${JSON.stringify(outcome)}`);
    if (outcome.status !== 'completed') return;
    assert.equal(textOf(outcome.result), 'Approved and done: deploy web@1.4.2 (ship it)');
    const { approved, comment } = outcome.result['structuredContent'] as { approved?: unknown; comment?: unknown };
    assert.deepEqual({ approved, comment }, { approved: true, comment: 'ship it' });
    // working first, then input_required, completed last (a poll may also catch `working` after the answer).
    const observed = dedupe(statuses);
    assert.equal(observed[0], 'working', `events: ${statuses.join(' → ')}`);
    assert.equal(observed.at(-1), 'completed', `events: ${statuses.join(' → ')}`);
    assert.ok(observed.includes('input_required'), `events: ${statuses.join(' → ')}`);

    // The library handed the elicitation to the application once, scoped to this task.
    const inputs = connection.inputs.filter((input) => input.context.taskId === taskId);
    assert.equal(inputs.length, 1);
    assert.equal(inputs[0]!.request.kind, 'elicitation');
    assert.deepEqual(
      { scope: inputs[0]!.context.scope, delivery: inputs[0]!.context.delivery, inputId: inputs[0]!.context.inputId },
      { scope: 'task', delivery: 'task-update', inputId: 'approval' },
    );
    assert.match(JSON.stringify(inputs[0]!.request.params), /Approve: deploy web@1\.4\.2\?/);

    // On the wire: one CreateTaskResult, one tasks/update with the answer, all valid.
    const create = connection.wire.last('tools/call', (exchange) => exchange.response?.result?.['taskId'] === taskId);
    assertValid('CreateTaskResult', rawResult(create));
    const meta = create.request?.params?.['_meta'] as Record<string, unknown>;
    assert.deepEqual((meta['io.modelcontextprotocol/clientCapabilities'] as Record<string, unknown>)['extensions'], {
      [TASKS_EXTENSION]: {},
    });
    const updates = connection.wire.requests('tasks/update', taskId);
    assert.equal(updates.length, 1);
    assert.deepEqual(updates[0]!.request?.params?.['inputResponses'], {
      approval: { action: 'accept', content: { approve: true, comment: 'ship it' } },
    });
    assertTaskTraffic(connection.wire, taskId);
    assert.deepEqual(connection.errors, []);
  });

  it('multi_input: both outstanding keys answered in one tasks/update → completed', { timeout: 30_000 }, async () => {
    const execution = await connection.session.callTool('multi_input', {}, { task: { preference: 'require' } });
    assert.equal(execution.kind, 'task');
    if (execution.kind !== 'task') return;
    const taskId = execution.handle.taskId;

    const { outcome } = await explained(connection.wire, taskId, execution.settle({ signal: AbortSignal.timeout(SETTLE_TIMEOUT_MS) }));
    assert.equal(outcome.status, 'completed', `outcome: ${JSON.stringify(outcome)}`);
    if (outcome.status !== 'completed') return;
    assert.equal(textOf(outcome.result), 'name=x, color=teal');

    const answered = connection.wire
      .requests('tasks/update', taskId)
      .flatMap((exchange) => Object.keys(exchange.request?.params?.['inputResponses'] as object));
    assert.deepEqual(answered.sort(), ['color', 'name']);
    const inputIds = connection.inputs.filter((input) => input.context.taskId === taskId).map((input) => input.context.inputId);
    assert.deepEqual(inputIds.sort(), ['color', 'name']);
    assertTaskTraffic(connection.wire, taskId);
    assert.deepEqual(connection.errors, []);
  });

  it('test_tool_with_task: a multi-round-trip answer on tools/call, then a task that completes with it', { timeout: 30_000 }, async () => {
    const before = connection.inputs.length;
    const execution = await connection.session.callTool('test_tool_with_task', {}, { task: { preference: 'require' } });
    assert.equal(execution.kind, 'task');
    if (execution.kind !== 'task') return;
    const taskId = execution.handle.taskId;

    // The name was asked once, inside the call (MRTR retry), not again by the task.
    const asked = connection.inputs.slice(before);
    assert.deepEqual(
      asked.map((input) => [input.context.scope, input.context.delivery, input.context.inputId]),
      [['request', 'request-retry', 'user_name']],
    );
    const calls = connection.wire.requests('tools/call').filter((exchange) => exchange.request?.params?.['name'] === 'test_tool_with_task');
    assert.equal(calls.length, 2, 'one input_required round, then the retry');
    assertValid('CallToolResult', rawResult(calls[0]!));
    assert.equal(rawResult(calls[0]!)['resultType'], 'input_required');
    assertValid('CreateTaskResult', rawResult(calls[1]!));
    assertAbsent(rawResult(calls[1]!), NOT_ON_CREATE, 'CreateTaskResult');

    const { outcome } = await explained(connection.wire, taskId, execution.settle({ signal: AbortSignal.timeout(SETTLE_TIMEOUT_MS) }));
    assert.equal(outcome.status, 'completed', `outcome: ${JSON.stringify(outcome)}`);
    if (outcome.status !== 'completed') return;
    assert.equal(textOf(outcome.result), 'Hello, Alice!');
    assert.deepEqual(connection.wire.requests('tasks/update', taskId), []);
    assertTaskTraffic(connection.wire, taskId);
    assert.deepEqual(connection.errors, []);
  });

  it('approval_gate handed off by one session and resumed by another (new connection) → completed', { timeout: 30_000 }, async () => {
    // Session A starts the task and persists a reference without answering anything.
    const first = await connectExtTasksSession(stack.url, () => {
      throw new Error('session A must not be asked: it handed the task off');
    });
    let reference: SerializedTaskReference | undefined;
    let taskId: string;
    try {
      const execution = await first.session.callTool('approval_gate', { action: 'rotate keys' }, { task: { preference: 'require' } });
      assert.equal(execution.kind, 'task');
      if (execution.kind !== 'task') return;
      taskId = execution.handle.taskId;
      await execution.handoff((serialized) => {
        reference = serialized;
      });
      // ext-tasks 0.2.2: closing the session in the same tick as handoff() still
      // cancels the handed-off task (tasks/cancel); let the handoff settle first.
      await sleep(50);
    } finally {
      await first.close();
    }
    assert.deepEqual(first.wire.requests('tasks/cancel'), [], 'session A cancelled the task it handed off');
    assert.deepEqual(first.inputs, []);
    assert.ok(reference);
    assert.equal(reference.taskId, taskId);

    // Session B (the shared connection) resumes it, answers, and sees it complete.
    const resumed = await connection.session.resumeTask(reference);
    const { outcome } = await explained(connection.wire, taskId, resumed.settle({ signal: AbortSignal.timeout(SETTLE_TIMEOUT_MS) }));
    assert.equal(outcome.status, 'completed', `outcome: ${JSON.stringify(outcome)}`);
    if (outcome.status !== 'completed') return;
    assert.equal(textOf(outcome.result), 'Approved and done: rotate keys (ship it)');
    assert.equal(connection.inputs.filter((input) => input.context.taskId === taskId).length, 1);
    assertTaskTraffic(connection.wire, taskId);
    assert.deepEqual(connection.errors, []);
  });

  it('slow_compute {seconds: 30}: execution.cancel() → the server settles the task as cancelled', { timeout: 30_000 }, async () => {
    const execution = await connection.session.callTool('slow_compute', { seconds: 30 }, { task: { preference: 'require' } });
    assert.equal(execution.kind, 'task');
    if (execution.kind !== 'task') return;
    const taskId = execution.handle.taskId;
    await sleep(1_000);

    const cancelledAt = Date.now();
    await execution.cancel();
    // V2 cancellation is cooperative: the library ends its local execution on the ack.
    const local = await execution.result();
    assert.equal(local.status, 'cancelled');
    const acks = connection.wire.requests('tasks/cancel', taskId);
    assert.equal(acks.length, 1);
    assertAbsent(rawResult(acks[0]!), NOT_ON_ACK, 'tasks/cancel ack');

    // Observe the server-side outcome through the library's task controller.
    const controller = connection.session.task(taskId);
    let status = (await controller.snapshot()).status;
    while (!TERMINAL.has(status) && Date.now() - cancelledAt < CANCEL_SETTLES_MS) {
      await sleep(250);
      status = (await controller.snapshot()).status;
    }
    assert.equal(status, 'cancelled');
    assertTaskTraffic(connection.wire, taskId);
    assert.deepEqual(connection.errors, []);
  });
});

describe('2025-era clients (legacy stateless fallback)', () => {
  it('the SDK v2 client in its default 2025-11-25 mode gets synchronous tool results', { timeout: 30_000 }, async () => {
    const connection = await connectSdkClient(stack.url, 'legacy');
    try {
      const { client, wire } = connection;
      assert.equal(client.getProtocolEra(), 'legacy');
      assert.equal(client.getNegotiatedProtocolVersion(), LEGACY_PROTOCOL_VERSION);
      assert.equal(client.getServerCapabilities()?.extensions, undefined);
      // The 2025-11-25 tasks surface is offered (see legacy-tasks.test.ts); a client that does not ask for a task gets results inline.
      assert.deepEqual((client.getServerCapabilities() as Record<string, unknown> | undefined)?.['tasks'], {
        cancel: {},
        requests: { tools: { call: {} } },
      });

      const greeting = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
      assert.equal(textOf(greeting), 'Hello, Ada!');

      // Task-capable tools run inside the request for a client that cannot poll.
      const startedAt = Date.now();
      const computed = await client.callTool({ name: 'slow_compute', arguments: { seconds: 1, label: 'legacy' } });
      assert.equal(textOf(computed), 'Computed legacy after 1s');
      assert.ok(Date.now() - startedAt >= 900, 'slow_compute answered before it could have run');
      const batch = await client.callTool({ name: 'batch_process', arguments: { items: ['a', 'b'], delayMs: 10 } });
      assert.equal(textOf(batch), 'Processed 2 items');

      // A task-only tool runs through the fallback: an ordinary result naming the task (never a task result)…
      const fallback = await client.callTool({ name: 'confirm_delete', arguments: { filename: 'x' } });
      const named = fallback.structuredContent as { taskId?: string; status?: string } | undefined;
      assert.equal(named?.status, 'input_required', JSON.stringify(fallback));
      assert.match(textOf(fallback), /task_answer/);
      await client.callTool({ name: 'task_cancel', arguments: { taskId: named?.taskId } });
      // …unless it opts out of the fallback: then an error, never a task.
      await assert.rejects(client.callTool({ name: 'failing_job', arguments: {} }), (error: unknown) => {
        assert.ok(error instanceof ProtocolError, String(error));
        assert.equal(error.code, -32021);
        return true;
      });

      for (const exchange of wire.requests('tools/call')) {
        assert.equal(exchange.headers.get('mcp-protocol-version'), LEGACY_PROTOCOL_VERSION);
        const result = exchange.response?.result;
        if (result === undefined) continue;
        assert.equal(result['resultType'], undefined, `no 2026 vocabulary on a 2025 wire: ${JSON.stringify(result)}`);
        assert.equal('taskId' in result || 'task' in result, false);
      }
    } finally {
      await connection.close();
    }
  });

  it('a hand-written 2025-11-25 client: initialize, then tools/call greet and slow_compute', { timeout: 30_000 }, async () => {
    let id = 0;
    const post = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const response = await fetch(stack.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', ...body }),
      });
      const messages = parseMessages(await response.text(), response.headers.get('content-type') ?? '');
      return {
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        messages,
        reply: messages.find((message) => message.id === body['id']),
      };
    };

    const init = await post({
      id: ++id,
      method: 'initialize',
      params: { protocolVersion: LEGACY_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw-2025', version: '1.0.0' } },
    });
    assert.equal(init.status, 200);
    const initResult = init.reply?.result as Record<string, unknown> | undefined;
    assert.equal(initResult?.['protocolVersion'], LEGACY_PROTOCOL_VERSION, JSON.stringify(init.messages));
    assert.deepEqual((initResult?.['capabilities'] as Record<string, unknown> | undefined)?.['tools'], {});

    const initialized = await post({ method: 'notifications/initialized' }, { 'MCP-Protocol-Version': LEGACY_PROTOCOL_VERSION });
    assert.equal(initialized.status, 202);

    const versionHeader = { 'MCP-Protocol-Version': LEGACY_PROTOCOL_VERSION };
    const greet = await post({ id: ++id, method: 'tools/call', params: { name: 'greet', arguments: { name: 'raw' } } }, versionHeader);
    assert.equal(greet.status, 200);
    assert.equal(textOf(greet.reply?.result), 'Hello, raw!', JSON.stringify(greet.messages));

    for (const seconds of [0, 1]) {
      const slow = await post({ id: ++id, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds } } }, versionHeader);
      assert.equal(slow.status, 200);
      const result = slow.reply?.result;
      assert.equal(textOf(result), `Computed result after ${seconds}s`, JSON.stringify(slow.messages));
      assert.equal(result?.['resultType'], undefined);
      assert.equal(result?.['isError'] ?? false, false);
    }
  });
});

/**
 * Awaits `settling`; if it fails (e.g. times out), fails with what the wire
 * showed for the task and the tail of the stack's log, so a stuck task can be
 * diagnosed from the test output alone.
 */
async function explained<T>(wire: WireRecorder, taskId: string, settling: Promise<T>): Promise<T> {
  try {
    return await settling;
  } catch (error) {
    const trail = wire.exchanges
      .filter((exchange) => exchange.request?.params?.['taskId'] === taskId || exchange.response?.result?.['taskId'] === taskId)
      .map(
        (exchange) =>
          `${exchange.request?.method} → HTTP ${exchange.status} ` +
          `${JSON.stringify(exchange.response?.result ?? exchange.response?.error ?? exchange.messages)}`,
      );
    throw new AssertionError({
      message:
        `Task ${taskId} did not settle: ${String(error)}\nwire:\n  ${trail.join('\n  ')}\nstack log ` +
        `(tail):\n${stack.output().split('\n').slice(-30).join('\n')}`,
    });
  }
}

/** Collapses consecutive repeats: ['working', 'working', 'completed'] → ['working', 'completed']. */
function dedupe(values: string[]): string[] {
  return values.filter((value, index) => index === 0 || values[index - 1] !== value);
}
