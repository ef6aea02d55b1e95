/**
 * Durable execution on the local stack: duplicate
 * deliveries and racing workers, poison messages through the DLQ, a lost
 * enqueue recovered by the sweeper, continuations past the invocation budget,
 * retries, durable sleeps, idempotent creation and cancellation while asleep.
 *
 * The stack runs in this process (dynalite + fauxqs + pollers + sweeper),
 * composed with this file's settings, a log sink that collects the lines, and
 * a queue decorator that records (or refuses) what the functions send; the
 * tests reach the functions' store and queue through it. The side effects of
 * the fixtures are counted from the files they append to
 * (`functions/fixtures/durability/effects.ts`).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { localTools } from '../../bin/local/tools.ts';
import { EFFECTS_DIR_ENV, readEffects } from '../../functions/fixtures/durability/effects.ts';
import { jsonLog } from '../../shared/log.ts';
import type { TaskMessage, TaskQueue } from '../../shared/queue/queue.ts';
import { processTaskMessage } from '../../shared/runtime/worker.ts';
import { createTask, durableEnv, uniqueLabel, waitForEffects } from '../support/durable.ts';
import { newTask } from '../support/factories.ts';
import { sleep, waitFor } from '../support/wait.ts';
import { errorOf, getTask, pollUntil, requestMeta, resultOf, rpc } from '../support/wire.ts';

const VISIBILITY_TIMEOUT_SECONDS = 1;
const MAX_RECEIVE_COUNT = 3;
const INVOCATION_BUDGET_MS = 300;
/** How long a task may take to end: generous, the machine may be busy; nothing here asserts how fast anything is. */
const SETTLE_MS = 60_000;

