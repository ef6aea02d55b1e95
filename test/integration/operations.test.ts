/**
 * Operations on the local stack: the functions' log lines and the
 * CloudWatch embedded metrics in them, the operator commands (`npm run ops`,
 * through the stack's `outputs.json` as a person would run them), the
 * dead-letter queue drained on the sweep timer, and waits for input that end.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { REGION } from '../../bin/local/emulators.ts';
import type { LocalStack } from '../../bin/local/options.ts';
import { LOCAL_CREDENTIALS, localSqsClient } from '../../bin/local/sqs.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { STEP_FUNCTIONS_ENDPOINT_OUTPUT } from '../../bin/local/workflows.ts';
import { runOps } from '../../bin/ops/cli.ts';
import { LOCAL_OUTPUTS, OPS_OUTPUTS } from '../../infra/outputs.ts';
import { parsePrincipal, principalFor } from '../../shared/auth/principal.ts';
import { executionArnOf } from '../../shared/engines/stepfunctions/index.ts';
import { jsonLog } from '../../shared/log.ts';
import { METRICS_NAMESPACE, TASK_METRICS } from '../../shared/metrics.ts';
import type { NewTask } from '../../shared/tasks/store-types.ts';
import { createTask } from '../support/durable.ts';
import { newTask } from '../support/factories.ts';
import { sleep, waitFor } from '../support/wait.ts';
import { getTask, pollUntil } from '../support/wire.ts';

type Line = Record<string, any>;

/** A stack with its log lines collected, as parsed JSON. */
async function start(root: string, name: string, env: Record<string, string>, sweepIntervalMs: number) {
  const lines: Line[] = [];
  const raw: string[] = [];
  const stack = await startLocalStack({
    port: 0,
    dataDir: join(root, name),
    env: { ...process.env, TASKS_TOOLSET: 'all', ...env },
    sweepIntervalMs,
    log: jsonLog((line) => {
      raw.push(line);
      lines.push(JSON.parse(line) as Line);
    }),
  });
  const outputsFile = join(root, name, 'outputs.json');
  const outputs = (JSON.parse(await readFile(outputsFile, 'utf8')) as Record<string, Record<string, string>>)['local']!;
  return { stack, lines, raw, outputsFile, outputs };
}

/** Runs an operator command; returns its exit code and output. */
async function ops(outputsFile: string, ...args: string[]): Promise<{ code: number; text: string }> {
  let text = '';
  const code = await runOps([...args, '--outputs', outputsFile], (chunk) => (text += chunk));
  return { code, text };
}

async function opsJson<T>(outputsFile: string, ...args: string[]): Promise<T> {
  const { code, text } = await ops(outputsFile, ...args, '--json');
  assert.equal(code, 0, text);
  return JSON.parse(text) as T;
}

/** A `working` task nobody runs: created in the store without a message (as after a lost enqueue). */
async function idleTask(stack: LocalStack, tool = 'slow_compute'): Promise<string> {
  const taskId = randomUUID();
  await stack.store.create(newTask({ taskId, owner: stack.config.localPrincipal, tool, now: Date.now(), ttlMs: 60_000 }));
  return taskId;
}

/** The metrics an EMF line declares, by name, with their dimension sets and namespace checked. */
function declaredMetrics(line: Line): Map<string, { unit: string; dimensions: string[] }> {
  const declared = new Map<string, { unit: string; dimensions: string[] }>();
  assert.equal(typeof line['_aws']?.['Timestamp'], 'number');
  for (const directive of line['_aws']['CloudWatchMetrics'] as Line[]) {
    assert.equal(directive['Namespace'], METRICS_NAMESPACE);
    assert.equal(directive['Dimensions'].length, 1);
    for (const metric of directive['Metrics'] as Line[]) {
      declared.set(metric['Name'], { unit: metric['Unit'], dimensions: directive['Dimensions'][0] });
      // The value is a top-level member of the line, as EMF requires.
      assert.equal(typeof line[metric['Name']], 'number', `${metric['Name']} has a value`);
      assert.equal(metric['Unit'], TASK_METRICS[metric['Name'] as keyof typeof TASK_METRICS]);
    }
    for (const dimension of directive['Dimensions'][0] as string[])
      assert.equal(typeof line[dimension], 'string', `dimension ${dimension} has a value`);
  }
  return declared;
}

