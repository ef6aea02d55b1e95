/**
 * The AWS-calls bench's counting run, reusable: a local stack whose
 * functions' SDK clients are metered (aws-counting.ts), and the four
 * scenarios (simple task, one input round, a question for a person, a 10-step job) measured one at a
 * time, each from a quiet queue to a quiet queue, plus one `tasks/get` of each
 * finished task; and the simple task on a stack with an issuer (`LOCAL_AUTH=1`'s
 * authorization server, a client credentials token), where the cap on
 * unfinished tasks is on by default. `aws-calls.ts` prints them; the capacity
 * model's test compares its per-task counts with them.
 *
 * Every wait is for a condition (task status, every sent message delivered
 * and deleted, no call in flight), never for a fixed time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { decodeJwt } from 'jose';
import { REGION } from '../../bin/local/emulators.ts';
import { LOCAL_AUTH_SCOPE, type LocalStack } from '../../bin/local/options.ts';
import { LOCAL_CREDENTIALS } from '../../bin/local/sqs.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { readEffects } from '../../functions/fixtures/durability/effects.ts';
import { principalFor } from '../../shared/auth/principal.ts';
import { ENV } from '../../shared/config.ts';
import { EventBridgePublisher } from '../../shared/events/eventbridge.ts';
import { jsonLog } from '../../shared/log.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb/index.ts';
import type { TaskRecord, TaskStatus } from '../../shared/tasks/model.ts';
import { startEventBridgeFake } from '../support/eventbridge-fake.ts';
import { clientCredentialsToken, discover, registerServiceClient } from '../support/oauth.ts';
import { rpc } from '../support/wire.ts';
import {
  detail,
  type Figures,
  figuresOf,
  flow,
  meter,
  meterDynamoDb,
  meterEventBridge,
  meterSqs,
  type PollCost,
  type Row,
  resetMeter,
} from './aws-counting.ts';
import { INPUT_ROUND_MIN, PERSON_QUESTION_MIN, SIMPLE_MIN, STEPS, TEN_STEP_MIN, WITH_ISSUER_MIN } from './minima.ts';
import { countWorkflowLine, meterStepFunctions } from './workflow-vs-poll.ts';

const TIMEOUT_MS = 20_000;

/** A metered local stack and the helpers the scenarios use. */
export interface CountingStack {
  stack: LocalStack;
  dataDir: string;
  /** Waits for a condition (polled every 5 ms), failing after 20 s with the flow and the meter. */
  until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T>;
  /** The task once it has one of `statuses`, read through an unmetered client (polling is not the task's cost). */
  statusOf(taskId: string, statuses: TaskStatus[]): Promise<TaskRecord>;
  /** Every message sent has been delivered and deleted, and no call is in flight. */
  quiescent(): Promise<true>;
  /** `tools/call` of a task tool, counted as one API request. */
  createTask(name: string, args: Record<string, unknown>): Promise<string>;
  /** `tasks/update` accepting `content` for the question `key`, counted as one API request. */
  answer(taskId: string, key: string, content: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the local stack with `npm start`'s settings (the test toolset, for
 * `step_sequence`), its functions' clients metered; with `issuer`, as
 * `LOCAL_AUTH=1` starts it (an authorization server beside it, every request
 * with a token).
 */
export async function openCountingStack(options: { issuer?: boolean } = {}): Promise<CountingStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-bench-'));
  const effectsDir = join(dataDir, 'effects');
  let taskQueueUrl = '';
  // A client of the bench's own, never metered: watching tasks and reading items around writes.
  let quiet!: DynamoDBClient;
  // The step_sequence fixture lives in the test toolset and records its side effects here.
  process.env['TASKS_TEST_EFFECTS_DIR'] = effectsDir;
  // Lifecycle events go through the EventBridge adapter on a metered client, to a local PutEvents endpoint.
  const bus = await startEventBridgeFake();
  const eventBridge = new EventBridgeClient({ endpoint: bus.url, region: REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  meterEventBridge(eventBridge);
  const stack = await startLocalStack({
    port: 0,
    dataDir,
    env: {
      ...process.env,
      [ENV.toolset]: 'test',
      // No cancellation reads while a handler runs: the jobs take milliseconds, heartbeats would be noise.
      [ENV.cancelCheckMs]: process.env[ENV.cancelCheckMs] ?? '60000',
      // Approvers named: a question for a person has its entry in the approvers' list.
      [ENV.approvers]: 'group:approvers',
    },
    log: jsonLog((line) => {
      meter.logBytes += Buffer.byteLength(line);
      countWorkflowLine(line);
    }),
    events: new EventBridgePublisher({ client: eventBridge, busName: 'bench' }),
    // The sweeper runs once at start-up (uncounted) and not again during the bench.
    sweepIntervalMs: 3_600_000,
    ...(options.issuer ? { auth: {} } : {}),
    instrument: ({ dynamodb, sqs, poller, stepFunctions, endpoints }) => {
      if (stepFunctions) meterStepFunctions(stepFunctions);
      quiet = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: REGION, credentials: LOCAL_CREDENTIALS });
      meterDynamoDb(dynamodb, quiet);
      meterSqs(sqs, 'functions', () => taskQueueUrl);
      meterSqs(poller, 'mapping', () => taskQueueUrl);
    },
  });
  taskQueueUrl = stack.config.queueUrl;
  const watcher = new DynamoDbTaskStore({ client: quiet, tableName: stack.config.tableName, policy: stack.config });
  const caller = options.issuer ? await signedIn(stack.url) : { principal: stack.config.localPrincipal, headers: {} };
  const principal = caller.principal;

