/**
 * A workflow tool's task through the worker, the receiver and the event
 * consumer, on the in-memory store and queue, with a stand-in engine: the
 * three start cases, the suspension, questions and their answers going
 * back, the end by event (and the looks when it never comes), cancels.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import * as z from 'zod';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { executionArnOf } from '../../../shared/engines/stepfunctions/index.ts';
import { type KeyPurpose, purposeKey } from '../../../shared/keys.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { defineWorkflowTool, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { processTaskMessage, type WorkerDeps } from '../../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { forPersonOnly, type TaskRecord } from '../../../shared/tasks/model.ts';
import { workflowEventConsumer } from '../../../shared/workflows/consumer.ts';
import { CANCELLED_ERROR } from '../../../shared/workflows/outcome.ts';
import { MALFORMED_ERROR, REFUSED_ERROR, workflowReceiver } from '../../../shared/workflows/receiver.ts';
import { REJECTED_ERROR } from '../../../shared/workflows/replies.ts';
import { FIRST_CHECK_MS } from '../../../shared/workflows/schedule.ts';
import { bindWorkflows } from '../../../shared/workflows/tool.ts';
import { newTask, storePolicy } from '../../support/factories.ts';
import { FakeWorkflowEngine, MACHINE, statusChangeEvent } from '../../support/workflow-fakes.ts';

const OWNER = 'alice';
const T0 = 1_700_000_000_000;
const POLICY = storePolicy({ leaseMs: 10_000, sweepGraceMs: 5_000 });
const secret = randomBytes(32);
const keys = async (purpose: KeyPurpose) => purposeKey(secret, purpose);
const ARGS = { release: 'web@1.4.2', regions: ['eu-west-1', 'us-east-1'] };
const APPROVAL_SCHEMA = {
  type: 'object',
  properties: { approve: { type: 'boolean' }, comment: { type: 'string' } },
  required: ['approve'],
};

const release = defineWorkflowTool({
  name: 'release',
  description: '',
  inputSchema: z.object({ release: z.string(), regions: z.array(z.string()) }),
  workflow: { name: 'deploy-release', definition: 'unused.asl.json' },
});

let clock: number;
let store: InMemoryTaskStore;
let queue: InMemoryTaskQueue;
let engine: FakeWorkflowEngine;
let logged: LogEvent[];

const log = (event: LogEvent) => void logged.push(event);
const bindings = { release: MACHINE };
const tools = (): ReadonlyMap<string, ToolDefinition> =>
  bindWorkflows(new Map([[release.name, release]]), { engine, bindings, store, keys, log });
const deps = (): WorkerDeps => ({
  store,
  queue,
  tools: tools(),
  log,
  now: () => clock,
  config: { ...DEFAULT_SETTINGS, leaseMs: POLICY.leaseMs, cancelCheckMs: 50, progressIntervalMs: 0 },
});
const receive = (payload: unknown) => workflowReceiver({ store, queue, keys, bindings, log, now: () => clock })(payload);
const consume = (event: unknown) => workflowEventConsumer({ store, queue, bindings, log, now: () => clock })(event);
const run = (taskId: string, reason: 'start' | 'resume' | 'sweep' = 'start') => processTaskMessage({ taskId, reason }, deps());
const read = async (taskId: string): Promise<TaskRecord> => (await store.get(taskId, OWNER, clock))!;

async function created(): Promise<string> {
  const { task } = await store.create(
    newTask({ owner: OWNER, tool: 'release', arguments: ARGS, now: clock, clientCapabilities: { elicitation: {} } }),
  );
  return task.taskId;
}

/** A task whose run started its execution and suspended on it. */
async function started(): Promise<{ taskId: string; execution: string }> {
  const taskId = await created();
  await run(taskId);
  return { taskId, execution: executionArnOf(MACHINE, taskId) };
}

function question(taskId: string, execution: string, token: string, overrides: Record<string, unknown> = {}) {
  return {
    taskId,
    execution,
    key: 'approval',
    message: 'Deploy?',
    requestedSchema: APPROVAL_SCHEMA,
    answeredBy: 'person',
    token,
    ...overrides,
  };
}

