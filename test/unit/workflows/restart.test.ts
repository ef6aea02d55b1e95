/**
 * The restart rule (`TaskActions.restartExecution`) on the in-memory store
 * and queue, with a stand-in engine: an execution replaced by a restart has
 * its questions withdrawn at once; a decision recorded for it reaches the
 * restarted execution when that one asks the same question, and is marked
 * not delivered otherwise; never is the old token answered.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import * as z from 'zod';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { principalFor } from '../../../shared/auth/principal.ts';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { decisionNodes } from '../../../shared/console/view.ts';
import { restartedName } from '../../../shared/engines/names.ts';
import { executionArnOf } from '../../../shared/engines/stepfunctions/index.ts';
import { type KeyPurpose, purposeKey } from '../../../shared/keys.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { defineWorkflowTool, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { processTaskMessage, type WorkerDeps } from '../../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import type { TaskRecord } from '../../../shared/tasks/model.ts';
import { RESTARTED_MESSAGE } from '../../../shared/tasks/workflows-decisions.ts';
import { withdrawnKeys } from '../../../shared/tasks/workflows-model.ts';
import { workflowEventConsumer } from '../../../shared/workflows/consumer.ts';
import { workflowReceiver } from '../../../shared/workflows/receiver.ts';
import { REJECTED_ERROR } from '../../../shared/workflows/replies.ts';
import { bindWorkflows } from '../../../shared/workflows/tool.ts';
import { newTask, storePolicy } from '../../support/factories.ts';
import { FakeWorkflowEngine, MACHINE, statusChangeEvent } from '../../support/workflow-fakes.ts';

const OWNER = 'alice';
const BOB = { principal: principalFor('https://id.example.com', 'bob'), name: 'Bob', approver: true };
const T0 = 1_700_000_000_000;
const POLICY = storePolicy({ leaseMs: 10_000, sweepGraceMs: 5_000 });
const secret = randomBytes(32);
const keys = async (purpose: KeyPurpose) => purposeKey(secret, purpose);
const SCHEMA = { type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } }, required: ['approve'] };

const release = defineWorkflowTool({
  name: 'release',
  description: '',
  inputSchema: z.object({ release: z.string() }),
  workflow: { name: 'deploy-release', definition: 'unused.asl.json' },
});

let clock: number;
let store: InMemoryTaskStore;
let queue: InMemoryTaskQueue;
let engine: FakeWorkflowEngine;
const log = (_event: LogEvent) => {};
const bindings = { release: MACHINE };
const tools = (): ReadonlyMap<string, ToolDefinition> =>
  bindWorkflows(new Map([[release.name, release]]), { engine, bindings, store, keys, log });
const deps = (): WorkerDeps => ({
  store,
  queue,
  tools: tools(),
  log,
  now: () => clock,
  approvers: true,
  config: { ...DEFAULT_SETTINGS, leaseMs: POLICY.leaseMs, cancelCheckMs: 50, progressIntervalMs: 0 },
});
const actions = () => new TaskActions({ store, queue, log, now: () => clock });
const receive = (payload: unknown) => workflowReceiver({ store, queue, keys, bindings, log, now: () => clock })(payload);
const consume = (event: unknown) => workflowEventConsumer({ store, queue, bindings, log, now: () => clock })(event);
const run = (taskId: string, reason: 'start' | 'resume' | 'sweep' = 'resume') => processTaskMessage({ taskId, reason }, deps());
const read = async (taskId: string): Promise<TaskRecord> => (await store.get(taskId, OWNER, clock))!;
const open = (task: TaskRecord) => (task.status === 'input_required' ? Object.keys(task.inputRequests) : []);

/** A task-token state's payload from `execution` (its name: the task id, with a restart's suffix). */
function question(execution: string, token: string, message = 'Deploy web@1.4.2?') {
  const name = execution.slice(execution.lastIndexOf(':') + 1);
  return { taskId: name, execution, key: 'approval', message, requestedSchema: SCHEMA, answeredBy: 'person', token };
}

/** A task waiting on the first execution's approval question. */
async function waitingOnApproval(): Promise<{ taskId: string; first: string; second: string }> {
  const { task } = await store.create(
    newTask({ owner: OWNER, tool: 'release', arguments: { release: 'web@1.4.2' }, now: clock, clientCapabilities: { elicitation: {} } }),
  );
  const taskId = task.taskId;
  await run(taskId, 'start');
  const first = executionArnOf(MACHINE, taskId);
  await receive(question(first, 'token-1'));
  await run(taskId);
  assert.deepEqual(open(await read(taskId)), ['approval']);
  queue.sent.length = 0;
  return { taskId, first, second: executionArnOf(MACHINE, restartedName(taskId, 1)) };
}

beforeEach(() => {
  clock = T0;
  store = new InMemoryTaskStore(POLICY);
  queue = new InMemoryTaskQueue();
  engine = new FakeWorkflowEngine();
  engine.now = () => clock;
});

