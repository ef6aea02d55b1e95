/**
 * One task, one trace: the spans an in-memory exporter receives for a simple
 * task, a task that asks a person, a callback task, a workflow task and a
 * run recovered after a crash — their names, attributes, parents, links and
 * status — on the in-memory store and queue, with the endpoint, the worker,
 * the task actions and the workflow consumer composed as deployed.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import * as z from 'zod';
import { createWorkflowReceiverHandler } from '../../../functions/workflow-receiver/app.ts';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { DEFAULT_SETTINGS, ENV, loadConfig } from '../../../shared/config.ts';
import { executionArnOf } from '../../../shared/engines/stepfunctions/index.ts';
import { type KeyPurpose, purposeKey } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { jsonLog } from '../../../shared/log.ts';
import { createEndpoint } from '../../../shared/protocol/endpoint.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { defineTool, defineWorkflowTool, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { processTaskMessage, type WorkerDeps } from '../../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { deliverySpan } from '../../../shared/tracing/actions.ts';
import { otelTracing } from '../../../shared/tracing/otel/index.ts';
import { installTracing, NO_TRACING } from '../../../shared/tracing/tracing.ts';
import { workflowEventConsumer } from '../../../shared/workflows/consumer.ts';
import { bindWorkflows } from '../../../shared/workflows/tool.ts';
import { storePolicy } from '../../support/factories.ts';
import { requestMeta, resultOf, rpc } from '../../support/wire.ts';
import { FakeWorkflowEngine, MACHINE, statusChangeEvent } from '../../support/workflow-fakes.ts';

const T0 = 1_700_000_000_000;
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;
const secret = randomBytes(32);
const keys = async (purpose: KeyPurpose) => purposeKey(secret, purpose);
const POLICY = storePolicy({ leaseMs: 10_000, sweepGraceMs: 5_000 });

let clock: number;
let store: InMemoryTaskStore;
let queue: InMemoryTaskQueue;
let exporter: InMemorySpanExporter;
let engine: FakeWorkflowEngine;
let handed: string[];
let lines: string[];

const simple = defineTool({
  name: 'simple',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_args, ctx) => `fetched ${await ctx.step('fetch', async () => 42)}`,
});
const approval = defineTool({
  name: 'approval',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  answeredBy: 'person',
  handler: async (_args, ctx) => {
    const answer = await ctx.elicit('go', { message: 'Go?', requestedSchema: { type: 'object', properties: {} } });
    return `answered ${answer.action}`;
  },
});
const outside = defineTool({
  name: 'outside',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_args, ctx) => {
    const done = await ctx.callback<{ ok: boolean }>('job', { timeoutMs: 3_600_000, submit: async ({ id }) => void handed.push(id) });
    return `job ${done.ok}`;
  },
});
const release = defineWorkflowTool({
  name: 'release',
  description: '',
  inputSchema: z.object({}),
  workflow: { name: 'deploy-release', definition: 'unused.asl.json' },
});

const bindings = { release: MACHINE };
const tracing = () => otelTracing({ exporter });
const log = jsonLog((line) => void lines.push(line));
const tools = (): ReadonlyMap<string, ToolDefinition> =>
  bindWorkflows(new Map([simple, approval, outside, release].map((tool) => [tool.name, tool])), {
    engine,
    bindings,
    store,
    keys,
    log,
  });

let traced: ReturnType<typeof tracing>;
const endpoint = () =>
  createEndpoint({
    store,
    queue,
    tools: tools(),
    config: DEFAULT_SETTINGS,
    log,
    now: () => clock,
    stackSecret: async () => secret,
    originPolicy: { kind: 'loopback' },
    tracing: traced,
  });
const workerDeps = (): WorkerDeps => ({
  store,
  queue,
  tools: tools(),
  log,
  now: () => clock,
  keys,
  links: new DeploymentLinks('https://tasks.example.com'),
  config: { ...DEFAULT_SETTINGS, leaseMs: POLICY.leaseMs, cancelCheckMs: 50, progressIntervalMs: 0 },
  tracing: traced,
});

/** Runs every message queued so far, in order (a message a run queues runs too). */
async function drain(): Promise<void> {
  while (queue.sent.length > 0) await processTaskMessage(queue.sent.shift()!, workerDeps());
}

