/**
 * The task lifecycle on the wire (input rounds, results, errors, cancels,
 * progress) and `subscriptions/listen`, against the local stack
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
import { CANCEL_SETTLES_MS } from '../support/local-stack.ts';
import { assertValid } from '../support/schemas.ts';
import { getTask, NO_CAPABILITIES, pollUntil, type RpcTarget, rpc, TASKS_ONLY, throughHandler, wireHelpers } from '../support/wire.ts';

const _ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** Keys a `CreateTaskResult` must never carry (spec §1.4, §1.6, §1.7; legacy names from §10). */
const _NOT_ON_CREATE = ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval'];

let stack: LocalStack | undefined;
let dataDir: string | undefined;
/** The MCP function, called in process. */
let mcp: RpcTarget;
/** The stack's HTTP adapter, `http://127.0.0.1:<port>/mcp`, for the cases about HTTP itself. */
let httpUrl: string;

const { createTask, updateTask, cancelTask, assertMissingTasksCapability, terminal, inputRequired, textOf } = wireHelpers(() => mcp);

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-lifecycle-'));
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

describe('task lifecycle', { concurrency: true }, () => {
  it('items 17, 72: confirm_delete goes input_required with one elicitation/create request', async () => {
    const { taskId } = await createTask('confirm_delete', { filename: 'report.txt' });
    try {
      const task = await pollUntil(mcp, taskId, inputRequired);
      assert.equal(task.status, 'input_required');
      assertValid('InputRequests', task.inputRequests);
      const entries = Object.entries(task.inputRequests!);
      assert.equal(entries.length, 1);
      const [, request] = entries[0]!;
      assert.equal(request.method, 'elicitation/create');
      assert.match(String(request.params?.['message']), /report\.txt/);
      assert.equal((request.params?.['requestedSchema'] as { type?: string } | undefined)?.type, 'object');
      // A later poll shows the same outstanding key again (§6).
      assert.deepEqual(
        Object.keys((await getTask(mcp, taskId)).inputRequests!),
        entries.map(([key]) => key),
      );
    } finally {
      await cancelTask(taskId);
    }
  });

  it('items 26, 31, 52: answering the one input request resumes the task to completed, with the answer reflected', async () => {
    const { taskId } = await createTask('confirm_delete', { filename: 'resume.txt' });
    const waiting = await pollUntil(mcp, taskId, inputRequired);
    const [key] = Object.keys(waiting.inputRequests ?? {});
    assert.ok(key, JSON.stringify(waiting));
    await updateTask(taskId, { [key]: { action: 'accept', content: { confirm: true } } });
    const next = await getTask(mcp, taskId);
    assert.ok(!next.inputRequests?.[key], 'the answered key is gone at once');
    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'completed');
    assert.equal(textOf(done.result), 'Deleted resume.txt');
  });

  it(
    'items 29, 30: multi_input — a partial update removes the answered key at once; unknown and answered keys are acked and ignored; ' +
      'the last key completes',
    async () => {
      const { taskId } = await createTask('multi_input');
      const waiting = await pollUntil(mcp, taskId, (task) => Object.keys(task.inputRequests ?? {}).length >= 2 || terminal(task));
      assert.equal(waiting.status, 'input_required');
      assertValid('InputRequests', waiting.inputRequests);
      assert.deepEqual(Object.keys(waiting.inputRequests!).sort(), ['color', 'name']);
      for (const request of Object.values(waiting.inputRequests!)) assert.equal(request.method, 'elicitation/create');

      // Item 29: a key never issued is acked and ignored, even with a value that is no valid answer.
      await updateTask(taskId, { 'unknown-key': { ignored: true } });
      assert.deepEqual(Object.keys((await getTask(mcp, taskId)).inputRequests ?? {}).sort(), ['color', 'name']);

      // Item 30: a strict subset is accepted; the task stays input_required with the rest.
      await updateTask(taskId, { name: { action: 'accept', content: { name: 'partial-1' } } });
      const partial = await getTask(mcp, taskId);
      assert.equal(partial.status, 'input_required');
      assert.deepEqual(Object.keys(partial.inputRequests ?? {}), ['color']);

      // Item 29: an already answered key is ignored (the first answer stands).
      await updateTask(taskId, { name: { action: 'accept', content: { name: 'overwritten' } } });
      assert.deepEqual(Object.keys((await getTask(mcp, taskId)).inputRequests ?? {}), ['color']);

      await updateTask(taskId, { color: { action: 'accept', content: { color: 'blue' } } });
      const done = await pollUntil(mcp, taskId, terminal);
      assert.equal(done.status, 'completed');
      assert.equal(textOf(done.result), 'name=partial-1, color=blue');
    },
  );

  it('§12.3: tasks/update on a terminal task → ack, and the task is unchanged', async () => {
    const { taskId } = await createTask('failing_job');
    const done = await pollUntil(mcp, taskId, terminal);
    await updateTask(taskId, { confirm: { action: 'accept', content: { confirm: true } } });
    const after = await getTask(mcp, taskId);
    assert.equal(after.status, done.status);
    assert.deepEqual(after.result, done.result);
  });

  it('items 18, 21, 52: a completed task inlines the tool result with resultType "complete" and no related-task _meta', async () => {
    const { taskId } = await createTask('slow_compute', { seconds: 1, label: 'inline' });
    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'completed');
    assert.equal(done.resultType, 'complete');
    assertValid('CallToolResult', done.result);
    assert.equal(done.result?.['resultType'], 'complete');
    assert.equal(textOf(done.result), 'Computed inline after 1s');
    const meta = done.result?.['_meta'] as Record<string, unknown> | undefined;
    assert.ok(!meta || !('io.modelcontextprotocol/related-task' in meta), 'no related-task _meta on the inlined result');
    assert.ok(!('error' in done) && !('inputRequests' in done));
  });

  it('items 10, 50, 52: failing_job (a tool error) → completed with result.isError true', async () => {
    const { taskId } = await createTask('failing_job');
    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'completed');
    assert.equal(done.result?.['isError'], true);
    assert.match(textOf(done.result), /simulated tool error/);
    assert.ok(!('error' in done));
  });

  it('items 20, 48, 49, 51: protocol_error_job → failed with error {code, message}, a statusMessage and no result', async () => {
    const { taskId } = await createTask('protocol_error_job');
    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'failed');
    assertValid('Error', done.error);
    assert.equal(done.error?.code, -32603);
    assert.equal(done.error?.message, 'Simulated protocol error');
    assert.ok(done.statusMessage && done.statusMessage.length > 0, 'a diagnostic statusMessage (item 48)');
    assert.ok(!('result' in done), 'a failed task carries no result');
  });

  it('items 32, 34, 35: cancelling a just-created slow_compute (seconds 60) acks, then the task ends cancelled within seconds', async () => {
    const { taskId } = await createTask('slow_compute', { seconds: 60, label: 'cancel-queued' });
    await cancelTask(taskId);
    // The worker may have claimed it before the cancel: it then ends at its next check.
    const done = await pollUntil(mcp, taskId, terminal, CANCEL_SETTLES_MS);
    assert.equal(done.status, 'cancelled');
  });

  it('items 32, 34: cancelling a running slow_compute (seconds 60) acks, then its worker stops it within seconds', async () => {
    const { taskId } = await createTask('slow_compute', { seconds: 60, label: 'cancel-running' });
    // There is no observable "running" state: watch the task stay `working`
    // long enough for the poller to have handed it to a worker.
    const since = Date.now();
    const running = await pollUntil(mcp, taskId, (task) => task.status !== 'working' || Date.now() - since >= 750);
    assert.equal(running.status, 'working');
    await cancelTask(taskId);
    const done = await pollUntil(mcp, taskId, terminal, CANCEL_SETTLES_MS);
    assert.equal(done.status, 'cancelled');
  });

  it('cancelling a task that waits for input ends it cancelled at once (nothing is running)', async () => {
    const { taskId } = await createTask('confirm_delete', { filename: 'cancel-waiting.txt' });
    assert.equal((await pollUntil(mcp, taskId, inputRequired)).status, 'input_required');
    await cancelTask(taskId);
    const task = await getTask(mcp, taskId);
    assert.equal(task.status, 'cancelled');
    assert.ok(!('inputRequests' in task));
    // Answers arriving after the cancel are acked and ignored.
    await updateTask(taskId, { confirm: { action: 'accept', content: { confirm: true } } });
    assert.equal((await getTask(mcp, taskId)).status, 'cancelled');
  });

  it('§12.2: tasks/cancel on a terminal task → the same empty ack; the task stays as it was', async () => {
    const { taskId } = await createTask('failing_job');
    const done = await pollUntil(mcp, taskId, terminal);
    await cancelTask(taskId);
    await cancelTask(taskId);
    const after = await getTask(mcp, taskId);
    assert.equal(after.status, done.status);
    assert.deepEqual(after.result, done.result);
  });

  it('items 7, 16: batch_process reports statusMessage progress while working and completes with structuredContent', async () => {
    const items = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    const { taskId } = await createTask('batch_process', { items, delayMs: 150 });
    const working = await pollUntil(
      mcp,
      taskId,
      (task) => (task.status === 'working' && task.statusMessage !== undefined) || terminal(task),
    );
    assert.equal(working.status, 'working', 'progress is visible while the task works');
    assert.match(working.statusMessage ?? '', /^Processed [1-6] of 6 items$/);

    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'completed');
    assert.equal(textOf(done.result), 'Processed 6 items');
    const structured = done.result?.['structuredContent'] as { count: number; processed: Array<{ item: number; fingerprint: string }> };
    assert.equal(structured.count, 6);
    assert.deepEqual(
      structured.processed.map((entry) => entry.item),
      [0, 1, 2, 3, 4, 5],
    );
    for (const entry of structured.processed) assert.match(entry.fingerprint, /^[0-9a-f]{16}$/);
  });

  it('item 50: approval_gate declined → completed with isError true (a refusal is a tool result, not a failure)', async () => {
    const { taskId } = await createTask('approval_gate', { action: 'deploy web@1.4.2 to production' });
    const waiting = await pollUntil(mcp, taskId, inputRequired);
    assert.equal(waiting.status, 'input_required');
    assert.deepEqual(Object.keys(waiting.inputRequests ?? {}), ['approval']);
    assert.match(String(waiting.inputRequests!['approval']!.params?.['message']), /deploy web@1\.4\.2 to production/);
    await updateTask(taskId, { approval: { action: 'decline' } });
    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'completed');
    assert.equal(done.result?.['isError'], true);
    assert.equal((done.result?.['structuredContent'] as { approved?: unknown } | undefined)?.approved, false);
  });

  it('approval_gate approved with a comment → completed with the comment in structuredContent', async () => {
    const { taskId } = await createTask('approval_gate', { action: 'rotate keys' });
    await pollUntil(mcp, taskId, inputRequired);
    await updateTask(taskId, { approval: { action: 'accept', content: { approve: true, comment: 'go ahead' } } });
    const done = await pollUntil(mcp, taskId, terminal);
    assert.equal(done.status, 'completed');
    assert.ok(!done.result?.['isError']);
    const { approved, comment } = (done.result?.['structuredContent'] ?? {}) as { approved?: unknown; comment?: unknown };
    assert.deepEqual({ approved, comment }, { approved: true, comment: 'go ahead' });
    assert.equal(textOf(done.result), 'Approved and done: rotate keys (go ahead)');
  });

  it('item 98: a task that needs elicitation from a client that did not declare it ends failed with -32021, never input_required', async () => {
    const { taskId } = await createTask('confirm_delete', { filename: 'no-elicitation.txt' }, { capabilities: TASKS_ONLY });
    const done = await pollUntil(mcp, taskId, (task) => task.status !== 'working');
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.equal(done.error?.code, -32021);
    assert.deepEqual((done.error?.data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities, { elicitation: {} });
  });
});