const text = (task: TaskRecord) =>
  task.status === 'completed' ? (task.result['content'] as Array<{ text: string }>)[0]!.text : task.status;

beforeEach(() => {
  clock = T0;
  store = new InMemoryTaskStore(POLICY);
  queue = new InMemoryTaskQueue();
  engine = new FakeWorkflowEngine();
  engine.now = () => clock;
  logged = [];
});

describe('a workflow tool starts its execution exactly once', () => {
  it('named after the task, the arguments as canonical JSON; then suspends: no lease, nothing queued, a look due in 15 minutes', async () => {
    const { taskId, execution } = await started();
    assert.deepEqual(engine.calls, [['start', taskId]]);
    assert.equal(engine.executions.get(execution)?.input, '{"regions":["eu-west-1","us-east-1"],"release":"web@1.4.2"}');
    const task = await read(taskId);
    assert.equal(task.status, 'working');
    assert.equal(task.lease, undefined);
    assert.equal(task.statusMessage, 'Running deploy-release');
    assert.equal(task.workflow?.execution, execution);
    assert.equal(task.sweepAt, T0 + FIRST_CHECK_MS);
    assert.deepEqual(queue.sent, []);
    assert.doesNotMatch(task.statusMessage ?? '', /arn:/);
  });

  it('a start whose record was lost finds the open execution it started (identical input): still one execution', async () => {
    const taskId = await created();
    await engine.start(MACHINE, taskId, '{"regions":["eu-west-1","us-east-1"],"release":"web@1.4.2"}');
    await run(taskId);
    assert.equal(engine.executions.size, 1);
    assert.equal((await read(taskId)).workflow?.execution, executionArnOf(MACHINE, taskId));
  });

  it('a start that finds its execution closed describes it once and settles the task as its event would', async () => {
    const taskId = await created();
    await engine.start(MACHINE, taskId, '{}');
    engine.end(executionArnOf(MACHINE, taskId), 'SUCCEEDED', { output: '{"release":"web@1.4.2","deployed":[]}' });
    engine.calls.length = 0;
    await run(taskId);
    assert.deepEqual(
      engine.calls.map(([call]) => call),
      ['start', 'describe'],
    );
    const task = await read(taskId);
    assert.equal(task.status, 'completed');
    assert.deepEqual(task.status === 'completed' && task.result['structuredContent'], { release: 'web@1.4.2', deployed: [] });
  });

  it('an unbound tool ends with a tool error naming the setting', async () => {
    const taskId = await created();
    await processTaskMessage(
      { taskId, reason: 'start' },
      { ...deps(), tools: bindWorkflows(new Map([[release.name, release]]), { engine, bindings: {}, store, keys, log }) },
    );
    assert.match(text(await read(taskId)), /No state machine is bound to release .*TASKS_WORKFLOWS/);
    assert.deepEqual(engine.calls, []);
  });
});

