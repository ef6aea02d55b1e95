import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import * as z from 'zod';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { sealCallback } from '../../../shared/callback-tokens.ts';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { purposeKey } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { callbackFront } from '../../../shared/protocol/callback-front.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { callbackIdOf } from '../../../shared/runtime/callbacks.ts';
import { runTool } from '../../../shared/runtime/run.ts';
import { sweep } from '../../../shared/runtime/sweeper.ts';
import { CallbackFailedError, CallbackTimedOutError, defineTool, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { processTaskMessage, type WorkerDeps } from '../../../shared/runtime/worker.ts';
import { MAX_CALLBACK_BYTES } from '../../../shared/tasks/callbacks-decisions.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const OWNER = 'alice';
const T0 = 1_700_000_000_000;
const POLICY = storePolicy({ leaseMs: 10_000, sweepGraceMs: 5_000 });
const secret = randomBytes(32);
const keys = async (purpose: Parameters<typeof purposeKey>[1]) => purposeKey(secret, purpose);
const links = new DeploymentLinks('https://tasks.example.com');

let clock: number;
let store: InMemoryTaskStore;
let queue: InMemoryTaskQueue;
let logged: LogEvent[];
/** URLs handed to the outside system, in order; what `submit` does besides (e.g. a fast completion). */
let submitted: string[];
let onSubmit: (url: string) => Promise<void>;
let cancelNotices: string[];

const job = defineTool({
  name: 'job',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_a, ctx) => {
    try {
      const done = await ctx.callback<{ rows: number }>('job', {
        timeoutMs: 60_000,
        heartbeatTimeoutMs: 20_000,
        submit: async ({ url }) => {
          submitted.push(url);
          await onSubmit(url);
        },
        onCancel: async ({ id }) => void cancelNotices.push(id),
      });
      return `rows: ${done.rows}`;
    } catch (error) {
      if (error instanceof CallbackFailedError) return `failed: ${error.error.message}`;
      if (error instanceof CallbackTimedOutError) return `timed out: ${error.reason}`;
      throw error;
    }
  },
});

const pair = defineTool({
  name: 'pair',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_a, ctx) => {
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) => ctx.callback<string>(name, { timeoutMs: 60_000, submit: async ({ url }) => void submitted.push(url) })),
    );
    return `${a}+${b}`;
  },
});

const tools: ReadonlyMap<string, ToolDefinition> = new Map([job, pair].map((t) => [t.name, t]));

function deps(): WorkerDeps {
  return {
    store,
    queue,
    tools,
    log: (event) => void logged.push(event),
    now: () => clock,
    links,
    keys,
    config: { ...DEFAULT_SETTINGS, leaseMs: POLICY.leaseMs, cancelCheckMs: 50, progressIntervalMs: 0 },
  };
}

const front = () => {
  const log = (event: LogEvent) => void logged.push(event);
  const now = () => clock;
  return callbackFront({ actions: new TaskActions({ store, queue, log, now }), keys, log, now });
};
const post = (url: string, body: unknown) =>
  front()({ method: 'POST', token: url.split('/callbacks/')[1], body: typeof body === 'string' ? body : JSON.stringify(body) });

async function create(tool: string): Promise<string> {
  const { task } = await store.create(newTask({ owner: OWNER, tool, now: clock }));
  return task.taskId;
}
const read = async (taskId: string) => (await store.get(taskId, OWNER, clock))!;
const run = (taskId: string, reason: 'start' | 'resume' | 'continue' | 'sweep' = 'start') => processTaskMessage({ taskId, reason }, deps());
/** Runs every message the queue holds (and those they send) until it is empty. */
async function drain(): Promise<void> {
  while (queue.sent.length > 0) await run(queue.sent.shift()!.taskId, 'resume');
}
const result = async (taskId: string) => {
  const task = await read(taskId);
  return task.status === 'completed' ? (task.result['content'] as Array<{ text: string }>)[0]!.text : task.status;
};