/** Calls `tool` as a task, with the client's trace context in `_meta`; the task's id. */
async function call(tool: string): Promise<string> {
  const target = (request: Request) => endpoint().fetch(request, 'alice');
  const meta = { ...requestMeta(), traceparent: CLIENT_TRACEPARENT };
  const reply = await rpc(target, 'tools/call', { name: tool, arguments: {} }, { meta, headers: { 'Mcp-Session-Id': 'session-1' } });
  return String((resultOf(reply)['task'] as { taskId?: string } | undefined)?.taskId ?? resultOf(reply)['taskId']);
}

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
function span(name: string, nth = 0): ReadableSpan {
  const found = spans().filter((s) => s.name === name);
  assert.ok(
    found[nth],
    `a span "${name}" (#${nth + 1}) among: ${spans()
      .map((s) => s.name)
      .join(', ')}`,
  );
  return found[nth];
}
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const traceOf = (s: ReadableSpan) => s.spanContext().traceId;

beforeEach(() => {
  clock = T0;
  store = new InMemoryTaskStore(POLICY);
  queue = new InMemoryTaskQueue();
  exporter = new InMemorySpanExporter();
  engine = new FakeWorkflowEngine();
  engine.now = () => clock;
  handed = [];
  lines = [];
  traced = tracing();
});

describe('a simple task is one trace, from the call to its end', () => {
  it("the call's server span is the client's child; the run is the call's child; its step the run's", async () => {
    const taskId = await call('simple');
    const request = span('tools/call simple');
    assert.equal(request.kind, SpanKind.SERVER);
    assert.equal(traceOf(request), CLIENT_TRACE, "the client's trace");
    assert.equal(parentOf(request), CLIENT_SPAN);
    assert.deepEqual(
      { ...request.attributes },
      {
        'mcp.method.name': 'tools/call',
        'jsonrpc.request.id': request.attributes['jsonrpc.request.id'],
        'mcp.session.id': 'session-1',
        'mcp.protocol.version': '2026-07-28',
        'gen_ai.tool.name': 'simple',
        'gen_ai.operation.name': 'execute_tool',
        'mcp.task.id': taskId,
      },
    );
    assert.equal(request.status.code, SpanStatusCode.UNSET);

    clock += 1_000;
    await drain();
    const run = span('run simple');
    assert.equal(run.kind, SpanKind.CONSUMER);
    assert.equal(traceOf(run), CLIENT_TRACE, 'the run is in the same trace');
    assert.equal(parentOf(run), idOf(request), "the run's parent is the call that created the task");
    assert.deepEqual(run.links, []);
    assert.equal(run.attributes['mcp.task.id'], taskId);
    assert.equal(run.attributes['mcp.task.phase'], 'run');
    assert.equal(run.attributes['mcp.task.run.reason'], 'start');
    assert.equal(run.attributes['mcp.task.status'], 'completed');
    const step = span('step fetch');
    assert.equal(parentOf(step), idOf(run));
    assert.equal(step.attributes['mcp.task.id'], taskId);
    assert.equal(step.attributes['mcp.task.step.name'], 'fetch');
  });

  it("the run's log lines carry its trace_id and span_id", async () => {
    const taskId = await call('simple');
    await drain();
    const run = span('run simple');
    const ran = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line['event'] === 'ran');
    assert.equal(ran?.['taskId'], taskId);
    assert.equal(ran?.['trace_id'], traceOf(run));
    assert.equal(ran?.['span_id'], idOf(run));
  });

  it('tasks/get gets no span (sampled out by default); with tasksGet it does, naming the task', async () => {
    const taskId = await call('simple');
    const get = (request: Request) => endpoint().fetch(request, 'alice');
    await rpc(get, 'tasks/get', { taskId });
    assert.equal(spans().filter((s) => s.name === 'tasks/get').length, 0);
    traced = otelTracing({ exporter, tasksGet: true });
    await rpc(get, 'tasks/get', { taskId });
    assert.equal(span('tasks/get').attributes['mcp.task.id'], taskId);
  });

  it('a JSON-RPC error sets error.type and rpc.response.status_code, with status ERROR', async () => {
    const target = (request: Request) => endpoint().fetch(request, 'alice');
    await rpc(target, 'tasks/cancel', { taskId: 'no-such-task' });
    const cancel = span('tasks/cancel');
    assert.equal(cancel.status.code, SpanStatusCode.ERROR);
    assert.equal(cancel.attributes['error.type'], cancel.attributes['rpc.response.status_code']);
    assert.match(String(cancel.attributes['error.type']), /^-32\d{3}$/);
  });
});