describe('the execution ends its task by its event', () => {
  it('SUCCEEDED: the output is the result; a duplicate and a late event change nothing', async () => {
    const { taskId, execution } = await started();
    clock += 600_000;
    const event = statusChangeEvent(execution, 'SUCCEEDED', { output: '{"release":"web@1.4.2","verified":true}' });
    assert.deepEqual(await consume(statusChangeEvent(execution, 'RUNNING')), { ignored: 'not-an-end' });
    assert.deepEqual(await consume(event), { recorded: 'resumed' });
    assert.deepEqual(await consume(event), { recorded: 'duplicate' });
    assert.deepEqual(queue.sent, [{ taskId, reason: 'resume' }]);
    await run(taskId, 'resume');
    const task = await read(taskId);
    assert.equal(task.status, 'completed');
    assert.deepEqual(task.status === 'completed' && task.result['structuredContent'], { release: 'web@1.4.2', verified: true });
    assert.deepEqual(await consume(event), { recorded: 'ended' });
    assert.deepEqual(
      engine.calls.map(([call]) => call),
      ['start'],
      'no describe: the output came with the event',
    );
  });

  it('SUCCEEDED without the output in the event: one DescribeExecution reads it', async () => {
    const { taskId, execution } = await started();
    engine.end(execution, 'SUCCEEDED', { output: '{"big":true}' });
    await consume(statusChangeEvent(execution, 'SUCCEEDED', { output: null, outputIncluded: false }));
    await run(taskId, 'resume');
    assert.deepEqual(
      (await read(taskId)).status === 'completed' &&
        ((await read(taskId)) as { result: Record<string, unknown> }).result['structuredContent'],
      { big: true },
    );
    assert.equal(engine.calls.filter(([call]) => call === 'describe').length, 1);
  });

  it('FAILED: a tool error naming the error and the cause', async () => {
    const { taskId, execution } = await started();
    await consume(statusChangeEvent(execution, 'FAILED', { error: 'Rejected', cause: 'not this week' }));
    await run(taskId, 'resume');
    assert.equal(text(await read(taskId)), 'The workflow deploy-release failed: Rejected (not this week)');
  });

  it('ABORTED outside this server: cancelled, saying so', async () => {
    const { taskId, execution } = await started();
    await consume(statusChangeEvent(execution, 'ABORTED', { error: 'Operator', cause: 'stopped in the console' }));
    await run(taskId, 'resume');
    const task = await read(taskId);
    assert.equal(task.status, 'cancelled');
    assert.equal(task.statusMessage, 'The workflow deploy-release was stopped outside this server (Operator)');
  });

  it('an event of an execution the task does not follow is not taken', async () => {
    const { taskId } = await started();
    const other = `${MACHINE.replace(':stateMachine:', ':execution:')}-other:${taskId}`;
    assert.deepEqual(await consume(statusChangeEvent(other, 'SUCCEEDED', { output: '1' })), { recorded: 'not-followed' });
    assert.equal((await read(taskId)).status, 'working');
  });

  it('a lost event: the sweeper wakes the task at 15 minutes for one describe; running, it waits again (next look at 45)', async () => {
    const { taskId, execution } = await started();
    clock = T0 + FIRST_CHECK_MS;
    await run(taskId, 'sweep');
    assert.deepEqual(engine.calls.at(-1), ['describe', execution]);
    assert.equal((await read(taskId)).sweepAt, T0 + 45 * 60_000);
    engine.end(execution, 'SUCCEEDED', { output: '{"late":true}' });
    clock = T0 + 45 * 60_000;
    await run(taskId, 'sweep');
    assert.equal((await read(taskId)).status, 'completed');
    assert.equal(engine.calls.filter(([call]) => call === 'describe').length, 2);
  });

  it('a run that is not due for a look makes no call', async () => {
    const { taskId } = await started();
    clock = T0 + 60_000;
    await run(taskId, 'sweep');
    assert.deepEqual(engine.calls.length, 1);
    assert.equal((await read(taskId)).status, 'working');
  });
});

