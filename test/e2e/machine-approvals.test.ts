/**
 * A machine's question for a person, over HTTP on the local stack with auth
 * on (`LOCAL_AUTH`: the embedded authorization server): a client-credentials
 * token (its `sub` is its `client_id`, the default machine rule) calls
 * `approval_gate`. With approvers named, what its client and model read
 * sends the question to the approvers on the task's page (never "signed in
 * as the identity that started this task"), its own answer is refused, and an
 * approver's decision completes it. Without approvers, the task fails at once
 * with an error naming `-c approvers=…`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_AUTH_SCOPE, type LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { TaskActions } from '../../shared/actions/task-actions.ts';
import { principalFor } from '../../shared/auth/principal.ts';
import { clientCredentialsToken, discover, registerServiceClient } from '../support/oauth.ts';
import { waitFor } from '../support/wait.ts';
import { errorOf, getTask, type RpcOptions, resultOf, rpc, TASKS_CAPABILITIES, TASKS_EXTENSION, type TaskView } from '../support/wire.ts';

const APPROVAL = { name: 'approval_gate', arguments: { action: 'rotate the signing keys' } };

/** A local stack with auth on (and `env`), and a machine: a registered client-credentials client with its token. */
function machineStack(env: Record<string, string>) {
  const state = {} as { stack: LocalStack; token: string; dataDir: string };
  before(async () => {
    state.dataDir = await mkdtemp(join(tmpdir(), 'mcp-machine-'));
    state.stack = await startLocalStack({ port: 0, dataDir: state.dataDir, env, log: () => {}, auth: { port: 0 }, drainMs: 1000 });
    const found = await discover(state.stack.url);
    const client = await registerServiceClient(found.server.registration_endpoint, LOCAL_AUTH_SCOPE);
    state.token = await clientCredentialsToken(found.server.token_endpoint, client, state.stack.url, LOCAL_AUTH_SCOPE);
  });
  after(async () => {
    await state.stack?.close();
    if (state.dataDir) await rm(state.dataDir, { recursive: true, force: true });
  });
  const as = (options: RpcOptions = {}): RpcOptions => ({ ...options, headers: { authorization: `Bearer ${state.token}` } });
  /** The task, read by the machine, once it has left `working` or `input_required` (a generous deadline: the machine may be busy). */
  const ended = (taskId: string) =>
    waitFor(
      `task ${taskId} to end`,
      async () => {
        const task: TaskView = await getTask(state.stack.url, taskId, as());
        return task.status !== 'working' && task.status !== 'input_required' && task;
      },
      30_000,
      100,
    );
  return { state, as, ended };
}

describe('a machine’s question for a person, where approvers are named', () => {
  const { state, as, ended } = machineStack({ TASKS_APPROVERS: 'group:approvers' });

  it('is sent to the approvers on the task page, the machine’s own answer refused, an approver’s decision completing it', {
    timeout: 60_000,
  }, async () => {
    const { url } = state.stack;
    const first = resultOf(await rpc(url, 'tools/call', APPROVAL, as({ capabilities: { elicitation: {} } })));
    const text = String((first['content'] as Array<{ text: string }>)[0]?.text);
    const structured = first['structuredContent'] as { taskId: string; status: string; person?: Record<string, unknown> };
    const { taskId } = structured;
    const page = `${url.replace(/\/mcp$/, '')}/console/tasks/${taskId}`;
    assert.equal(structured.status, 'input_required', text);
    assert.match(text, /for an approver only/);
    assert.ok(text.includes(`by an approver of this deployment, on the task's page, ${page}`), text);
    assert.doesNotMatch(JSON.stringify(first), /signed in as|identity that started/);
    assert.deepEqual(structured.person, { answeredBy: 'an approver of this deployment (the task was started by a machine client)', page });

    // Its task-declaring side: the question is a four-eyes one (a URL to the page where it asks for URL mode), and its answer is refused.
    const waiting = await getTask(url, taskId, as({ capabilities: { ...TASKS_CAPABILITIES, elicitation: { form: {}, url: {} } } }));
    const asked = waiting.inputRequests?.['approval'];
    assert.deepEqual([asked?.params?.['mode'], asked?.params?.['url']], ['url', page]);
    const refused = errorOf(
      await rpc(url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { approve: true } } } }, as()),
    );
    assert.match(refused.message, /approver other than the task's caller/);
    const answered = resultOf(
      await rpc(
        url,
        'tools/call',
        { name: 'task_answer', arguments: { taskId, answers: { approval: { approve: true } } } },
        as({ capabilities: {} }),
      ),
    );
    assert.deepEqual((answered['structuredContent'] as { refused?: unknown }).refused, ['approval']);
    assert.doesNotMatch(JSON.stringify(answered), /signed in as|identity that started/);

    // An approver decides on the page (the console's action), and the machine gets its result.
    const { store, queue } = state.stack;
    const actions = new TaskActions({ store, queue, log: () => {}, now: Date.now });
    const approver = { principal: principalFor(String(state.stack.issuer), 'ada'), name: 'ada', approver: true };
    await actions.decide(taskId, approver, { approval: { action: 'accept', content: { approve: true } } });
    const done = await ended(taskId);
    assert.equal(done.status, 'completed');
    assert.equal((done.result?.['structuredContent'] as { decidedBy?: string } | undefined)?.decidedBy, 'ada');
  });
});

describe('a machine’s question for a person, where no approvers are named', () => {
  const { state, as, ended } = machineStack({});

  it('fails the task at once, with an error naming -c approvers=…', { timeout: 60_000 }, async () => {
    const { url } = state.stack;
    const refused = errorOf(await rpc(url, 'tools/call', APPROVAL, as({ capabilities: { elicitation: {} } })));
    assert.equal(refused.code, -32602);
    assert.match(
      refused.message,
      /caller is a machine .* nobody signs in as, so an approver must decide it; this deployment names no approvers \(TASKS_APPROVERS, -c approvers=group:<name>\)/,
    );
    const created = resultOf(
      await rpc(url, 'tools/call', APPROVAL, as({ capabilities: { extensions: { [TASKS_EXTENSION]: {} }, elicitation: {} } })),
    );
    const failed = await ended(String(created['taskId']));
    assert.equal(failed.status, 'failed');
    assert.match(String(failed.error?.message), /-c approvers=group:<name>/);
  });
});