describe('operations on the local stack', () => {
  let root: string;
  let main: Awaited<ReturnType<typeof start>>;
  let sqs: SQSClient;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mcp-tasks-ops-'));
    // A sweep timer that never fires during the tests: the DLQ is drained only when a test says so.
    main = await start(root, 'main', {}, 3_600_000);
    sqs = localSqsClient(main.outputs[LOCAL_OUTPUTS.sqsEndpoint]!, REGION);
  });
  after(async () => {
    sqs?.destroy();
    await main?.stack.close();
    await rm(root, { recursive: true, force: true });
  });

  describe('log lines and embedded metrics', () => {
    it('a completed task: task-created, task-started and task-ended lines with their EMF metrics, request and task ids', async () => {
      const taskId = await createTask(main.stack.url, 'slow_compute', { seconds: 0.05 });
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'completed');
      const created = await waitFor('task-created', () => main.lines.find((l) => l['event'] === 'task-created' && l['taskId'] === taskId));
      const started = await waitFor('task-started', () => main.lines.find((l) => l['event'] === 'task-started' && l['taskId'] === taskId));
      const ended = await waitFor('task-ended', () => main.lines.find((l) => l['event'] === 'task-ended' && l['taskId'] === taskId));

      // The sink's shape: time, the ids of the request or message, the event.
      for (const line of [created, started, ended]) {
        assert.match(line['time'], /^\d{4}-\d\d-\d\dT/);
        assert.ok(typeof line['requestId'] === 'string' || typeof line['messageId'] === 'string', JSON.stringify(line));
      }
      assert.deepEqual([...declaredMetrics(created).keys()], ['TasksCreated']);
      assert.equal(created['TasksCreated'], 1);
      assert.deepEqual([...declaredMetrics(started).keys()], ['TimeQueued']);
      assert.ok(started['TimeQueued'] >= 0);

      const metrics = declaredMetrics(ended);
      assert.deepEqual([...metrics.keys()].sort(), ['TaskDuration', 'TaskFailed', 'TasksEnded']);
      assert.deepEqual(metrics.get('TasksEnded')!.dimensions, ['status']);
      assert.deepEqual(metrics.get('TaskFailed')!.dimensions, []);
      assert.equal(ended['status'], 'completed');
      assert.equal(ended['TasksEnded'], 1);
      assert.equal(ended['TaskFailed'], 0);
      assert.ok(ended['TaskDuration'] >= 0 && ended['TaskDuration'] < 60_000);
      // Every line is one JSON object on one line, with no runtime prefix.
      for (const raw of main.raw) assert.match(raw, /^\{.*\}\n$/);
    });

    it('a failed task counts as failed (the failed-task rate is the average of TaskFailed)', async () => {
      const taskId = await createTask(main.stack.url, 'protocol_error_job', {});
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'failed');
      const ended = await waitFor('task-ended', () => main.lines.find((l) => l['event'] === 'task-ended' && l['taskId'] === taskId));
      declaredMetrics(ended);
      assert.equal(ended['status'], 'failed');
      assert.equal(ended['TaskFailed'], 1);
    });

    it('never logs tool arguments or answers', async () => {
      const secret = `secret-${randomUUID()}`;
      const taskId = await createTask(main.stack.url, 'confirm_delete', { filename: secret });
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'input_required');
      assert.ok(!main.raw.some((line) => line.includes(secret)));
      await ops(main.outputsFile, 'cancel', taskId, '--reason', 'test cleanup');
    });
  });

  describe('operator commands', () => {
    it('inspect: row, steps, attempts, lease and next sweep; a table for people, JSON for scripts', async () => {
      const taskId = await idleTask(main.stack);
      const found = await opsJson<Line>(main.outputsFile, 'inspect', taskId);
      assert.equal(found['taskId'], taskId);
      assert.equal(found['status'], 'working');
      assert.equal(found['attempts'], 0);
      assert.deepEqual(found['steps'], []);
      assert.equal(found['lease'], undefined);
      assert.equal(found['nextSweep']['action'], 'requeue');
      assert.ok(found['nextSweep']['inMs'] > 0);

      const { code, text } = await ops(main.outputsFile, 'inspect', taskId);
      assert.equal(code, 0);
      assert.match(text, /^field\s+value\n/);
      assert.match(text, new RegExp(`taskId\\s+${taskId}`));
      assert.match(text, /nextSweep\s+\S+ \(in .+\): requeue/);

      // A task that ran: its lease and attempts.
      const ran = await createTask(main.stack.url, 'slow_compute', { seconds: 0.05 });
      await pollUntil(main.stack.url, ran, (task) => task.status === 'completed');
      const inspected = await opsJson<Line>(main.outputsFile, 'inspect', ran);
      assert.equal(inspected['status'], 'completed');
      assert.equal(inspected['attempts'], 1);
      assert.equal(inspected['nextSweep'], undefined);

      const missing = await ops(main.outputsFile, 'inspect', randomUUID());
      assert.equal(missing.code, 1);
    });

    it("inspect names who asks as the task's pages do: the row's name, else the owner's console sign-in, else the subject", async () => {
      const now = Date.now();
      const owner = principalFor('https://issuer.example', `ada-${randomUUID()}`);
      const taskFor = async (extra: Partial<NewTask> = {}) => {
        const taskId = randomUUID();
        await main.stack.store.create(newTask({ taskId, owner, tool: 'slow_compute', now, ttlMs: 60_000, ...extra }));
        return taskId;
      };
      const unnamed = await taskFor();
      const subject = await opsJson<Line>(main.outputsFile, 'inspect', unnamed);
      assert.deepEqual([subject['requester'], subject['requesterFrom']], [parsePrincipal(owner)!.subject, 'subject']);

      await main.stack.store.recordSignInName(owner, 'Ada Lovelace', now, now + 3_600_000);
      const signedIn = await opsJson<Line>(main.outputsFile, 'inspect', unnamed);
      assert.deepEqual([signedIn['requester'], signedIn['requesterFrom']], ['Ada Lovelace', 'console sign-in']);
      assert.match((await ops(main.outputsFile, 'inspect', unnamed)).text, /requester\s+Ada Lovelace\n/);

      const named = await taskFor({ requester: 'Ada (from her token)' });
      const claimed = await opsJson<Line>(main.outputsFile, 'inspect', named);
      assert.deepEqual([claimed['requester'], claimed['requesterFrom']], ['Ada (from her token)', 'token']);
      for (const taskId of [unnamed, named]) await ops(main.outputsFile, 'cancel', taskId, '--reason', 'test cleanup');
    });

    it('inspect shows who decided a question for a person; the log line names them, never the answer', async () => {
      const { rpc, resultOf } = await import('../support/wire.ts');
      const comment = `comment-${randomUUID()}`;
      const taskId = await createTask(main.stack.url, 'approval_gate', { action: 'ship it' });
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'input_required');
      const answer = { action: 'accept', content: { approve: true, comment } };
      resultOf(await rpc(main.stack.url, 'tasks/update', { taskId, inputResponses: { approval: answer } }));
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'completed');
      const found = await opsJson<Line>(main.outputsFile, 'inspect', taskId);
      assert.equal(found['decisions']['approval']['by'], 'local');
      assert.equal(found['decisions']['approval']['as'], 'owner');
      assert.equal(found['decisions']['approval']['via'], 'client');
      assert.match(found['decisions']['approval']['at'], /^\d{4}-\d\d-\d\dT/);
      const { text } = await ops(main.outputsFile, 'inspect', taskId);
      assert.match(text, /decisions\s+approval: local \(owner, client\) at \d{4}-/);
      const decided = await waitFor('question-decided', () =>
        main.lines.find((l) => l['event'] === 'question-decided' && l['taskId'] === taskId),
      );
      assert.equal(decided['by'], 'local');
      assert.deepEqual(decided['keys'], ['approval']);
      assert.ok(!main.raw.some((line) => line.includes(comment)), 'the answer is never logged');
    });

    it('working: working tasks by age, oldest first, from the index', async () => {
      const older = await idleTask(main.stack);
      await sleep(20);
      const newer = await idleTask(main.stack);
      const listed = await opsJson<Line[]>(main.outputsFile, 'working');
      const ids = listed.map((t) => t['taskId']);
      assert.ok(ids.indexOf(older) >= 0 && ids.indexOf(older) < ids.indexOf(newer), JSON.stringify(ids));
      for (const task of listed) assert.equal(task['status'], 'working');
      const ages = listed.map((t) => t['ageMs'] as number);
      assert.deepEqual(
        ages,
        [...ages].sort((a, b) => b - a),
      );
      assert.match((await ops(main.outputsFile, 'working')).text, /^taskId\s+tool\s+age\s+attempts\s+running/);
    });

    it('waiting: tasks waiting for input longer than N, and none that waited less', async () => {
      const taskId = await createTask(main.stack.url, 'confirm_delete', { filename: 'a.txt' });
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'input_required');
      await sleep(300);
      const waited = await opsJson<Line[]>(main.outputsFile, 'waiting', '--older-than', '200ms');
      const entry = waited.find((t) => t['taskId'] === taskId);
      assert.ok(entry, JSON.stringify(waited));
      assert.equal(entry['status'], 'input_required');
      assert.ok(entry['waitingMs'] >= 300 && entry['waitingMs'] < 60_000, String(entry['waitingMs']));
      assert.equal(
        (await opsJson<Line[]>(main.outputsFile, 'waiting', '--older-than', '1h')).some((t) => t['taskId'] === taskId),
        false,
      );
      assert.equal(
        (await opsJson<Line[]>(main.outputsFile, 'working')).some((t) => t['taskId'] === taskId),
        false,
      );
      await ops(main.outputsFile, 'cancel', taskId, '--reason', 'test cleanup');
    });

    it('cancel and fail as operator, with the reason as the status message, through the store', async () => {
      const cancelled = await idleTask(main.stack);
      assert.deepEqual(await opsJson(main.outputsFile, 'cancel', cancelled, '--reason', 'runaway job'), {
        taskId: cancelled,
        outcome: 'cancelled',
      });
      const seen = await getTask(main.stack.url, cancelled);
      assert.equal(seen.status, 'cancelled');
      assert.equal(seen.statusMessage, 'Ended by an operator: runaway job');

      const waiting = await createTask(main.stack.url, 'confirm_delete', { filename: 'b.txt' });
      await pollUntil(main.stack.url, waiting, (task) => task.status === 'input_required');
      const { code, text } = await ops(main.outputsFile, 'fail', waiting, '--reason', 'abandoned by its client');
      assert.equal(code, 0, text);
      assert.equal(text, `${waiting}: failed\n`);
      const failed = await getTask(main.stack.url, waiting);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error?.message, 'Ended by an operator: abandoned by its client');
      assert.equal(
        (await opsJson<Line[]>(main.outputsFile, 'waiting')).some((t) => t['taskId'] === waiting),
        false,
        'off the index',
      );

      // A terminal task is left alone, and the command says so.
      const again = await ops(main.outputsFile, 'fail', waiting, '--reason', 'twice');
      assert.equal(again.code, 1);
      assert.match(again.text, /unchanged \(already failed\)/);
      await assert.rejects(
        runOps(['cancel', waiting, '--outputs', main.outputsFile], () => {}),
        /--reason/,
      );
    });

    it("cancel as operator of a workflow task waiting on its approval: the reason is its status and its execution's stop cause", {
      timeout: 120_000,
    }, async () => {
      const args = { release: 'ops@1.0.0', regions: ['eu-west-1'] };
      const taskId = await createTask(main.stack.url, 'deploy_release', args);
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'input_required', 60_000, 100);
      const { code, text } = await ops(main.outputsFile, 'cancel', taskId, '--reason', 'release frozen');
      assert.equal(code, 0, text);
      const ended = await pollUntil(main.stack.url, taskId, (task) => task.status === 'cancelled', 60_000, 100);
      assert.equal(ended.statusMessage, 'Ended by an operator: release frozen');
      const sfn = new SFNClient({
        endpoint: main.outputs[STEP_FUNCTIONS_ENDPOINT_OUTPUT]!,
        region: REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      try {
        const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:deploy-release';
        const stopped = await sfn.send(new DescribeExecutionCommand({ executionArn: executionArnOf(machine, taskId) }));
        assert.equal(stopped.status, 'ABORTED');
        assert.equal(stopped.cause, 'Ended by an operator: release frozen');
      } finally {
        sfn.destroy();
      }
    });

    it('redrive: dead-lettered messages go back to the task queue', async () => {
      const taskId = await idleTask(main.stack, 'greet');
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: main.outputs[OPS_OUTPUTS.deadLetterQueueUrl],
          MessageBody: JSON.stringify({ taskId, reason: 'sweep' }),
        }),
      );
      const moved = await opsJson<{ moved: number; taskIds: string[] }>(main.outputsFile, 'redrive');
      assert.deepEqual(moved, { moved: 1, taskIds: [taskId] });
      // The worker runs it from the task queue.
      await pollUntil(main.stack.url, taskId, (task) => task.status === 'completed');
      assert.equal(await queueDepth(sqs, main.outputs[OPS_OUTPUTS.deadLetterQueueUrl]!), 0);
      assert.equal((await ops(main.outputsFile, 'redrive')).text, 'Moved 0 message(s) back to the task queue\n');
    });
  });

  describe('the dead-letter queue, drained on the sweep schedule', () => {
    it('marks the task of each dead-lettered message failed, counts it and deletes the message', async () => {
      const taskId = await idleTask(main.stack);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: main.outputs[OPS_OUTPUTS.deadLetterQueueUrl],
          MessageBody: JSON.stringify({ taskId, reason: 'start' }),
        }),
      );
      await sqs.send(new SendMessageCommand({ QueueUrl: main.outputs[OPS_OUTPUTS.deadLetterQueueUrl], MessageBody: 'not a task message' }));
      let drained = 0;
      await waitFor('both messages drained', async () => {
        const result = (await main.stack.handlers.deadLetter({})) as { drained: number };
        drained += result.drained;
        return drained >= 2;
      });
      assert.equal((await getTask(main.stack.url, taskId)).status, 'failed');
      const line = main.lines.find((l) => l['event'] === 'dead-lettered' && l['taskId'] === taskId)!;
      assert.deepEqual([...declaredMetrics(line).keys()], ['TasksDeadLettered']);
      const ended = main.lines.find((l) => l['event'] === 'task-ended' && l['taskId'] === taskId)!;
      assert.equal(ended['TaskFailed'], 1);
      assert.equal(await queueDepth(sqs, main.outputs[OPS_OUTPUTS.deadLetterQueueUrl]!), 0);
    });
  });
});