describe('subscriptions/listen', () => {
  it('items 37, 44: subscriptions/listen asking for taskIds without the extension → -32021, HTTP 400', async () => {
    const { taskId } = await createTask('failing_job');
    assertMissingTasksCapability(
      await rpc(mcp, 'subscriptions/listen', { notifications: { taskIds: [taskId] } }, { capabilities: NO_CAPABILITIES }),
    );
  });

  it('items 92–94, 96: with the extension → an acknowledged stream that ends gracefully', async () => {
    const { taskId } = await createTask('failing_job');
    // Over HTTP: a streamed answer through the adapter.
    const response = await rpc(httpUrl, 'subscriptions/listen', { notifications: { taskIds: [taskId] } }, { timeoutMs: 10_000 });
    assert.equal(response.status, 200, response.text);
    const [first, ...rest] = response.messages;
    assert.equal(first?.method, 'notifications/subscriptions/acknowledged', 'the acknowledgement comes first');
    const subscriptionId = (message: typeof first) =>
      (message?.params?.['_meta'] as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/subscriptionId'];
    assert.equal(subscriptionId(first), response.requestId, 'tagged with the subscription id');
    const acknowledged = first?.params?.['notifications'] as { taskIds?: string[] };
    assertValid('TaskSubscriptionAcknowledgedNotifications', acknowledged);
    for (const id of acknowledged.taskIds ?? []) assert.equal(id, taskId, 'only requested ids are acknowledged');

    for (const message of rest.filter((message) => message.method !== undefined)) {
      assert.match(message.method!, /^notifications\//, 'no server-to-client requests on the stream (item 99)');
      assert.equal(subscriptionId(message), response.requestId);
      if (message.method === 'notifications/tasks') {
        assert.ok(acknowledged.taskIds?.includes(taskId), 'task notifications only once acknowledged (item 92)');
        assertValid('TaskStatusNotification', message);
      } else {
        assert.fail(`unrequested notification ${message.method} (item 92)`);
      }
    }
    const end = response.body;
    assert.equal(end?.id, response.requestId);
    assert.equal(end?.result?.['resultType'], 'complete', 'graceful completion result');
    assert.equal(
      (end?.result?.['_meta'] as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/subscriptionId'],
      response.requestId,
    );
  });
});