describe('a task that asks a person', () => {
  it('waits in a wait:person span from the question to the answer; the resumed run links the answer', async () => {
    const taskId = await call('approval');
    await drain();
    const asked = span('run approval');
    assert.equal(asked.attributes['mcp.task.status'], 'input_required');
    clock += 60_000;
    const target = (request: Request) => endpoint().fetch(request, 'alice');
    const answer = await rpc(target, 'tasks/update', { taskId, inputResponses: { go: { action: 'accept', content: {} } } });
    assert.equal(answer.body?.error, undefined, JSON.stringify(answer.body));
    clock += 1_000;
    await drain();
    const update = span('tasks/update');
    assert.equal(update.attributes['mcp.task.id'], taskId);
    const resumed = span('run approval', 1);
    assert.equal(resumed.attributes['mcp.task.run.reason'], 'resume');
    assert.equal(resumed.attributes['mcp.task.status'], 'completed');
    assert.equal(parentOf(resumed), parentOf(asked), "both runs are children of the task's call");
    assert.deepEqual(
      resumed.links.map((link) => link.context.spanId),
      [idOf(update)],
      'the resumed run links the answer',
    );
    const wait = span('wait:person approval');
    assert.equal(parentOf(wait), parentOf(asked));
    assert.equal(wait.attributes['mcp.task.wait.for'], 'person');
    assert.equal(wait.attributes['mcp.task.step.name'], 'go');
    assert.equal(wait.startTime[0] * 1000 + wait.startTime[1] / 1e6, T0, 'from the run that asked');
    assert.equal(wait.endTime[0] * 1000 + wait.endTime[1] / 1e6, T0 + 60_000, 'to the answer');
  });
});

describe('a callback task', () => {
  it("waits in a wait:callback span from the callback's creation to its completion; the resumed run links the completion", async () => {
    const taskId = await call('outside');
    await drain();
    assert.equal(handed.length, 1);
    clock += 30_000;
    const actions = new TaskActions({ store, queue, log, now: () => clock, tracing: traced });
    const completed = await deliverySpan({ tracing: traced }, 'POST /callbacks', 'server', () =>
      actions.completeCallback(taskId, handed[0]!, { result: { ok: true } }),
    );
    assert.equal(completed, 'resumed');
    await drain();
    const delivery = span('POST /callbacks');
    assert.equal(delivery.attributes['mcp.task.id'], taskId);
    const resumed = span('run outside', 1);
    assert.deepEqual(
      resumed.links.map((link) => link.context.spanId),
      [idOf(delivery)],
    );
    const wait = span('wait:callback outside');
    assert.equal(wait.attributes['mcp.task.step.name'], 'job');
    assert.equal(wait.attributes['mcp.task.wait.for'], 'callback');
    assert.equal(wait.endTime[0] * 1000 + wait.endTime[1] / 1e6, T0 + 30_000);
    assert.equal(traceOf(wait), CLIENT_TRACE);
    assert.ok(span('step callback:job'), 'the call to the outside system is a step span');
  });
});