describe('questions from task-token states', () => {
  it('a question wakes the task, which asks it as the state asked; the answer goes back once and the token goes', async () => {
    const { taskId, execution } = await started();
    assert.deepEqual(await receive(question(taskId, execution, 'token-1')), { status: 'resumed' });
    await run(taskId, 'resume');
    let task = await read(taskId);
    assert.equal(task.status, 'input_required');
    const request = task.status === 'input_required' ? task.inputRequests['approval']! : undefined;
    assert.ok(request && forPersonOnly(request));
    assert.equal(request.params?.['message'], 'Deploy?');
    const answered = await store.answer(
      taskId,
      OWNER,
      { approval: { action: 'accept', content: { approve: true, comment: 'go' } } },
      clock,
    );
    assert.equal(answered.resumed, true);
    await run(taskId, 'resume');
    // Who decided goes with the answer (the owner's in-band answer is their decision).
    assert.deepEqual(engine.answers, [{ token: 'token-1', output: '{"approve":true,"comment":"go","decidedBy":{"subject":"alice"}}' }]);
    task = await read(taskId);
    assert.equal(task.status, 'working');
    assert.equal(task.workflow?.tokens, undefined);
    await run(taskId, 'resume');
    assert.equal(engine.answers.length, 1, 'a replay sends nothing again');
  });

  it('a rejection goes back as Rejected, naming the decider, with its comment, for the machine to Catch', async () => {
    const { taskId, execution } = await started();
    await receive(question(taskId, execution, 'token-1'));
    await run(taskId, 'resume');
    await store.answer(taskId, OWNER, { approval: { action: 'accept', content: { approve: false, comment: 'not this week' } } }, clock);
    await run(taskId, 'resume');
    assert.deepEqual(engine.answers, [{ token: 'token-1', failure: { error: REJECTED_ERROR, cause: 'Rejected by alice: not this week' } }]);
  });

  it('two questions in one run: each with its own token, the second under a key of its own', async () => {
    const { taskId, execution } = await started();
    await receive(question(taskId, execution, 'token-1'));
    await run(taskId, 'resume');
    await store.answer(taskId, OWNER, { approval: { action: 'accept', content: { approve: true } } }, clock);
    await run(taskId, 'resume');
    assert.deepEqual(await receive(question(taskId, execution, 'token-2')), { status: 'resumed' });
    await run(taskId, 'resume');
    const task = await read(taskId);
    assert.deepEqual(task.status === 'input_required' && Object.keys(task.inputRequests), ['approval#2']);
    await store.answer(taskId, OWNER, { 'approval#2': { action: 'accept', content: { approve: true } } }, clock);
    await run(taskId, 'resume');
    assert.deepEqual(
      engine.answers.map((answer) => answer.token),
      ['token-1', 'token-2'],
    );
  });

  it('the same state invoking the receiver twice is one question', async () => {
    const { taskId, execution } = await started();
    await receive(question(taskId, execution, 'token-1'));
    assert.deepEqual(await receive(question(taskId, execution, 'token-1')), { status: 'duplicate' });
  });

  it('an answer after the state stopped waiting ends the question, not the task', async () => {
    const { taskId, execution } = await started();
    await receive(question(taskId, execution, 'token-1', { state: 'Approval' }));
    await run(taskId, 'resume');
    engine.goneTokens.add('token-1');
    await store.answer(taskId, OWNER, { approval: { action: 'accept', content: { approve: true } } }, clock);
    await run(taskId, 'resume');
    const task = await read(taskId);
    assert.equal(task.status, 'working');
    assert.equal(task.statusMessage, 'The workflow stopped waiting at Approval before the answer to "approval" reached it');
    assert.equal(task.workflow?.tokens, undefined);
  });

  it('a question from another execution, for an ended task, or malformed, is refused with a named error; no token is logged', async () => {
    const { taskId, execution } = await started();
    const other = executionArnOf(MACHINE.replace('deploy-release', 'other'), taskId);
    await assert.rejects(receive(question(taskId, other, 'token-x')), { name: REFUSED_ERROR });
    await assert.rejects(receive(question(taskId, execution, 'token-y', { key: 'no spaces' })), { name: MALFORMED_ERROR });
    await assert.rejects(receive({ ...question(taskId, execution, 'token-z'), taskId: 'another-task' }), {
      name: MALFORMED_ERROR,
    });
    await consume(statusChangeEvent(execution, 'FAILED'));
    await run(taskId, 'resume');
    await assert.rejects(receive(question(taskId, execution, 'token-w')), { name: REFUSED_ERROR });
    assert.doesNotMatch(JSON.stringify(logged), /token-[xyzw1]/);
    assert.ok(logged.some((event) => event.event === 'workflow-refused' && event['reason'] === 'not-followed'));
  });

  it('a question before the run recorded its execution is taken from the one its binding names', async () => {
    const taskId = await created();
    const execution = executionArnOf(MACHINE, taskId);
    assert.deepEqual(await receive(question(taskId, execution, 'token-1')), { status: 'asked' });
    await run(taskId);
    assert.equal((await read(taskId)).status, 'input_required');
  });

  it('progress is the status while the execution runs, and the status it suspends with', async () => {
    const { taskId, execution } = await started();
    assert.deepEqual(await receive({ taskId, execution, progress: 'Deploying to eu-west-1, 1 of 2' }), { status: 'recorded' });
    assert.equal((await read(taskId)).statusMessage, 'Deploying to eu-west-1, 1 of 2');
    await receive(question(taskId, execution, 'token-1'));
    await run(taskId, 'resume');
    await store.answer(taskId, OWNER, { approval: { action: 'accept', content: { approve: true } } }, clock);
    await run(taskId, 'resume');
    assert.equal((await read(taskId)).statusMessage, 'Deploying to eu-west-1, 1 of 2');
  });
});