  async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline)
        throw new Error(`bench: timed out after ${TIMEOUT_MS} ms waiting for ${what} (${JSON.stringify(flow)}; ${detail(meter)})`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  return {
    stack,
    dataDir,
    until,
    statusOf: (taskId, statuses) =>
      until(`task ${taskId} to be ${statuses.join(' or ')}`, async () => {
        const task = await watcher.get(taskId, principal, Date.now());
        return task && statuses.includes(task.status) ? task : undefined;
      }),
    quiescent: () =>
      until('the queue to drain', () =>
        flow.inFlight === 0 && flow.delivered >= flow.sent && flow.deleted === flow.delivered ? true : undefined,
      ),
    async answer(taskId, key, content) {
      meter.apiRequests += 1;
      const inputResponses = { [key]: { action: 'accept', content } };
      const answered = await rpc(stack.url, 'tasks/update', { taskId, inputResponses }, { headers: caller.headers });
      if (answered.body?.error) throw new Error(`bench: tasks/update failed: ${answered.text}`);
    },
    async createTask(name, args) {
      meter.apiRequests += 1;
      const created = await rpc(stack.url, 'tools/call', { name, arguments: args }, { headers: caller.headers });
      const taskId = created.body?.result?.['taskId'];
      if (typeof taskId !== 'string') throw new Error(`bench: ${name} did not create a task: ${created.text}`);
      return taskId;
    },
    async close() {
      quiet.destroy();
      await stack.close();
      eventBridge.destroy();
      await bus.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A client credentials token from the stack's authorization server, as a service signs in, and the principal it makes. */
async function signedIn(url: string): Promise<{ principal: string; headers: Record<string, string> }> {
  const found = await discover(url);
  const client = await registerServiceClient(found.server.registration_endpoint, LOCAL_AUTH_SCOPE);
  const token = await clientCredentialsToken(found.server.token_endpoint, client, found.metadata.resource, LOCAL_AUTH_SCOPE);
  const claims = decodeJwt(token);
  return { principal: principalFor(String(claims.iss), String(claims.sub)), headers: { authorization: `Bearer ${token}` } };
}

/**
 * The simple task where people sign in (an issuer): the cap on unfinished
 * tasks is on by default, so the create adds the task to its principal's set
 * of unfinished tasks and the end removes it; the console lists the task, as
 * `npm start`'s does. Measured on a stack of its own, like the others.
 */
export async function countWithIssuer(): Promise<Row> {
  // The new stack's start-up (its recovery's scans) goes to a meter of its own, not to the last scenario's.
  resetMeter();
  const bench = await openCountingStack({ issuer: true });
  try {
    await bench.quiescent();
    resetMeter();
    const taskId = await bench.createTask('slow_compute', { seconds: 0.01 });
    await bench.statusOf(taskId, ['completed']);
    await bench.quiescent();
    return { scenario: 'simple task, with an issuer', measured: figuresOf(meter), minimum: WITH_ISSUER_MIN, meter, taskId };
  } finally {
    await bench.close();
  }
}

/** The scenarios measured, and one `tasks/get` of each one's finished task (per call). */
export async function countScenarios(bench: CountingStack): Promise<{ rows: Row[]; gets: PollCost[] }> {
  const { stack, statusOf, quiescent, createTask, answer } = bench;
  const rows: Row[] = [];
  const scenario = async (name: string, minimum: Figures, run: () => Promise<string>): Promise<void> => {
    await quiescent();
    resetMeter();
    const taskId = await run();
    await quiescent();
    rows.push({ scenario: name, measured: figuresOf(meter), minimum, meter, taskId });
  };

  await scenario('simple task', SIMPLE_MIN, async () => {
    const taskId = await createTask('slow_compute', { seconds: 0.01 });
    await statusOf(taskId, ['completed']);
    return taskId;
  });

  await scenario('one input round', INPUT_ROUND_MIN, async () => {
    const taskId = await createTask('confirm_delete', { filename: 'bench.txt' });
    const waiting = await statusOf(taskId, ['input_required']);
    if (waiting.status !== 'input_required') throw new Error('unreachable');
    const [key] = Object.keys(waiting.inputRequests);
    await answer(taskId, String(key), { confirm: true });
    await statusOf(taskId, ['completed']);
    return taskId;
  });

  await scenario('a question for a person', PERSON_QUESTION_MIN, async () => {
    const taskId = await createTask('approval_gate', { action: 'bench' });
    await statusOf(taskId, ['input_required']);
    await answer(taskId, 'approval', { approve: true });
    await statusOf(taskId, ['completed']);
    return taskId;
  });

  const label = `bench-${Date.now()}`;
  await scenario(`${STEPS}-step job`, TEN_STEP_MIN, async () => {
    const taskId = await createTask('step_sequence', { label, steps: STEPS, stepMs: 0 });
    const done = await statusOf(taskId, ['completed', 'failed']);
    const sum = done.status === 'completed' ? (done.result['structuredContent'] as { sum?: number } | undefined)?.sum : undefined;
    if (sum !== (STEPS * (STEPS + 1)) / 2) throw new Error(`bench: step_sequence ended wrong: ${JSON.stringify(done)}`);
    const effects = readEffects(label, join(bench.dataDir, 'effects'));
    if (effects.length !== STEPS) throw new Error(`bench: expected each step to run once, got ${effects.join(', ')}`);
    return taskId;
  });

  const gets: PollCost[] = [];
  for (const row of rows) {
    await quiescent();
    resetMeter();
    const polls = 5;
    for (let i = 0; i < polls; i++) {
      const got = await rpc(stack.url, 'tasks/get', { taskId: row.taskId });
      if (got.body?.result?.['status'] !== 'completed') throw new Error(`bench: tasks/get returned ${got.text}`);
    }
    const f = figuresOf(meter);
    gets.push({
      scenario: row.scenario,
      ddbRequests: f.ddbRequests / polls,
      rcu: f.rcu / polls,
      commands: detail(meter, polls),
      logBytes: meter.logBytes / polls,
    });
  }
  return { rows, gets };
}