describe('waits for input end (TASKS_MAX_INPUT_WAIT_MS)', () => {
  const MAX_WAIT_MS = 1500;
  let root: string;
  let short: Awaited<ReturnType<typeof start>>;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mcp-tasks-wait-'));
    short = await start(root, 'short', { TASKS_MAX_INPUT_WAIT_MS: String(MAX_WAIT_MS) }, 200);
  });
  after(async () => {
    await short?.stack.close();
    await rm(root, { recursive: true, force: true });
  });

  it('a task waiting past the limit ends failed, saying it waited too long; its ttlMs grew with its age and ended at end + retention', async () => {
    const taskId = await createTask(short.stack.url, 'confirm_delete', { filename: 'c.txt' });
    const waiting = await pollUntil(short.stack.url, taskId, (task) => task.status === 'input_required');
    const createdAt = Date.parse(waiting.createdAt);
    const waitStart = Date.parse(waiting.lastUpdatedAt);
    assert.ok(waiting.ttlMs! >= short.stack.config.retentionMs, `ttlMs ${waiting.ttlMs}: at least the retention beyond its age`);
    assert.ok(waiting.ttlMs! < MAX_WAIT_MS + short.stack.config.retentionMs + waitStart - createdAt, 'not stretched to the deadline');

    const seen: number[] = [waiting.ttlMs!];
    const ended = await pollUntil(
      short.stack.url,
      taskId,
      (task) => {
        seen.push(task.ttlMs!);
        return task.status === 'failed';
      },
      10_000,
    );
    assert.equal(ended.error?.code, -32603);
    assert.match(
      ended.error!.message,
      /waited for input longer than the server allows \(1500 ms\)|waited for input longer than the server allows/,
    );
    assert.match(ended.statusMessage!, /waited for input/);
    assert.ok(Date.now() >= waitStart + MAX_WAIT_MS);
    for (let i = 1; i < seen.length; i += 1) assert.ok(seen[i]! >= seen[i - 1]!, `ttlMs never shrinks: ${seen.join(', ')}`);
    assert.equal(ended.ttlMs, Date.parse(ended.lastUpdatedAt) - createdAt + short.stack.config.retentionMs, 'the end + the retention');
    for (const value of seen) assert.ok(value <= ended.ttlMs!, `advertised ${value} ≤ the final ${ended.ttlMs}`);
    const line = short.lines.find((l) => l['event'] === 'task-ended' && l['taskId'] === taskId)!;
    assert.equal(line['reason'], 'input-wait-expired');
    assert.equal(line['TaskFailed'], 1);
  });

  it('a task answered in time resumes and completes', async () => {
    const { rpc, resultOf } = await import('../support/wire.ts');
    const taskId = await createTask(short.stack.url, 'confirm_delete', { filename: 'd.txt' });
    const waiting = await pollUntil(short.stack.url, taskId, (task) => task.status === 'input_required');
    const [key] = Object.keys(waiting.inputRequests ?? {});
    resultOf(
      await rpc(short.stack.url, 'tasks/update', { taskId, inputResponses: { [key!]: { action: 'accept', content: { confirm: true } } } }),
    );
    const done = await pollUntil(short.stack.url, taskId, (task) => task.status === 'completed' || task.status === 'failed', 10_000);
    assert.equal(done.status, 'completed');
  });
});

async function queueDepth(client: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(Attributes?.ApproximateNumberOfMessages ?? 0) + Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}
