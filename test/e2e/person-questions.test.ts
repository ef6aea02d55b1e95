/**
 * Questions for a person over the wire, on the local stack (an open console
 * on loopback, so its task page may be named; approvers named): a
 * task-declaring client with `elicitation.url` gets a URL-mode elicitation
 * naming the task's page, and its accept decides nothing; a client without
 * URL mode gets the form, with no link in it, and its answer is recorded as
 * the caller's decision and handed to the tool; a four-eyes question is
 * refused to its caller through `tasks/update` and through `task_answer`,
 * and stays open.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import {
  errorOf,
  getTask,
  pollUntil,
  type RpcTarget,
  resultOf,
  rpc,
  TASKS_CAPABILITIES,
  TASKS_EXTENSION,
  throughHandler,
  wireHelpers,
} from '../support/wire.ts';

/** A task-declaring client that also declares URL-mode elicitation. */
const URL_MODE = { elicitation: { form: {}, url: {} }, extensions: { [TASKS_EXTENSION]: {} } };

let stack: LocalStack | undefined;
let dataDir: string | undefined;
let mcp: RpcTarget;
let base: string;

const { createTask, updateTask, inputRequired, terminal } = wireHelpers(() => mcp);

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-person-'));
  stack = await startLocalStack({ port: 0, dataDir, log: () => {}, env: { TASKS_APPROVERS: 'group:approvers' } });
  mcp = throughHandler(stack.handlers.mcp);
  base = stack.url.replace(/\/mcp$/, '');
});

after(async () => {
  await stack?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('questions for a person', { concurrency: true }, () => {
  it('go to a URL-mode client as the task page to decide on; its accept leaves the task waiting with the entry listed', async () => {
    const { taskId } = await createTask('approval_gate', { action: 'deploy web' }, { capabilities: URL_MODE });
    await pollUntil(mcp, taskId, inputRequired);
    const asUrl = await getTask(mcp, taskId, { capabilities: URL_MODE });
    const request = asUrl.inputRequests?.['approval'];
    assert.equal(request?.method, 'elicitation/create');
    assert.equal(request?.params?.['mode'], 'url');
    assert.equal(request?.params?.['url'], `${base}/console/tasks/${taskId}`);
    assert.equal(request?.params?.['message'], 'Approve: deploy web?');
    assert.match(String(request?.params?.['elicitationId']), /^[\w-]{32}$/);
    assert.equal('requestedSchema' in (request?.params ?? {}), false);
    assert.match(asUrl.statusMessage ?? '', new RegExp(`on the task's page: ${base}/console/tasks/${taskId}`));
    const again = await getTask(mcp, taskId, { capabilities: URL_MODE });
    assert.equal(again.inputRequests?.['approval']?.params?.['elicitationId'], request?.params?.['elicitationId'], 'the same id each time');

    const ack = await rpc(mcp, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept' } } }, { capabilities: URL_MODE });
    assert.equal(ack.status, 200, ack.text);
    const after = await getTask(mcp, taskId, { capabilities: URL_MODE });
    assert.equal(after.status, 'input_required');
    assert.deepEqual(Object.keys(after.inputRequests ?? {}), ['approval'], 'still outstanding from the server side');
  });

  it('go to a client without URL mode as the form, with no link in it; its answer is the caller’s decision, handed to the tool', async () => {
    const { taskId } = await createTask('approval_gate', { action: 'rotate keys' });
    const waiting = await pollUntil(mcp, taskId, inputRequired);
    const form = waiting.inputRequests?.['approval'];
    assert.equal(form?.params?.['mode'], 'form');
    assert.doesNotMatch(JSON.stringify(form), /https?:/, 'no link inside the form');
    assert.match(waiting.statusMessage ?? '', /\/console\/tasks\//, 'the link travels in statusMessage');
    await updateTask(taskId, { approval: { action: 'accept', content: { approve: true } } });
    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'completed');
    const structured = done.result?.['structuredContent'] as Record<string, unknown>;
    assert.equal(structured['approved'], true);
    assert.equal(structured['decidedBy'], 'local', "the open endpoint's one principal decided");
  });

  it('a four-eyes question is refused to its caller through tasks/update and task_answer, and stays open', async () => {
    const { taskId } = await createTask('approval_gate', { action: 'drop table', fourEyes: true });
    const waiting = await pollUntil(mcp, taskId, inputRequired);
    const meta = waiting.inputRequests?.['approval']?.params?.['_meta'] as Record<string, unknown>;
    assert.equal(meta['dev.mcp-tasks-serverless/fourEyes'], true);
    const refused = await rpc(mcp, 'tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { approve: true } } },
    });
    const error = errorOf(refused);
    assert.equal(error.code, -32602);
    assert.match(error.message, /approver other than the task's caller/);
    const fallback = resultOf(
      await rpc(
        mcp,
        'tools/call',
        { name: 'task_answer', arguments: { taskId, answers: { approval: { approve: true } } } },
        { capabilities: { elicitation: {} } },
      ),
    );
    assert.deepEqual((fallback['structuredContent'] as { refused?: unknown }).refused, ['approval'], 'task_answer refuses it');
    const still = await getTask(mcp, taskId, { capabilities: TASKS_CAPABILITIES });
    assert.equal(still.status, 'input_required');
    assert.deepEqual(Object.keys(still.inputRequests ?? {}), ['approval']);
  });
});