describe('durable execution on the local stack', () => {
  let root: string;
  let effectsDir: string;
  let stack: LocalStack;
  /** The functions' configuration, store, (decorated) queue and tools. */
  let deps: Pick<LocalStack, 'config' | 'store' | 'queue'> & { tools: ReturnType<typeof localTools> };

  /** Waits until the worker has handed the sleeping task over: still `working`, no lease held. */
  function handedOver(taskId: string): Promise<unknown> {
    return waitFor(
      'the worker to hand over',
      async () => {
        const row = await deps.store.get(taskId, deps.config.localPrincipal, Date.now());
        return row?.status === 'working' && row.lease === undefined;
      },
      5_000,
    );
  }

  /** Log lines: the functions' and the stack's, through the stack's log sink. */
  const events: Record<string, unknown>[] = [];
  /** Every message the functions' queue accepted. */
  const sent: { message: TaskMessage; delaySeconds?: number }[] = [];
  /** When set, the next `start` message (only the MCP function sends those) fails to enqueue. */
  let failNextStart = false;

  const logsOf = (taskId: string, event: string) => events.filter((e) => e['taskId'] === taskId && e['event'] === event);
  const sentFor = (taskId: string) => sent.filter((s) => s.message.taskId === taskId).map((s) => s.message.reason);

  /** Records what the functions send, and fails a `start` send when asked to. */
  const recording = (queue: TaskQueue): TaskQueue => ({
    async send(message, options) {
      if (failNextStart && message.reason === 'start') {
        failNextStart = false;
        throw new Error('Injected SendMessage failure');
      }
      await queue.send(message, options);
      sent.push({ message, ...(options?.delaySeconds === undefined ? {} : { delaySeconds: options.delaySeconds }) });
    },
  });

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mcp-tasks-durability-'));
    effectsDir = join(root, 'effects');
    const env = durableEnv(effectsDir, { TASKS_INVOCATION_BUDGET_MS: String(INVOCATION_BUDGET_MS) });
    // The fixtures find their effects directory in the environment of the process they run in.
    process.env[EFFECTS_DIR_ENV] = effectsDir;
    stack = await startLocalStack({
      port: 0,
      dataDir: join(root, 'data'),
      env: { ...process.env, ...env },
      visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
      maxReceiveCount: MAX_RECEIVE_COUNT,
      sweepIntervalMs: Number(env['LOCAL_SWEEP_INTERVAL_MS']),
      drainMs: 2000,
      log: jsonLog((line) => events.push(JSON.parse(line) as Record<string, unknown>)),
      decorate: { queue: recording },
    });
    deps = { config: stack.config, store: stack.store, queue: stack.queue, tools: localTools(stack.config.toolset) };
    assert.equal(deps.config.invocationBudgetMs, INVOCATION_BUDGET_MS, "the functions read this file's settings");
  });

  after(async () => {
    await stack?.close();
    delete process.env[EFFECTS_DIR_ENV];
    await rm(root, { recursive: true, force: true });
  });

  it('(a) runs a task once when its message is delivered more than once', async () => {
    const label = uniqueLabel('dup');
    const taskId = await createTask(stack.url, 'counter', { label, ms: 500 });
    // A duplicate of the start message right away, another while the first run holds the lease.
    await deps.queue.send({ taskId, reason: 'start' });
    await waitForEffects(label, effectsDir, (effects) => effects.length > 0);
    await deps.queue.send({ taskId, reason: 'start' });

    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    // And one after the outcome was written.
    await deps.queue.send({ taskId, reason: 'start' });
    await waitFor('every duplicate to be handled', () => logsOf(taskId, 'skip').length >= 3, 10_000);

    assert.deepEqual(readEffects(label, effectsDir), ['ran']);
    assert.equal(logsOf(taskId, 'ran').length, 1, 'one handler run');
    assert.deepEqual(await getTask(stack.url, taskId), done, 'the outcome never changed');
  });

  it('(b) runs a task once when two workers race for it', async () => {
    const label = uniqueLabel('race');
    const taskId = randomUUID();
    const now = Date.now();
    await deps.store.create(
      newTask({
        taskId,
        owner: deps.config.localPrincipal,
        tool: 'counter',
        arguments: { label, ms: 300 },
        clientCapabilities: requestMeta()['io.modelcontextprotocol/clientCapabilities'] as Record<string, unknown>,
        now,
        ttlMs: deps.config.taskTtlMs,
        pollIntervalMs: deps.config.pollIntervalMs,
      }),
    );
    const worker = {
      store: deps.store,
      queue: deps.queue,
      tools: deps.tools,
      config: deps.config,
      log: jsonLog((line) => events.push(JSON.parse(line) as Record<string, unknown>)),
    };
    const message: TaskMessage = { taskId, reason: 'start' };
    const dispositions = await Promise.all([processTaskMessage(message, worker), processTaskMessage(message, worker)]);

    assert.deepEqual(dispositions, ['done', 'done']);
    assert.deepEqual(readEffects(label, effectsDir), ['ran']);
    assert.equal(logsOf(taskId, 'ran').length, 1, 'one handler run');
    const task = await getTask(stack.url, taskId);
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.deepEqual(task.result?.['content'], [{ type: 'text', text: 'counted' }]);
  });

  it('(c) ends a poison task `failed` through the DLQ after maxReceiveCount attempts', async () => {
    const label = uniqueLabel('poison');
    const taskId = await createTask(stack.url, 'poison', { label });
    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS, 100);

    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.equal(done.error?.code, -32603);
    assert.ok(done.statusMessage && /attempt/i.test(done.statusMessage), `diagnostic statusMessage: ${done.statusMessage}`);
    assert.ok(
      logsOf(taskId, 'dead-lettered').some((e) => e['changed'] === true),
      'marked failed by the DLQ handler',
    );
    // Exactly maxReceiveCount: between redeliveries the sweeper must leave the task to SQS
    // (sweepGraceMs < visibility timeout, as on AWS); a sweep message would start a fresh receive count.
    const attempts = readEffects(label, effectsDir).length;
    assert.equal(attempts, MAX_RECEIVE_COUNT, `handler ran ${attempts} times; queue messages: ${JSON.stringify(sentFor(taskId))}`);
  });

  it('(c2) finishes a job whose runs each fail unexpectedly after a new step, more of them than maxReceiveCount', async () => {
    const label = uniqueLabel('step-then-crash');
    const steps = MAX_RECEIVE_COUNT + 2;
    const taskId = await createTask(stack.url, 'step_then_crash', { label, steps });
    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS, 100);

    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(
      readEffects(label, effectsDir),
      Array.from({ length: steps }, (_, i) => `step-${i + 1}`),
      'each step ran once',
    );
    assert.deepEqual(logsOf(taskId, 'dead-lettered'), [], 'no message reached the DLQ');
    // Each failed run handed over with a fresh message instead of leaving its own to redelivery. A run
    // that used up its invocation budget first (a busy machine) handed over with a continuation instead:
    // that changes no count of retries; nor does a sweep of a run the busy machine made look stuck
    // (its duplicate message meets the lease).
    const [first, ...rest] = sentFor(taskId);
    assert.equal(first, 'start');
    assert.equal(rest.filter((reason) => reason === 'retry').length, steps - 1, JSON.stringify(rest));
    assert.deepEqual(
      rest.filter((reason) => !['retry', 'continue', 'sweep'].includes(reason)),
      [],
      'only retries, continuations and sweeps',
    );
  });

  it('(d) recovers a task whose start message could not be enqueued', async () => {
    const label = uniqueLabel('lost-start');
    failNextStart = true;
    const taskId = await createTask(stack.url, 'counter', { label, ms: 100 });
    assert.equal(failNextStart, false, 'the start message was attempted');
    assert.equal(logsOf(taskId, 'enqueue-failed').length, 1);

    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS, 100);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(readEffects(label, effectsDir), ['ran']);
    assert.deepEqual(sentFor(taskId), ['sweep'], 'enqueued by the sweeper');
  });

  it('(e) completes a job longer than the invocation budget through continuations', async () => {
    const label = uniqueLabel('continue');
    const taskId = await createTask(stack.url, 'step_sequence', { label, steps: 6, stepMs: 150 });
    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS, 100);

    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.['structuredContent'], { sum: 21 });
    assert.deepEqual(readEffects(label, effectsDir), ['step-1', 'step-2', 'step-3', 'step-4', 'step-5', 'step-6']);
    const runs = logsOf(taskId, 'ran').map((e) => e['outcome']);
    assert.ok(
      runs.length > 1 && runs.slice(0, -1).every((o) => o === 'continue') && runs.at(-1) === 'result',
      `runs: ${JSON.stringify(runs)}`,
    );
    assert.equal(sentFor(taskId).filter((reason) => reason === 'continue').length, runs.length - 1);
  });

  it('(f) retries a RetryableError and completes on the third attempt', async () => {
    const label = uniqueLabel('flaky');
    const taskId = await createTask(stack.url, 'flaky', { label, failures: 2 });
    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS, 100);

    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.['content'], [{ type: 'text', text: 'succeeded on attempt 3' }]);
    assert.deepEqual(readEffects(label, effectsDir), ['attempt-1', 'attempt-2', 'attempt-3']);
    assert.deepEqual(sentFor(taskId), ['start', 'retry', 'retry']);
  });

  it('(g) wakes a durable sleep and finishes; the task stays `working` with no lease meanwhile', async () => {
    const label = uniqueLabel('sleep');
    const createdAt = Date.now();
    const taskId = await createTask(stack.url, 'durable_sleep', { label, ms: 1500 });
    await waitForEffects(label, effectsDir, (effects) => effects.includes('before'));
    await handedOver(taskId);

    // Asleep: nothing runs, and the client sees `working`.
    while (Date.now() < createdAt + 1000) {
      assert.equal((await getTask(stack.url, taskId)).status, 'working');
      const row = await deps.store.get(taskId, deps.config.localPrincipal, Date.now());
      assert.equal(row?.lease, undefined, 'no lease while asleep');
      await sleep(100);
    }
    assert.deepEqual(readEffects(label, effectsDir), ['before']);

    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS, 100);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const sleptMs = (done.result?.['structuredContent'] as { sleptMs?: number } | undefined)?.sleptMs;
    assert.ok(typeof sleptMs === 'number' && sleptMs >= 1500, `slept ${sleptMs} ms`);
    assert.deepEqual(readEffects(label, effectsDir), ['before', 'after']);
    const runs = logsOf(taskId, 'ran').map((e) => e['outcome']);
    // A busy machine may hand a run over (`continue`) before it reaches the sleep: which run sleeps is not this test's to fix.
    assert.ok(runs.includes('sleep'), JSON.stringify(runs));
    assert.equal(runs.at(-1), 'result', JSON.stringify(runs));
    assert.ok(sentFor(taskId).includes('wake'), JSON.stringify(sentFor(taskId)));
  });

  it('(h) returns the same task for a retried tools/call with the same idempotency key', async () => {
    const label = uniqueLabel('idem');
    const key = `key-${randomUUID()}`;
    const args = { label, ms: 200 };
    const first = await createTask(stack.url, 'counter', args, { idempotencyKey: key });
    const again = await createTask(stack.url, 'counter', args, { idempotencyKey: key });
    assert.equal(again, first);

    // Two concurrent retries with a fresh key also get one task.
    const racingLabel = uniqueLabel('idem-race');
    const racingKey = `key-${randomUUID()}`;
    const racing = await Promise.all(
      [1, 2].map(() => createTask(stack.url, 'counter', { label: racingLabel, ms: 200 }, { idempotencyKey: racingKey })),
    );
    assert.equal(racing[0], racing[1]);

    for (const taskId of [first, racing[0]!]) {
      const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', SETTLE_MS, 100);
      assert.equal(done.status, 'completed', JSON.stringify(done));
    }
    assert.equal(await createTask(stack.url, 'counter', args, { idempotencyKey: key }), first, 'still the same task once it finished');
    assert.deepEqual(readEffects(label, effectsDir), ['ran']);
    assert.deepEqual(readEffects(racingLabel, effectsDir), ['ran']);

    const conflict = await rpc(
      stack.url,
      'tools/call',
      { name: 'counter', arguments: { label, ms: 201 } },
      {
        meta: { ...requestMeta(), 'dev.mcp-tasks-serverless/idempotencyKey': key },
      },
    );
    assert.equal(errorOf(conflict).code, -32602, conflict.text);
  });

  it('(i) cancels a task during a durable sleep at once', async () => {
    const label = uniqueLabel('cancel-sleep');
    // Long enough that the cancel lands while the task sleeps, however busy the machine.
    const taskId = await createTask(stack.url, 'durable_sleep', { label, ms: 15_000 });
    await waitForEffects(label, effectsDir, (effects) => effects.includes('before'));
    await handedOver(taskId);

    resultOf(await rpc(stack.url, 'tasks/cancel', { taskId }));
    const cancelled = await getTask(stack.url, taskId);
    assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));

    // The wake-up still arrives: it changes nothing and runs nothing.
    await waitFor('the wake-up to be handled', () => logsOf(taskId, 'skip').length > 0, SETTLE_MS);
    assert.deepEqual(readEffects(label, effectsDir), ['before']);
    assert.deepEqual(await getTask(stack.url, taskId), cancelled);
  });
});
