/**
 * The one resume rule, on every surface that resumes a waiting task: a
 * `tasks/update` answer, the fallback's `task_answer`, a decision on the
 * console's page, a callback's completion, and a cancel of a task suspended
 * on its callback (its `onCancel` runs). Each records its change, then
 * queues the resume; when the queue refuses, the change stays recorded, the
 * caller is told it succeeded, the failure is logged (`enqueue-failed`) and
 * the sweeper resumes the task to its end.
 *
 * The local stack runs in this process (dynalite, fauxqs, the pollers and the
 * sweeper) with a queue decorator that refuses the resume of one task when
 * asked; everything else is the stack's own.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { jsonLog } from '../../shared/log.ts';
import type { TaskMessage, TaskQueue } from '../../shared/queue/queue.ts';
import { createTask } from '../support/durable.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc, type TaskView } from '../support/wire.ts';

/** Generous: the machine may be busy; nothing here asserts how fast anything is. */
const SETTLE_MS = 60_000;

/** One way to resume a waiting task: how to make one wait there, and the resume, which asserts the caller's success. */
interface Surface {
  name: string;
  /** Starts a task and returns its id once it waits for the resume. */
  waiting(): Promise<string>;
  resume(taskId: string): Promise<void>;
  /** The task's text once it ended. */
  ended: RegExp;
}

