/**
 * The deployment lane's end-to-end set, run through the cloud assembly's
 * artifacts (see `deployment.ts` for how, and for the stated deviations):
 * the default stack with the endpoint open, and the `authIssuer` +
 * `authResource` stack against a real local authorization server, and the
 * `toolset=all` stack for what only its fixtures reach. Then IAM
 * both ways over every call the runs made.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type LocalAuthServer, startLocalAuthServer } from '../../bin/local/auth-server.ts';
import { clientCredentialsToken, discover, registerServiceClient } from '../support/oauth.ts';
import { waitFor } from '../support/wait.ts';
import { getTask, type RpcOptions, resultOf, rpc, type TaskView } from '../support/wire.ts';
import { variantAssembly } from './assembly.ts';
import { environmentProblems, servedToolProblems } from './checks.ts';
import { type Deployment, startDeployment } from './deployment.ts';
import { checkIam, type Grant, grantReasons, grantsOf } from './iam.ts';
import type { AwsCall } from './proxy.ts';
import { workflowSet } from './workflow-set.ts';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const SCOPE = 'mcp-tasks';

let open: Deployment;
let secured: Deployment;
let everything: Deployment;
let traced: Deployment;
let authServer: LocalAuthServer;
let token = '';
const runs: Array<{ calls: AwsCall[]; grants: Grant[] }> = [];

before(async () => {
  open = await startDeployment(variantAssembly('default'));
  everything = await startDeployment(variantAssembly('toolsetAll'));
  traced = await startDeployment(variantAssembly('observability'));
  let resource = '';
  authServer = await startLocalAuthServer({ port: 0, resource: () => resource, scopes: () => [SCOPE], log: () => {} });
  secured = await startDeployment(variantAssembly('auth'), { authIssuer: authServer.issuer });
  resource = secured.url;
});

after(async () => {
  await open?.stop();
  await everything?.stop();
  await traced?.stop();
  await secured?.stop();
  await authServer?.close();
});

/** Polls `tasks/get` (with the run's token, if any) until `predicate` holds; fails with the last status seen. */
async function pollUntil(
  d: Deployment,
  taskId: string,
  predicate: (task: TaskView) => boolean,
  options: RpcOptions = {},
  timeoutMs = 20_000,
): Promise<TaskView> {
  const deadline = Date.now() + timeoutMs;
  let task = await getTask(d.url, taskId, options);
  while (!predicate(task)) {
    if (Date.now() > deadline) throw new Error(`Task ${taskId} did not reach the expected state; last: ${outcome(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    task = await getTask(d.url, taskId, options);
  }
  return task;
}

/** Runs a task tool through the open endpoint and waits for a terminal status. */
async function runTask(d: Deployment, name: string, args: Record<string, unknown>, options: RpcOptions = {}): Promise<TaskView> {
  const created = resultOf(await rpc(d.url, 'tools/call', { name, arguments: args }, options));
  assert.equal(created['resultType'], 'task', `${name} should have created a task: ${JSON.stringify(created)}`);
  return pollUntil(d, String(created['taskId']), (task) => TERMINAL.has(task.status), options);
}

/** The lifecycle events of `taskId` the functions put, once there are `count` of them. */
async function eventsOf(d: Deployment, taskId: string, count: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  const of = () => d.bus.events.filter((event) => event.detail['taskId'] === taskId);
  while (of().length < count) {
    if (Date.now() > deadline) throw new Error(`${count} event(s) of ${taskId} expected, got ${JSON.stringify(of())}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return of();
}

/** A console page: its session cookie (the first page of an open console starts one) and its form token. */
async function consolePage(url: string): Promise<{ cookie: string; token: string; html: string }> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const html = await response.text();
  return { cookie, token: /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '', html };
}

/** A console form posted as its page does: same origin, the session's cookie. */
function postForm(url: string, cookie: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: new URL(url).origin, cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
}

function outcome(task: TaskView): string {
  return `${task.status}: ${task.statusMessage ?? ''} ${JSON.stringify(task.error ?? task.result ?? {})}`;
}

/**
 * The end-to-end set, against either run (`options` carries the token when auth is on). The secured run's
 * caller is a machine (a client-credentials token): a question for a person is not its to answer.
 */
function endToEnd(target: () => Deployment, options: () => RpcOptions, caller: 'person' | 'machine' = 'person') {
  it('runs a task to completion in the worker bundle (batch_process)', async () => {
    const task = await runTask(target(), 'batch_process', { items: ['a', 'b'], delayMs: 10 }, options());
    assert.equal(task.status, 'completed', outcome(task));
    assert.equal((task.result?.['structuredContent'] as { count?: number } | undefined)?.count, 2);
  });

  if (caller === 'person')
    it('takes an input round: approval_gate asks, tasks/update answers, the task completes', async () => {
      const d = target();
      const created = resultOf(await rpc(d.url, 'tools/call', { name: 'approval_gate', arguments: { action: 'ship' } }, options()));
      const taskId = String(created['taskId']);
      const waiting = await pollUntil(d, taskId, (task) => task.status === 'input_required' || TERMINAL.has(task.status), options());
      assert.equal(waiting.status, 'input_required', outcome(waiting));
      assert.deepEqual(Object.keys(waiting.inputRequests ?? {}), ['approval']);
      // The worker told approvers, with the task page's link on the API's own URL, and without the arguments.
      const [asked] = await eventsOf(d, taskId, 1);
      assert.deepEqual([asked?.fn, asked?.detailType], ['worker', 'Task Waiting For Person']);
      assert.equal(asked?.detail['taskUrl'], `${d.url.replace(/\/mcp$/, '')}/console/tasks/${taskId}`);
      assert.ok(!JSON.stringify(asked).includes('ship'), 'the arguments stay out of the event');
      const update = await rpc(
        d.url,
        'tasks/update',
        { taskId, inputResponses: { approval: { action: 'accept', content: { approve: true, comment: 'go' } } } },
        options(),
      );
      assert.equal(update.status, 200, update.text);
      const done = await pollUntil(d, taskId, (task) => TERMINAL.has(task.status), options());
      assert.equal(done.status, 'completed', outcome(done));
      const { decidedBy, decidedAt, ...structured } = (done.result?.['structuredContent'] ?? {}) as Record<string, unknown>;
      assert.ok(typeof decidedBy === 'string' && decidedBy !== '', 'who decided: the caller, through their client');
      assert.match(String(decidedAt), /^\d{4}-\d{2}-\d{2}T/);
      assert.deepEqual(structured, {
        approved: true,
        action: 'ship',
        comment: 'go',
        message: 'Approved and done: ship (go)',
      });
      const [, ended] = await eventsOf(d, taskId, 2);
      assert.deepEqual([ended?.fn, ended?.detailType], ['worker', 'Task Completed']);
    });

  if (caller === 'machine') {
    it("fails a machine's approval at once where no approver is named, saying so, and publishes Task Failed", async () => {
      const d = target();
      const created = resultOf(await rpc(d.url, 'tools/call', { name: 'approval_gate', arguments: { action: 'ship' } }, options()));
      const taskId = String(created['taskId']);
      const done = await pollUntil(d, taskId, (task) => TERMINAL.has(task.status), options());
      assert.equal(done.status, 'failed', outcome(done));
      assert.match(done.error?.message ?? '', /-c approvers=/);
      const events = await eventsOf(d, taskId, 1);
      assert.deepEqual(
        events.map((event) => event.detailType),
        ['Task Failed'],
      );
    });

    it('takes an input round: intake_form asks the client, tasks/update answers, the task completes', async () => {
      const d = target();
      const created = resultOf(await rpc(d.url, 'tools/call', { name: 'intake_form', arguments: { project: 'apollo' } }, options()));
      const taskId = String(created['taskId']);
      const waiting = await pollUntil(d, taskId, (task) => task.status === 'input_required' || TERMINAL.has(task.status), options());
      assert.equal(waiting.status, 'input_required', outcome(waiting));
      assert.deepEqual(Object.keys(waiting.inputRequests ?? {}).sort(), ['contact', 'project']);
      const inputResponses = {
        contact: { action: 'accept', content: { name: 'Ada', email: 'ada@example.com' } },
        project: { action: 'accept', content: { plan: 'team', languages: ['ts'] } },
      };
      const update = await rpc(d.url, 'tasks/update', { taskId, inputResponses }, options());
      assert.equal(update.status, 200, update.text);
      const done = await pollUntil(d, taskId, (task) => TERMINAL.has(task.status), options());
      assert.equal(done.status, 'completed', outcome(done));
      assert.equal((done.result?.['structuredContent'] as { completed?: boolean } | undefined)?.completed, true);
    });
  }

  it('cancels a waiting task in the MCP function, which publishes Task Cancelled', async () => {
    const d = target();
    const created = resultOf(
      await rpc(
        d.url,
        'tools/call',
        caller === 'person'
          ? { name: 'approval_gate', arguments: { action: 'ship' } }
          : { name: 'intake_form', arguments: { project: 'apollo' } },
        options(),
      ),
    );
    const taskId = String(created['taskId']);
    await pollUntil(d, taskId, (task) => task.status === 'input_required', options());
    const cancel = await rpc(d.url, 'tasks/cancel', { taskId }, options());
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal((await getTask(d.url, taskId, options())).status, 'cancelled');
    // A person's question announced itself first; a question for the client did not.
    const cancelled = (await eventsOf(d, taskId, caller === 'person' ? 2 : 1)).at(-1);
    assert.deepEqual([cancelled?.fn, cancelled?.detailType], ['mcp', 'Task Cancelled']);
  });

  it('cancels a working task', async () => {
    const d = target();
    const items = Array.from({ length: 200 }, (_, i) => `item ${i}`);
    const created = resultOf(await rpc(d.url, 'tools/call', { name: 'batch_process', arguments: { items, delayMs: 100 } }, options()));
    const taskId = String(created['taskId']);
    await pollUntil(d, taskId, (task) => /Processed/.test(task.statusMessage ?? '') || TERMINAL.has(task.status), options());
    const cancel = await rpc(d.url, 'tasks/cancel', { taskId }, options());
    assert.equal(cancel.status, 200, cancel.text);
    const done = await pollUntil(d, taskId, (task) => TERMINAL.has(task.status), options());
    assert.equal(done.status, 'cancelled', outcome(done));
  });

  it('sleeps durably: external_job wakes through a delayed message and completes', async () => {
    const d = target();
    const calls = d.calls.calls.length;
    const task = await runTask(d, 'external_job', { input: 'payload', durationSeconds: 1, pollEverySeconds: 1 }, options());
    assert.equal(task.status, 'completed', outcome(task));
    assert.ok(
      ((task.result?.['structuredContent'] as { checks?: number } | undefined)?.checks ?? 0) >= 2,
      'the job was checked again after a sleep',
    );
    // The wake-up is a message the worker sent to its own queue, with a delay.
    assert.ok(
      d.calls.calls.slice(calls).some((call) => call.fn === 'worker' && call.action === 'sqs:SendMessage'),
      'the worker handed the task over through the queue',
    );
  });

  it('waits for a callback: external_job hands its URL to a job system, whose POST to the API resumes it', async () => {
    const d = target();
    const jobs = await startJobSystem();
    try {
      d.parameters.parameters.set(JOB_SYSTEM_PARAMETER, { value: jobs.url, type: 'String' });
      const calls = d.calls.calls.length;
      const created = resultOf(
        await rpc(d.url, 'tools/call', { name: 'external_job', arguments: { input: 'payload', mode: 'callback' } }, options()),
      );
      const taskId = String(created['taskId']);
      // Suspended (the job system was handed the job, the task waits with no lease), then called back.
      await pollUntil(d, taskId, (task) => /call back/.test(task.statusMessage ?? ''), options());
      assert.equal(await jobs.complete(), 200, 'the completion was accepted');
      const task = await pollUntil(d, taskId, (view) => TERMINAL.has(view.status), options());
      assert.equal(task.status, 'completed', outcome(task));
      assert.match(JSON.stringify(task.result?.['content']), /succeeded \(called back\): processed 7 characters/);
      const made = d.calls.calls.slice(calls);
      // The worker read the state key (the token's) and the job system's parameter; the callbacks function wrote the row and enqueued the resume.
      for (const [fn, action] of [
        ['worker', 'ssm:GetParameter'],
        ['callbacks', 'dynamodb:GetItem'],
        ['callbacks', 'dynamodb:UpdateItem'],
        ['callbacks', 'sqs:SendMessage'],
      ] as const) {
        assert.ok(
          made.some((call) => call.fn === fn && call.action === action),
          `${fn} made ${action}`,
        );
      }
    } finally {
      d.parameters.parameters.delete(JOB_SYSTEM_PARAMETER);
      await jobs.close();
    }
  });
}

/** Where `external_job` reads its job system's URL (its `needs.settings`). */
const JOB_SYSTEM_PARAMETER = '/mcp-tasks/external-job/job-system-url';

/** A job system with webhooks: it keeps the jobs handed to it; `complete()` posts the last one's output to its callback URL. */
async function startJobSystem(): Promise<{ url: string; complete(): Promise<number>; close(): Promise<void> }> {
  const jobs: Array<{ jobId: string; input: string; callbackUrl: string }> = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += String(chunk)));
    request.on('end', () => {
      jobs.push(JSON.parse(text) as { jobId: string; input: string; callbackUrl: string });
      response.writeHead(202).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async complete() {
      const job = jobs.at(-1)!;
      const result = { jobId: job.jobId, output: `processed ${job.input.length} characters` };
      const body = JSON.stringify({ result });
      return (await fetch(job.callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the default stack (endpoint open), run from its bundles', () => {
  it('starts every function from its bundle with the environment the template gives it, and gives none a variable no setting reads', () => {
    assert.deepEqual(environmentProblems(open.assembly, open), []);
  });

  it('creates the requestState key through the custom resource, answering CloudFormation SUCCESS', () => {
    const responses = [...open.customResources.values()];
    assert.equal(responses.length, 1);
    assert.equal(responses[0]!.Status, 'SUCCESS', JSON.stringify(responses[0]));
    const name = responses[0]!.PhysicalResourceId!;
    assert.ok(Buffer.from(open.parameters.parameters.get(name)?.value ?? '', 'base64').length >= 32, `no key in ${name}`);
  });

  it('serves exactly the tools its toolset declares (nothing dropped from or added to the bundle)', async () => {
    assert.deepEqual(await servedToolProblems(open), []);
  });

  it('runs an optional tool inline for a client without the tasks extension', async () => {
    const result = resultOf(
      await rpc(open.url, 'tools/call', { name: 'batch_process', arguments: { items: ['x'], delayMs: 0 } }, { capabilities: {} }),
    );
    assert.deepEqual((result['structuredContent'] as { count: number }).count, 1);
  });

  endToEnd(
    () => open,
    () => ({}),
  );

  workflowSet(() => open);

  it('answers a route the HTTP API does not have with 404, as API Gateway does', async () => {
    const response = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', open.url));
    assert.equal(response.status, 404);
  });

  it('answers another method on a callback URL 405 with Allow: POST, from the callbacks bundle (not the API 404)', async () => {
    const response = await fetch(new URL('/callbacks/not-a-token', open.url));
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
  });

  it('ends a dead-lettered task failed when the schedule drains the dead-letter queue', async () => {
    await open.pauseEventSource();
    let taskId: string;
    try {
      const created = resultOf(
        await rpc(open.url, 'tools/call', { name: 'external_job', arguments: { input: 'doomed', durationSeconds: 0 } }),
      );
      taskId = String(created['taskId']);
      const body = await open.deadLetterNext();
      assert.match(body, new RegExp(taskId));
    } finally {
      open.resumeEventSource();
    }
    const results = await open.tick();
    assert.deepEqual(results.get('deadLetter'), { drained: 1 });
    const task = await getTask(open.url, taskId);
    assert.equal(task.status, 'failed', outcome(task));
    const [failed] = await eventsOf(open, taskId, 1);
    assert.deepEqual([failed?.fn, failed?.detailType], ['deadLetter', 'Task Failed']);
  });

  it('serves the console from its bundle: a task by id, its live state, an answer and a cancel posted from its page', async () => {
    const front = open.url.replace(/\/mcp$/, '');
    const created = resultOf(await rpc(open.url, 'tools/call', { name: 'approval_gate', arguments: { action: 'ship' } }));
    const taskId = String(created['taskId']);
    await pollUntil(open, taskId, (task) => task.status === 'input_required');
    const { cookie, token, html } = await consolePage(`${front}/console/tasks/${taskId}`);
    assert.match(html, /<h1>Approval gate<\/h1>/);
    const live = await fetch(`${front}/console/tasks/${taskId}/live`, { headers: { cookie } });
    assert.equal(((await live.json()) as { status: string }).status, 'input_required');
    const answered = await postForm(`${front}/console/tasks/${taskId}/answer`, cookie, { token, key: 'approval', 'field.approve': 'true' });
    assert.equal(answered.status, 303);
    assert.equal((await pollUntil(open, taskId, (task) => TERMINAL.has(task.status))).status, 'completed');

    const items = Array.from({ length: 200 }, (_, i) => `item ${i}`);
    const long = String(
      resultOf(await rpc(open.url, 'tools/call', { name: 'batch_process', arguments: { items, delayMs: 100 } }))['taskId'],
    );
    const cancelled = await postForm(`${front}/console/tasks/${long}/cancel`, cookie, { token, confirm: 'yes' });
    assert.equal(cancelled.status, 303);
    assert.equal((await pollUntil(open, long, (task) => TERMINAL.has(task.status))).status, 'cancelled');
    // A waiting task cancelled from its page ends there, in the console function, which publishes its end.
    const waiting = String(resultOf(await rpc(open.url, 'tools/call', { name: 'approval_gate', arguments: { action: 'hold' } }))['taskId']);
    await pollUntil(open, waiting, (task) => task.status === 'input_required');
    const stopped = await postForm(`${front}/console/tasks/${waiting}/cancel`, cookie, { token, confirm: 'yes' });
    assert.equal(stopped.status, 303);
    const [, ended] = await eventsOf(open, waiting, 2);
    assert.deepEqual([ended?.fn, ended?.detailType], ['console', 'Task Cancelled']);
    // An open endpoint's console lists nothing unless the operator opens it.
    assert.match((await consolePage(`${front}/console`)).html, /Find a task by its id/);
  });

  it('runs the sweeper on the schedule', async () => {
    const results = await open.tick();
    assert.deepEqual(Object.keys(results.get('sweeper') as object).sort(), ['expired', 'requeued']);
  });
});

describe('the authIssuer + authResource stack, run from its bundles', () => {
  before(async () => {
    const found = await discover(secured.url);
    assert.equal(found.metadata.resource, secured.url);
    const client = await registerServiceClient(found.server.registration_endpoint, SCOPE);
    token = await clientCredentialsToken(found.server.token_endpoint, client, secured.url, SCOPE);
  });

  it('refuses a request without a token with 401 and the resource metadata', async () => {
    const response = await rpc(secured.url, 'tools/list', {});
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /resource_metadata=/);
  });

  endToEnd(
    () => secured,
    () => ({ headers: { Authorization: `Bearer ${token}` } }),
    'machine',
  );

  it('has a console that shows no task: the endpoint requires tokens and no console client is configured', async () => {
    const response = await fetch(`${secured.url.replace(/\/mcp$/, '')}/console`);
    assert.equal(response.status, 403);
    assert.match(await response.text(), /Sign-in is not set up/);
  });
});

describe('the toolset=all stack, run from its bundles', () => {
  it('serves exactly the product tools and the conformance fixtures', async () => {
    assert.deepEqual(await servedToolProblems(everything), []);
  });

  it("lists every task on its open console (console=open), from the list index and the rows' batch read", async () => {
    const task = await runTask(everything, 'batch_process', { items: ['x'], delayMs: 0 });
    const { html } = await consolePage(`${everything.url.replace(/\/mcp$/, '')}/console`);
    assert.ok(html.includes(`data-task="${task.taskId}"`), 'the task is listed');
  });

  it('answers an inline input round with a requestState sealed by the key the custom resource created', async () => {
    const inline = { capabilities: { elicitation: {} } };
    const first = resultOf(await rpc(everything.url, 'tools/call', { name: 'test_streaming_elicitation', arguments: {} }, inline));
    assert.equal(first['resultType'], 'input_required', JSON.stringify(first));
    assert.equal(typeof first['requestState'], 'string');
    const second = resultOf(
      await rpc(
        everything.url,
        'tools/call',
        {
          name: 'test_streaming_elicitation',
          arguments: {},
          requestState: first['requestState'],
          inputResponses: { value: { action: 'accept', content: { value: 'forty-two' } } },
        },
        inline,
      ),
    );
    assert.deepEqual(second['content'], [{ type: 'text', text: 'Received forty-two' }]);
  });
});

describe('the tracing=true stack, run from its bundles', () => {
  it('sends the spans of a task to X-Ray from the MCP function and the worker, signed with their roles, before each return', async () => {
    const task = await runTask(traced, 'batch_process', { items: ['x'], delayMs: 0 });
    assert.equal(task.status, 'completed');
    // The worker sends its spans after its last write, before its invocation returns: the task can read as ended first.
    const senders = () => [...new Set(traced.calls.calls.filter((call) => call.action === 'xray:PutSpans').map((call) => call.fn))].sort();
    await waitFor(
      () => `the worker's spans (senders: ${senders().join(', ')})`,
      () => senders().includes('worker'),
      20_000,
    );
    assert.deepEqual(senders(), ['mcp', 'worker']);
    assert.deepEqual(
      traced.calls.calls.filter((call) => call.action.startsWith('unknown:')),
      [],
    );
  });
});

describe('CloudFormation deleting the stacks', () => {
  it('deletes the requestState key through the custom resource', async () => {
    for (const d of [open, secured, everything, traced]) {
      const responses = await d.deleteCustomResources();
      for (const [id, response] of responses) assert.equal(response.Status, 'SUCCESS', `${id}: ${JSON.stringify(response)}`);
      assert.equal(d.parameters.parameters.size, 0);
    }
  });
});

describe('IAM, both ways', () => {
  before(() => {
    for (const d of [open, secured, everything, traced]) runs.push({ calls: d.calls.distinct(), grants: grantsOf(d.assembly, d.resolve) });
  });
  let report: Awaited<ReturnType<typeof checkIam>>;
  before(async () => {
    report = await checkIam(runs, grantReasons());
    console.log(report.summary);
  });

  it('allows every AWS call by the role of the function that made it', () => {
    assert.deepEqual(report.denied, []);
  });

  it('exercises every statement granted, or gives a reason in unexercised-grants.json', () => {
    assert.deepEqual(report.unexercised, []);
    assert.deepEqual(report.stale, []);
  });
});