describe('a restart withdraws the replaced execution’s questions at once', () => {
  it('an open question leaves the task and its page; the task resumes to wait on the new execution, which asks again', async () => {
    const { taskId, first, second } = await waitingOnApproval();
    const restarted = await actions().restartExecution(taskId, second, first);
    assert.deepEqual(restarted, { follows: second, resumes: true, withdrawn: ['approval'] });
    let task = await read(taskId);
    assert.equal(task.status, 'working');
    assert.equal(task.statusMessage, RESTARTED_MESSAGE);
    assert.equal(task.workflow?.execution, second);
    assert.equal(task.workflow?.tokens, undefined, 'the replaced execution’s token is gone');
    assert.deepEqual(withdrawnKeys(task.callbacks), ['approval']);
    assert.deepEqual(queue.sent, [{ taskId, reason: 'resume' }], 'resumed by the one rule');
    // A decision posted for the withdrawn question records nothing and resumes nothing.
    const late = await store.decide(taskId, BOB, { approval: { action: 'accept', content: { approve: true } } }, clock);
    assert.deepEqual(late, { accepted: [], resumed: false });
    assert.equal((await read(taskId)).decisions, undefined);
    await run(taskId);
    assert.equal((await read(taskId)).status, 'working');
    assert.equal((await receive(question(second, 'token-2'))).status, 'resumed');
    await run(taskId);
    task = await read(taskId);
    assert.deepEqual(open(task), ['approval#2'], 'asked anew, under a key of its own');
    await store.decide(taskId, BOB, { 'approval#2': { action: 'accept', content: { approve: true } } }, clock);
    await run(taskId);
    assert.deepEqual(engine.answers, [{ token: 'token-2', output: '{"approve":true,"decidedBy":{"subject":"bob","name":"Bob"}}' }]);
  });

  it('a decision recorded but not yet delivered reaches the restarted execution when it asks the same: nobody is asked again', async () => {
    const { taskId, first, second } = await waitingOnApproval();
    await store.decide(taskId, BOB, { approval: { action: 'accept', content: { approve: false, comment: 'freeze' } } }, clock);
    // Killed before the run sent it: the restart comes first.
    const restarted = await actions().restartExecution(taskId, second, first);
    assert.deepEqual(restarted, { follows: second, resumes: false, withdrawn: [] });
    await run(taskId);
    assert.deepEqual(engine.answers, [], 'nothing goes to the replaced execution');
    assert.equal((await receive(question(second, 'token-2'))).status, 'resumed');
    await run(taskId);
    assert.deepEqual(engine.answers, [{ token: 'token-2', failure: { error: REJECTED_ERROR, cause: 'Rejected by Bob: freeze' } }]);
    const task = await read(taskId);
    assert.deepEqual(open(task), []);
    assert.equal(task.decisions?.['approval']?.notDelivered, undefined);
  });

  it('a decision delivered before the restart is delivered again to the restarted execution asking the same', async () => {
    const { taskId, first, second } = await waitingOnApproval();
    await store.decide(taskId, BOB, { approval: { action: 'accept', content: { approve: true } } }, clock);
    await run(taskId);
    assert.deepEqual(
      engine.answers.map((answer) => answer.token),
      ['token-1'],
    );
    await actions().restartExecution(taskId, second, first);
    await receive(question(second, 'token-2'));
    await run(taskId);
    assert.deepEqual(
      engine.answers.map((answer) => answer.token),
      ['token-1', 'token-2'],
    );
    assert.equal((await read(taskId)).status, 'working');
  });

  it('asked otherwise (another message), the decision is not delivered: its decider is told, and the question is asked anew', async () => {
    const { taskId, first, second } = await waitingOnApproval();
    await store.decide(taskId, BOB, { approval: { action: 'accept', content: { approve: true } } }, clock);
    await actions().restartExecution(taskId, second, first);
    await receive(question(second, 'token-2', 'Deploy web@1.4.3?'));
    await run(taskId);
    const task = await read(taskId);
    assert.equal(task.decisions?.['approval']?.notDelivered, true);
    assert.deepEqual(open(task), ['approval#2']);
    assert.deepEqual(engine.answers, []);
  });

  it('a restarted execution that ends without asking it leaves the decision not delivered, as the page says', async () => {
    const { taskId, first, second } = await waitingOnApproval();
    await store.decide(taskId, BOB, { approval: { action: 'accept', content: { approve: true } } }, clock);
    await actions().restartExecution(taskId, second, first);
    await consume(statusChangeEvent(second, 'SUCCEEDED', { output: '{}' }));
    const { decisions } = await read(taskId);
    assert.equal(decisions?.['approval']?.notDelivered, true);
    assert.match(JSON.stringify(decisionNodes(decisions, clock)), /Bob.*Not delivered: the workflow restarted; decide again/);
  });

  it('a task that follows another execution, or has ended, is left as it is', async () => {
    const { taskId, first, second } = await waitingOnApproval();
    const other = executionArnOf(MACHINE, restartedName(taskId, 7));
    assert.deepEqual(await actions().restartExecution(taskId, second, other), { follows: first, resumes: false, withdrawn: [] });
    assert.deepEqual(open(await read(taskId)), ['approval']);
  });
});
