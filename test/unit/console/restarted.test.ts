/**
 * An approver's decision posted on a question a restart of its workflow
 * withdrew (the memory store, the worker with a stand-in engine, a stand-in
 * sign-in): refused with the 409 "Not delivered" page, nothing recorded,
 * whether the task has no question for a person open meanwhile or the
 * restarted execution has asked it anew; the question asked anew decides.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import { restartedName } from '../../../shared/engines/names.ts';
import { executionArnOf } from '../../../shared/engines/stepfunctions/index.ts';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { defineWorkflowTool } from '../../../shared/runtime/tool.ts';
import { processTaskMessage } from '../../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import type { TaskRecord } from '../../../shared/tasks/model.ts';
import { NOT_DELIVERED_MESSAGE } from '../../../shared/tasks/workflows-model.ts';
import { workflowReceiver } from '../../../shared/workflows/receiver.ts';
import { bindWorkflows } from '../../../shared/workflows/tool.ts';
import { newTask, storePolicy } from '../../support/factories.ts';
import { FakeWorkflowEngine, MACHINE } from '../../support/workflow-fakes.ts';

const ORIGIN = 'https://tasks.example';
const OWNER = 'alice';
const ADA = 'jwt|ada';
const T0 = 1_700_000_000_000;
const POLICY = storePolicy({ leaseMs: 10_000, sweepGraceMs: 5_000 });
const SCHEMA = { type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } }, required: ['approve'] };
const secret = randomBytes(32);
const keys = purposeKeys(async () => secret);

const release = defineWorkflowTool({
  name: 'release',
  description: '',
  inputSchema: z.object({ release: z.string() }),
  workflow: { name: 'deploy-release', definition: 'unused.asl.json' },
});

/** The console of an approver (Ada), the worker and the receiver, on one memory store; what the console logs. */
function world() {
  const now = T0;
  const store = new InMemoryTaskStore({ ...POLICY, maxInputWaitMs: 86_400_000 });
  const queue = new InMemoryTaskQueue();
  const engine = new FakeWorkflowEngine();
  engine.now = () => now;
  const logged: LogEvent[] = [];
  const log = (event: LogEvent) => void logged.push(event);
  const actions = new TaskActions({ store, queue, log, now: () => now });
  const tools = bindWorkflows(new Map([[release.name, release]]), { engine, bindings: { release: MACHINE }, store, keys, log });
  const config = { ...DEFAULT_SETTINGS, leaseMs: POLICY.leaseMs, cancelCheckMs: 50, progressIntervalMs: 0 };
  const run = (taskId: string, reason: 'start' | 'resume' = 'resume') =>
    processTaskMessage({ taskId, reason }, { store, queue, tools, log, now: () => now, approvers: true, config });
  const receive = workflowReceiver({ store, queue, keys, bindings: { release: MACHINE }, log, now: () => now });
  const app = createConsoleApp({
    actions,
    mode: { kind: 'sign-in', issuer: `${ORIGIN}/issuer`, clientId: 'console' },
    links: new DeploymentLinks(`${ORIGIN}/mcp`),
    keys,
    signOutRecords: store,
    signInNameRecords: store,
    config: { retentionMs: POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 86_400_000 },
    approvers: { groups: ['approvers'], scopes: [] },
    localPrincipal: 'local',
    signIn: {
      start: async (next) => ({ url: `${ORIGIN}/issuer`, state: { state: 's', nonce: 'n', verifier: 'v', next } }),
      finish: async () => ({ principal: ADA, name: 'Ada', claims: { groups: ['approvers'], scopes: [] } }),
    },
    log,
    now: () => now,
  });
  return { store, now, actions, run, receive, app, logged };
}

/** A task-token state's approval question from `execution`. */
function question(execution: string, token: string) {
  const name = execution.slice(execution.lastIndexOf(':') + 1);
  return { taskId: name, execution, key: 'approval', message: 'Deploy web@1.4.2?', requestedSchema: SCHEMA, answeredBy: 'person', token };
}

describe('a decision on a question a restart withdrew', () => {
  it('is refused with "Not delivered" (409), with or without a question for a person open meanwhile; the one asked anew decides', async () => {
    const { store, now, actions, run, receive, app, logged } = world();
    const { task } = await store.create(
      newTask({ owner: OWNER, tool: 'release', arguments: { release: 'web@1.4.2' }, now, clientCapabilities: { elicitation: {} } }),
    );
    const { taskId } = task;
    const read = async (): Promise<TaskRecord> => (await store.get(taskId, OWNER, now))!;
    await run(taskId, 'start');
    const first = executionArnOf(MACHINE, taskId);
    await receive(question(first, 'token-1'));
    await run(taskId);
    assert.equal((await read()).status, 'input_required');

    // Ada signs in and opens the page while the first execution's approval waits.
    const cookieOf = (response: Response, name: string) =>
      (response.headers.getSetCookie().find((line) => line.startsWith(`__Host-${name}=`)) ?? '').split(';')[0]!;
    const state = cookieOf(await app.request('/console/sign-in'), 'mcp-tasks-sign-in');
    const cookie = cookieOf(await app.request('/console/callback?code=c&state=s', { headers: { cookie: state } }), 'mcp-tasks-console');
    const page = await (await app.request(`/console/tasks/${taskId}`, { headers: { cookie } })).text();
    const token = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? assert.fail('a form token');
    const post = (key: string) =>
      app.request(`/console/tasks/${taskId}/answer`, {
        method: 'POST',
        headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, key, 'field.approve': 'false' }).toString(),
      });
    const refusals = () => logged.filter((event) => event['event'] === 'console-answer-refused' && event['reason'] === 'withdrawn').length;

    // The stack restarts the execution: its question is withdrawn, and nothing for a person is open until it is asked anew.
    const second = executionArnOf(MACHINE, restartedName(taskId, 1));
    await actions.restartExecution(taskId, second, first);
    assert.equal((await read()).status, 'working');
    const withNothingOpen = await post('approval');
    assert.equal(withNothingOpen.status, 409);
    const text = await withNothingOpen.text();
    assert.match(text, /<h1>Not delivered<\/h1>/);
    assert.match(text, new RegExp(`${NOT_DELIVERED_MESSAGE}\\. Nothing was recorded\\.`));
    assert.equal(refusals(), 1);
    assert.equal((await read()).decisions, undefined);
    assert.equal((await post('no-such-key')).status, 404, 'a key no restart withdrew is not found, as before');

    // The restarted execution asks it anew, under a key of its own: the old key is refused the same way.
    await run(taskId);
    await receive(question(second, 'token-2'));
    await run(taskId);
    const asked = await read();
    assert.deepEqual(asked.status === 'input_required' ? Object.keys(asked.inputRequests) : [], ['approval#2']);
    const withAnotherOpen = await post('approval');
    assert.equal(withAnotherOpen.status, 409);
    assert.match(await withAnotherOpen.text(), new RegExp(NOT_DELIVERED_MESSAGE));
    assert.equal(refusals(), 2);
    assert.equal((await read()).decisions, undefined);

    // The question asked anew takes the decision.
    const decided = await post('approval#2');
    assert.equal(decided.status, 303);
    assert.deepEqual(Object.keys((await read()).decisions ?? {}), ['approval#2']);
  });
});