describe('one resume rule: a refused enqueue after the change is recorded', () => {
  let root: string;
  let stack: LocalStack;
  let service: Server;
  let serviceUrl: string;
  /** The callback URLs `outside_wait` handed to this test's service, in order. */
  const handed: string[] = [];
  const events: Record<string, unknown>[] = [];
  const sent: TaskMessage[] = [];
  /** The task whose next `resume` message the queue refuses. */
  let refuseResumeOf: string | undefined;

  const logsOf = (taskId: string, event: string) => events.filter((e) => e['taskId'] === taskId && e['event'] === event);
  const sentFor = (taskId: string) => sent.filter((message) => message.taskId === taskId).map((message) => message.reason);

  /** Records what the functions send, and refuses the resume of `refuseResumeOf`. */
  const refusing = (queue: TaskQueue): TaskQueue => ({
    async send(message, options) {
      if (message.reason === 'resume' && message.taskId === refuseResumeOf) {
        refuseResumeOf = undefined;
        throw Object.assign(new Error('Injected SendMessage failure'), { name: 'ServiceUnavailable' });
      }
      await queue.send(message, options);
      sent.push(message);
    },
  });

  const origin = () => stack.url.replace(/\/mcp$/, '');
  const untilStatus = (taskId: string, status: TaskView['status']) =>
    pollUntil(stack.url, taskId, (task) => task.status === status, SETTLE_MS, 100);

  /** A task of `tool` started by a task-declaring call, once it asks its question. */
  async function asking(tool: string, args: Record<string, unknown>): Promise<string> {
    const taskId = await createTask(stack.url, tool, args);
    await untilStatus(taskId, 'input_required');
    return taskId;
  }

  /** A fallback `tools/call` (no tasks declared); returns the result's structured content. */
  async function fallbackCall(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const result = resultOf(await rpc(stack.url, 'tools/call', { name, arguments: args }, { capabilities: {}, timeoutMs: SETTLE_MS }));
    assert.equal(result['isError'], undefined, JSON.stringify(result));
    return result['structuredContent'] as Record<string, unknown>;
  }

  /** Posts the console's answer form for `key`, with the page's session cookie and form token. */
  async function consoleAnswer(taskId: string, key: string, fields: Record<string, string>): Promise<Response> {
    const page = await fetch(`${origin()}/console/tasks/${taskId}`);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
    const token = /name="token" value="([^"]+)"/.exec(await page.text())?.[1] ?? assert.fail('the page carries a form token');
    return fetch(`${origin()}/console/tasks/${taskId}/answer`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, key, ...fields }).toString(),
    });
  }

  const surfaces: Surface[] = [
    {
      name: 'an answer through tasks/update',
      waiting: () => asking('confirm_delete', { filename: 'a.txt' }),
      async resume(taskId) {
        const response = await rpc(stack.url, 'tasks/update', {
          taskId,
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        });
        assert.equal(response.status, 200, response.text);
        assert.equal(resultOf(response)['resultType'], 'complete', 'the ack');
      },
      ended: /Deleted a\.txt/,
    },
    {
      name: "an answer through the fallback's task_answer",
      async waiting() {
        const named = await fallbackCall('confirm_delete', { filename: 'b.txt' });
        assert.equal(named['status'], 'input_required', JSON.stringify(named));
        return String(named['taskId']);
      },
      async resume(taskId) {
        const answered = await fallbackCall('task_answer', { taskId, answers: { confirm: { confirm: true } } });
        assert.deepEqual(answered['accepted'], ['confirm'], JSON.stringify(answered));
      },
      ended: /Deleted b\.txt/,
    },
    {
      name: "a decision on the console's page",
      waiting: () => asking('approval_gate', { action: 'ship it' }),
      async resume(taskId) {
        const response = await consoleAnswer(taskId, 'approval', { 'field.approve': 'true' });
        assert.equal(response.status, 303, await response.text());
      },
      ended: /Approved and done: ship it/,
    },
    {
      name: "a callback's completion",
      async waiting() {
        const count = handed.length;
        const taskId = await createTask(stack.url, 'outside_wait', { serviceUrl, timeoutMs: 600_000 });
        await waitFor('the service to be handed the callback', () => handed.length > count, SETTLE_MS);
        await pollUntil(stack.url, taskId, (task) => /call back/.test(task.statusMessage ?? ''), SETTLE_MS, 100);
        return taskId;
      },
      async resume() {
        const response = await fetch(handed.at(-1)!, { method: 'POST', body: JSON.stringify({ result: { rows: 7 } }) });
        assert.deepEqual({ status: response.status, body: await response.json() }, { status: 200, body: { status: 'accepted' } });
      },
      ended: /called back/,
    },
  ];

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mcp-tasks-resume-'));
    service = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk));
      req.on('end', () => {
        handed.push(String((JSON.parse(body) as { url: string }).url));
        res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    stack = await startLocalStack({
      port: 0,
      dataDir: join(root, 'data'),
      // `npm start`'s settings, the test catalogue, and a sweeper that looks every 300 ms at tasks due half a second after
      // their lease would end: a resume left to it comes within seconds.
      env: { ...process.env, TASKS_TOOLSET: 'test', TASKS_LEASE_MS: '1500', TASKS_SWEEP_GRACE_MS: '500' },
      sweepIntervalMs: 300,
      log: jsonLog((line) => events.push(JSON.parse(line) as Record<string, unknown>)),
      decorate: { queue: refusing },
    });
  });

  after(async () => {
    await stack?.close();
    await new Promise<void>((resolve) => service.close(() => resolve()));
    await rm(root, { recursive: true, force: true });
  });

  it("a cancel of a task suspended on its callback: its onCancel's resume is queued by the same rule", async () => {
    const count = handed.length;
    const taskId = await createTask(stack.url, 'outside_wait', { serviceUrl, timeoutMs: 600_000 });
    await waitFor('the service to be handed the callback', () => handed.length > count, SETTLE_MS);
    await pollUntil(stack.url, taskId, (task) => /call back/.test(task.statusMessage ?? ''), SETTLE_MS, 100);
    refuseResumeOf = taskId;
    const response = await rpc(stack.url, 'tasks/cancel', { taskId });
    assert.equal(response.status, 200, response.text);
    assert.equal(refuseResumeOf, undefined, 'the resume was queued at once, and refused');
    assert.deepEqual(
      logsOf(taskId, 'enqueue-failed').map(({ reason, error }) => ({ reason, error })),
      [{ reason: 'resume', error: 'ServiceUnavailable' }],
    );
    await untilStatus(taskId, 'cancelled');
    assert.ok(sentFor(taskId).includes('sweep'), `the sweeper queued it: ${sentFor(taskId).join(', ')}`);
  });

  for (const surface of surfaces) {
    it(`${surface.name}: the caller succeeds, the failure is logged, and the sweeper resumes the task to its end`, async () => {
      const taskId = await surface.waiting();
      refuseResumeOf = taskId;
      await surface.resume(taskId);
      assert.equal(refuseResumeOf, undefined, 'the resume was queued, and refused');
      assert.deepEqual(
        logsOf(taskId, 'enqueue-failed').map(({ reason, error }) => ({ reason, error })),
        [{ reason: 'resume', error: 'ServiceUnavailable' }],
      );

      const done = await untilStatus(taskId, 'completed');
      assert.match(JSON.stringify(done.result?.['content']), surface.ended);
      assert.equal(sentFor(taskId).includes('resume'), false, 'no resume reached the queue');
      assert.ok(sentFor(taskId).includes('sweep'), `the sweeper queued it: ${sentFor(taskId).join(', ')}`);
    });
  }
});