beforeEach(() => {
  clock = T0;
  store = new InMemoryTaskStore(POLICY);
  queue = new InMemoryTaskQueue();
  logged = [];
  submitted = [];
  cancelNotices = [];
  onSubmit = async () => {};
});

describe('ctx.callback', () => {
  it('suspends with no message queued, working, named in the status, due at the first deadline; the step records no token', async () => {
    const taskId = await create('job');
    await run(taskId);
    const task = await read(taskId);
    assert.equal(task.status, 'working');
    assert.equal(task.lease, undefined);
    assert.match(task.statusMessage ?? '', /Waiting for an outside system to call back \(job\)/);
    assert.equal(task.sweepAt, T0 + 20_000, 'the heartbeat deadline comes first');
    assert.deepEqual(queue.sent, []);
    assert.equal(submitted.length, 1);
    assert.match(submitted[0]!, /^https:\/\/tasks\.example\.com\/callbacks\/[A-Za-z0-9_-]+$/);
    const steps = await store.loadSteps(taskId);
    const id = callbackIdOf(taskId, 'job');
    assert.deepEqual(steps.get('callback:job'), { id, since: T0, timeoutAt: T0 + 60_000, heartbeatTimeoutMs: 20_000 });
    const token = submitted[0]!.split('/callbacks/')[1]!;
    assert.doesNotMatch(JSON.stringify([task, [...steps], logged]), new RegExp(token));
  });

  it('a completion resumes it with the payload; the submit ran once', async () => {
    const taskId = await create('job');
    await run(taskId);
    clock += 1000;
    assert.deepEqual(await post(submitted[0]!, { result: { rows: 7 } }), { status: 200, body: { status: 'accepted' } });
    assert.deepEqual(queue.sent, [{ taskId, reason: 'resume' }]);
    await drain();
    assert.equal(await result(taskId), 'rows: 7');
    assert.equal(submitted.length, 1);
    assert.equal((await post(submitted[0]!, { result: { rows: 7 } })).status, 410, 'after the end');
  });

  it('a completion the queue refuses to resume is still accepted: logged, and the sweeper resumes the task', async () => {
    const taskId = await create('job');
    await run(taskId);
    const send = queue.send;
    queue.send = async () => {
      throw Object.assign(new Error('queue down'), { name: 'ServiceUnavailable' });
    };
    assert.deepEqual(await post(submitted[0]!, { result: { rows: 5 } }), { status: 200, body: { status: 'accepted' } });
    queue.send = send;
    assert.deepEqual(
      logged.filter((event) => event.event === 'enqueue-failed'),
      [{ event: 'enqueue-failed', taskId, reason: 'resume', error: 'ServiceUnavailable' }],
    );
    assert.deepEqual(queue.sent, [], 'nothing queued');
    clock += POLICY.leaseMs + POLICY.sweepGraceMs;
    assert.deepEqual((await sweep({ store, queue, config: POLICY, now: () => clock, log: () => {} })).requeued, [taskId]);
    await drain();
    assert.equal(await result(taskId), 'rows: 5');
  });

  it('a completion that arrives before the run suspends still resumes it', async () => {
    onSubmit = async (url) => void assert.equal((await post(url, { result: { rows: 1 } })).status, 200);
    const taskId = await create('job');
    await run(taskId);
    assert.deepEqual(queue.sent, [{ taskId, reason: 'continue' }]);
    await drain();
    assert.equal(await result(taskId), 'rows: 1');
    assert.equal(submitted.length, 1);
  });

  it('a duplicate completion succeeds without effect; a different one is a conflict', async () => {
    const taskId = await create('job');
    await run(taskId);
    await post(submitted[0]!, { result: { rows: 2 } });
    const before = await read(taskId);
    assert.deepEqual((await post(submitted[0]!, { result: { rows: 2 } })).body.status, 'duplicate');
    assert.equal((await post(submitted[0]!, { result: { rows: 3 } })).status, 409);
    assert.deepEqual(await read(taskId), before);
  });

  it('a posted error reaches the handler as a CallbackFailedError', async () => {
    const taskId = await create('job');
    await run(taskId);
    await post(submitted[0]!, { error: { message: 'disk full', code: 'E_DISK' } });
    await drain();
    assert.equal(await result(taskId), 'failed: disk full');
  });

  it('the sweeper enforces the heartbeat deadline and the timeout: typed errors reach the handler', async () => {
    const silent = await create('job');
    await run(silent);
    clock = T0 + 20_000;
    assert.deepEqual((await sweep({ store, queue, config: POLICY, now: () => clock, log: () => {} })).requeued, [silent]);
    await drain();
    assert.equal(await result(silent), 'timed out: heartbeat');

    clock = T0;
    const beating = await create('job');
    await run(beating);
    for (let t = 10_000; t < 60_000; t += 10_000) {
      clock = T0 + t;
      assert.equal((await post(submitted.at(-1)!, { heartbeat: true })).status, 200);
      assert.deepEqual((await sweep({ store, queue, config: POLICY, now: () => clock, log: () => {} })).requeued, []);
    }
    assert.equal((await read(beating)).sweepAt, T0 + 60_000);
    clock = T0 + 60_000;
    await sweep({ store, queue, config: POLICY, now: () => clock, log: () => {} });
    await drain();
    assert.equal(await result(beating), 'timed out: timeout');
  });

  it('a cancel while waiting runs onCancel once, then the task ends cancelled', async () => {
    const taskId = await create('job');
    await run(taskId);
    assert.equal((await store.cancel(taskId, OWNER, clock)).result, 'requested');
    await sweep({ store, queue, config: POLICY, now: () => clock, log: () => {} });
    await drain();
    assert.equal((await read(taskId)).status, 'cancelled');
    assert.deepEqual(cancelNotices, [callbackIdOf(taskId, 'job')]);
    assert.equal((await store.loadSteps(taskId)).get('callback-cancel:job'), null);
    assert.equal((await post(submitted[0]!, { result: { rows: 1 } })).status, 410);
  });

  it('parallel callbacks resume the task once both are settled', async () => {
    const taskId = await create('pair');
    await run(taskId);
    assert.equal(submitted.length, 2);
    assert.deepEqual(Object.keys((await read(taskId)).callbackWait?.callbacks ?? {}).length, 2);
    await post(submitted[1]!, { result: 'B' });
    assert.deepEqual(queue.sent, []);
    await post(submitted[0]!, { result: 'A' });
    await drain();
    assert.equal(await result(taskId), 'A+B');
  });

  it('forged, expired, oversized and malformed completions are refused, and nothing changes', async () => {
    const taskId = await create('job');
    await run(taskId);
    const before = await read(taskId);
    const url = submitted[0]!;
    const forged = `${url.slice(0, -4)}${url.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    assert.equal((await post(forged, { result: 1 })).status, 404);
    assert.equal((await post('https://x/callbacks/not-a-token', { result: 1 })).status, 404);
    const expired = await sealCallback(keys, { taskId, callbackId: callbackIdOf(taskId, 'job'), expiresAt: clock - 1 });
    assert.equal((await front()({ method: 'POST', token: expired, body: '{"result":1}' })).status, 410);
    assert.equal((await post(url, { result: 'x'.repeat(MAX_CALLBACK_BYTES + 1) })).status, 413);
    assert.equal((await post(url, '{"result":')).status, 400);
    assert.equal((await post(url, { result: 1, error: { message: 'x' } })).status, 400);
    assert.equal((await post(url, { error: 'no message' })).status, 400);
    const get = await front()({ method: 'GET', token: url.split('/callbacks/')[1], body: '' });
    assert.deepEqual([get.status, get.headers], [405, { allow: 'POST' }]);
    assert.deepEqual(await read(taskId), before);
    assert.deepEqual(queue.sent, []);
  });

  it('inside a request (no task) a callback is a tool error', async () => {
    const outcome = await runTool(
      job,
      {},
      { taskId: undefined, clientCapabilities: {}, answers: {}, cancel: new AbortController().signal, progress: async () => {} },
    );
    assert.equal(outcome.kind, 'result');
    assert.match(JSON.stringify(outcome), /runs only as a task/);
  });
});