describe('cancel', () => {
  it('of a suspended task: its run stops the execution once, naming the cancel, and the task ends cancelled', async () => {
    const { taskId, execution } = await started();
    assert.equal((await store.cancel(taskId, OWNER, clock)).result, 'requested');
    await run(taskId, 'sweep');
    await run(taskId, 'sweep');
    assert.deepEqual(
      engine.calls.filter(([call]) => call === 'stop'),
      [['stop', execution]],
    );
    assert.equal(engine.executions.get(execution)?.error, CANCELLED_ERROR);
    assert.match(engine.executions.get(execution)?.cause ?? '', /Cancelled by the caller of task/);
    assert.equal((await read(taskId)).status, 'cancelled');
    // The execution's ABORTED event comes after: it changes nothing.
    assert.deepEqual(await consume(statusChangeEvent(execution, 'ABORTED', { error: CANCELLED_ERROR })), { recorded: 'ended' });
  });

  it("an operator's reason is the task's end and the stop's cause, as for a plain tool", async () => {
    const { taskId, execution } = await started();
    await receive(question(taskId, execution, 'token-1'));
    await run(taskId, 'resume');
    const reason = 'Ended by an operator: release frozen';
    assert.equal((await store.cancel(taskId, OWNER, clock, { statusMessage: reason })).result, 'requested');
    await run(taskId, 'sweep');
    assert.equal(engine.executions.get(execution)?.cause, reason);
    const task = await read(taskId);
    assert.equal(task.status, 'cancelled');
    assert.equal(task.statusMessage, reason);
  });

  it('of a task waiting on one of its questions: the execution is stopped too', async () => {
    const { taskId, execution } = await started();
    await receive(question(taskId, execution, 'token-1'));
    await run(taskId, 'resume');
    assert.equal((await store.cancel(taskId, OWNER, clock)).result, 'requested');
    await run(taskId, 'sweep');
    assert.equal(engine.executions.get(execution)?.status, 'ABORTED');
    const task = await read(taskId);
    assert.equal(task.status, 'cancelled');
    assert.equal(task.workflow?.tokens, undefined);
  });

  it('racing the end: an end recorded first wins over a later cancel request, which ends the task without a stop', async () => {
    const { taskId, execution } = await started();
    await consume(statusChangeEvent(execution, 'SUCCEEDED', { output: '{}' }));
    assert.equal((await store.cancel(taskId, OWNER, clock)).result, 'cancelled');
    assert.equal(engine.calls.filter(([call]) => call === 'stop').length, 0);
    assert.equal((await read(taskId)).status, 'cancelled');
  });

  it('racing the end: a cancel recorded first ends the task cancelled, its run finding nothing left to stop', async () => {
    const { taskId, execution } = await started();
    await store.cancel(taskId, OWNER, clock);
    engine.end(execution, 'SUCCEEDED', { output: '{}' });
    assert.deepEqual(await consume(statusChangeEvent(execution, 'SUCCEEDED', { output: '{}' })), { recorded: 'resumed' });
    await run(taskId, 'resume');
    assert.equal((await read(taskId)).status, 'cancelled');
    assert.equal(engine.calls.filter(([call]) => call === 'stop').length, 0);
    assert.equal(engine.executions.get(execution)?.status, 'SUCCEEDED');
  });

  it('racing the end: a stop of an execution that ended meanwhile changes nothing, and the task ends cancelled', async () => {
    const { taskId, execution } = await started();
    await store.cancel(taskId, OWNER, clock);
    engine.end(execution, 'SUCCEEDED', { output: '{}' });
    await run(taskId, 'sweep');
    assert.equal((await read(taskId)).status, 'cancelled');
    assert.equal(engine.calls.filter(([call]) => call === 'stop').length, 1);
    assert.equal(engine.executions.get(execution)?.status, 'SUCCEEDED');
    assert.deepEqual(await consume(statusChangeEvent(execution, 'SUCCEEDED', { output: '{}' })), { recorded: 'ended' });
  });
});