describe('a workflow task', () => {
  it("waits in a wait:workflow span from the execution's start to its end event; the resumed run links the event's delivery", async () => {
    const taskId = await call('release');
    await drain();
    clock += 120_000;
    const consume = workflowEventConsumer({ store, queue, bindings, log, now: () => clock, tracing: traced });
    await consume(statusChangeEvent(executionArnOf(MACHINE, taskId), 'SUCCEEDED', { output: '{"deployed":true}' }));
    await drain();
    const delivery = span('workflow end');
    assert.equal(delivery.kind, SpanKind.CONSUMER);
    assert.equal(delivery.attributes['mcp.task.id'], taskId);
    const resumed = span('run release', 1);
    assert.deepEqual(
      resumed.links.map((link) => link.context.spanId),
      [idOf(delivery)],
    );
    assert.equal(resumed.attributes['mcp.task.status'], 'completed');
    const wait = span('wait:workflow release');
    assert.equal(wait.attributes['mcp.task.wait.for'], 'workflow');
    assert.equal(wait.startTime[0] * 1000 + wait.startTime[1] / 1e6, T0);
    assert.equal(wait.endTime[0] * 1000 + wait.endTime[1] / 1e6, T0 + 120_000);
    assert.ok(span('step workflow:start'));
  });
});

describe('a workflow question', () => {
  it("is a delivery span of the receiver's, with the tracing its entry installs; the resume it queues links it", async () => {
    const taskId = await call('release');
    await drain();
    // Composed as deployed: given no tracing, it reads the installed one when a delivery arrives.
    const receive = createWorkflowReceiverHandler({
      config: loadConfig({ [ENV.tableName]: 't', [ENV.queueUrl]: 'q', [ENV.workflows]: JSON.stringify(bindings) }),
      store,
      queue,
      log,
      now: () => clock,
      keys,
    });
    installTracing(traced);
    const schema = { type: 'object', properties: { approve: { type: 'boolean' } } };
    const payload = {
      taskId,
      execution: executionArnOf(MACHINE, taskId),
      key: 'go',
      message: 'Deploy?',
      requestedSchema: schema,
      token: 'tok',
    };
    try {
      assert.deepEqual(await receive(payload), { status: 'resumed' });
    } finally {
      installTracing(NO_TRACING);
    }
    const delivery = span('workflow state');
    assert.equal(delivery.kind, SpanKind.CONSUMER);
    assert.equal(delivery.attributes['mcp.task.id'], taskId);
    assert.ok(!JSON.stringify(delivery.attributes).includes('Deploy?'), 'no payload on the span');
    assert.deepEqual(
      queue.sent.map((message) => message.link),
      [`00-${traceOf(delivery)}-${idOf(delivery)}-01`],
    );
  });
});

describe('a run recovered after a crash', () => {
  it('is a "recovered" span in the same trace, a child of the call', async () => {
    const taskId = await call('simple');
    const message = queue.sent.shift()!;
    // A run that dies: its lease taken, nothing written after.
    await store.claim(taskId, 'crashed-worker', clock);
    clock += POLICY.leaseMs + 1;
    await processTaskMessage({ taskId, reason: 'sweep' }, workerDeps());
    assert.equal(message.reason, 'start');
    const recovered = span('recovered simple');
    assert.equal(parentOf(recovered), idOf(span('tools/call simple')));
    assert.equal(recovered.attributes['mcp.task.phase'], 'recovered');
    assert.equal(recovered.attributes['mcp.task.run.attempt'], 2);
    assert.equal(recovered.attributes['mcp.task.status'], 'completed');
  });

  it('a run whose handler throws gives its message back: status ERROR', async () => {
    const failing = defineTool({
      name: 'failing',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async () => {
        throw new Error('connection reset');
      },
    });
    const { task } = await store.create({
      taskId: 'failing-task',
      owner: 'alice',
      tool: 'failing',
      arguments: {},
      clientCapabilities: {},
      inputResponses: {},
      now: clock,
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
      trace: { traceparent: CLIENT_TRACEPARENT },
    });
    const disposition = await processTaskMessage(
      { taskId: task.taskId, reason: 'start' },
      { ...workerDeps(), tools: new Map([[failing.name, failing]]) },
    );
    assert.equal(disposition, 'retry');
    const run = span('run failing');
    assert.equal(run.status.code, SpanStatusCode.ERROR);
    assert.equal(run.attributes['error.type'], 'run_failed');
    assert.equal(parentOf(run), CLIENT_SPAN, "the row's context is the parent");
  });
});
