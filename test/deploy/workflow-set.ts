/**
 * The deployment lane's workflow set (run by `run.test.ts` on a deployment
 * serving deploy_release): the worker's bundle starts the execution against
 * the Step Functions fake and suspends; the test plays the machine's states
 * as Step Functions would (the progress state and the task-token state invoke
 * the receiver's bundle with the payloads of the template's definition, a
 * fresh token for the question); the worker's bundle sends the answer back;
 * the execution's end, a status-change event as EventBridge delivers it,
 * reaches the events consumer's bundle through the template's rule. A cancel
 * mid-run stops the execution, naming it. Every call goes through the
 * proxies, so the IAM check that follows covers them.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CANCELLED_ERROR } from '../../shared/workflows/outcome.ts';
import { getTask, resultOf, rpc, type TaskView } from '../support/wire.ts';
import { statusChangeEvent } from '../support/workflow-fakes.ts';
import { type Json, resourcesOf } from './assembly.ts';
import type { Deployment } from './deployment.ts';

const ARGS = { release: 'web@1.4.2', regions: ['eu-west-1'] };
const OUTPUT = { release: 'web@1.4.2', deployed: [{ region: 'eu-west-1', status: 'deployed' }], verified: true };

/** Waits (generously: the machine may be busy) until `find` gives a value. */
async function until<T>(what: string, find: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const taskWhere = (d: Deployment, taskId: string, what: string, predicate: (task: TaskView) => boolean) =>
  until(what, async () => {
    const task = await getTask(d.url, taskId);
    return predicate(task) ? task : undefined;
  });

/**
 * What a state of deploy_release's machine sends the receiver: its
 * definition's `Payload`, the context paths filled in as Step Functions
 * would, and the values of intrinsic functions (`States.Format`) given.
 */
function payloadOf(d: Deployment, state: string, execution: { executionArn: string; name: string }, given: Json, token?: string): Json {
  const [, machine] = resourcesOf(d.assembly.template, 'AWS::StepFunctions::StateMachine')[0]!;
  const definition = JSON.parse(String(machine['Properties']['DefinitionString'])) as Json;
  const context: Record<string, string | undefined> = {
    '$$.Execution.Name': execution.name,
    '$$.Execution.Id': execution.executionArn,
    '$$.State.Name': state,
    '$$.Task.Token': token,
  };
  const payload = definition['States'][state]['Parameters']['Payload'] as Json;
  return Object.fromEntries(
    Object.entries(payload).map(([key, value]) => {
      if (!key.endsWith('.$')) return [key, value];
      const name = key.slice(0, -2);
      const filled = Object.hasOwn(given, name) ? given[name] : context[String(value)];
      assert.ok(filled !== undefined, `${state}: no value for ${key} (${value})`);
      return [name, filled];
    }),
  );
}

/** A new deploy_release task and the execution the worker started for it (named after it). */
async function started(d: Deployment) {
  const created = resultOf(await rpc(d.url, 'tools/call', { name: 'deploy_release', arguments: ARGS }));
  assert.equal(created['resultType'], 'task', JSON.stringify(created));
  const taskId = String(created['taskId']);
  const execution = await until('the execution', () => [...d.states.executions.values()].find((e) => e.name === taskId));
  return { taskId, execution };
}

export function workflowSet(target: () => Deployment): void {
  it('runs deploy_release as one execution: started once, a progress, a question answered back, the end by its event', async () => {
    const d = target();
    const { taskId, execution } = await started(d);
    // Named after the task, the arguments as canonical JSON (keys sorted), on the machine the template creates.
    assert.equal(execution.input, JSON.stringify({ regions: ARGS.regions, release: ARGS.release }));
    assert.match(execution.stateMachineArn, /:stateMachine:McpTasks-deploy_release$/);
    await taskWhere(d, taskId, 'the suspended task', (task) => task.statusMessage === 'Running deploy-release');

    // The progress state: a fire-and-forget invoke of the receiver.
    await d.functions.workflowReceiver.invoke(payloadOf(d, 'Checking', execution, { progress: 'Checking web@1.4.2' }));
    await taskWhere(d, taskId, 'the progress message', (task) => task.statusMessage === 'Checking web@1.4.2');

    // The task-token state: a fresh token in the payload; the task asks the question.
    const token = d.states.mintToken(execution.executionArn);
    const question = payloadOf(d, 'Approval', execution, { message: 'Deploy web@1.4.2 to ["eu-west-1"]?' }, token);
    await d.functions.workflowReceiver.invoke(question);
    const waiting = await taskWhere(d, taskId, 'the question', (task) => task.status === 'input_required');
    assert.deepEqual(Object.keys(waiting.inputRequests ?? {}), ['approval']);
    assert.ok(!JSON.stringify(waiting).includes(token), 'the task token stays sealed on the row');
    assert.ok(!JSON.stringify(d.bus.events).includes(token), 'and out of the events');
    const update = await rpc(d.url, 'tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { approve: true, comment: 'go' } } },
    });
    assert.equal(update.status, 200, update.text);
    // The worker sends the answer back (SendTaskSuccess) and suspends again.
    const answer = await until('the answer', () => d.states.tokens.get(token)?.answer);
    // A question for a person: who decided goes back with the answer (the open endpoint's one principal).
    assert.deepEqual(answer.output, { approve: true, comment: 'go', decidedBy: { subject: 'local' } });
    await taskWhere(d, taskId, 'the task suspended again', (task) => task.status === 'working');

    // The end: the event leaves the output out (over 248 KB), so the worker describes the execution once.
    const ended = d.states.end(execution.executionArn, 'SUCCEEDED', OUTPUT, false);
    assert.deepEqual(
      await d.deliver(ended),
      [{ recorded: 'resumed' }],
      'the rule reaches the consumer: the end recorded, the task resumed',
    );
    const done = await taskWhere(d, taskId, 'the task to end', (task) => ['completed', 'failed', 'cancelled'].includes(task.status));
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.['structuredContent'], OUTPUT);
    assert.deepEqual(done.result?.['content'], [{ type: 'text', text: 'Deployed web@1.4.2 to eu-west-1 and verified it' }]);
    // The same event again changes nothing; one not of a bound machine reaches no target.
    const [again] = (await d.deliver(ended)) as Array<{ recorded?: string }>;
    assert.notEqual(again?.recorded, 'resumed');
    const foreign = statusChangeEvent(execution.executionArn.replace('McpTasks-deploy_release', 'elsewhere'), 'SUCCEEDED');
    assert.deepEqual(await d.deliver(foreign), []);
    assert.equal((await getTask(d.url, taskId)).status, 'completed');
  });

  it("stops deploy_release's execution on a cancel, naming it, and the task ends cancelled", async () => {
    const d = target();
    const { taskId, execution } = await started(d);
    await taskWhere(d, taskId, 'the suspended task', (task) => task.statusMessage === 'Running deploy-release');
    const cancel = await rpc(d.url, 'tasks/cancel', { taskId });
    assert.equal(cancel.status, 200, cancel.text);
    // The cancel made the suspended task due and queued its resume: the worker stops the execution.
    const done = await taskWhere(d, taskId, 'the task to end', (task) => ['completed', 'failed', 'cancelled'].includes(task.status));
    assert.equal(done.status, 'cancelled', JSON.stringify(done));
    assert.equal(execution.status, 'ABORTED');
    assert.equal(execution.error, CANCELLED_ERROR);
    assert.match(String(execution.cause), new RegExp(`Cancelled by the caller of task ${taskId}`));
    // Its ABORTED event comes after the task ended: it changes nothing.
    await d.deliver(
      statusChangeEvent(execution.executionArn, 'ABORTED', { error: execution.error ?? null, cause: execution.cause ?? null }),
    );
    assert.equal((await getTask(d.url, taskId)).status, 'cancelled');
  });
}
