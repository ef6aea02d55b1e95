/**
 * Workflow tools end to end on `npm start`'s defaults (the product toolset:
 * `deploy_release`): its state machine runs in the local Step Functions
 * emulator, its questions reach the task through the receiver, its end
 * through the event consumer. Approved from a task-declaring client and from
 * the CLI, rejected (the machine's `Catch` path, naming the reason),
 * cancelled while its question waits (the execution stopped), and a SIGKILL
 * of the stack right after the execution started (after the restart, one
 * live execution, and the task completes), before, during (at fault points,
 * `test/support/stack-with-fault.ts`) and just after a decision's POST (the
 * decision is never lost). The executions are read with the real Step
 * Functions client at the emulator's endpoint.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DescribeExecutionCommand, ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import { LOCAL_CREDENTIALS } from '../../bin/local/sqs.ts';
import { STEP_FUNCTIONS_ENDPOINT_OUTPUT } from '../../bin/local/workflows.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc, type TaskView } from '../support/wire.ts';

const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Generous: the machine may be busy. A cancel waiting on its question is carried by the sweeper (every 30 s under npm start). */
const SETTLE_MS = 60_000;
const CANCEL_SETTLES_MS = 90_000;
const ARGS = { release: 'web@1.4.2', regions: ['eu-west-1', 'us-east-1'] };

let stack: LocalStackProcess;
let sfn: SFNClient;

async function stepFunctionsOf(running: LocalStackProcess): Promise<SFNClient> {
  const outputs = JSON.parse(await readFile(join(running.dataDir, 'outputs.json'), 'utf8')) as { local: Record<string, string> };
  const endpoint = outputs.local[STEP_FUNCTIONS_ENDPOINT_OUTPUT];
  assert.ok(endpoint, 'the stack names its Step Functions endpoint');
  return new SFNClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
}

before(async () => {
  stack = await startLocalStackProcess();
  sfn = await stepFunctionsOf(stack);
});

after(async () => {
  sfn?.destroy();
  await stack?.stop();
});

async function started(url: string, args: Record<string, unknown> = ARGS): Promise<string> {
  const created = resultOf(await rpc(url, 'tools/call', { name: 'deploy_release', arguments: args }));
  assert.equal(created['resultType'], 'task');
  return created['taskId'] as string;
}

const waiting = (url: string, taskId: string) => pollUntil(url, taskId, (task) => task.status === 'input_required', SETTLE_MS, 200);
const ended = (url: string, taskId: string, timeoutMs = SETTLE_MS) =>
  pollUntil(url, taskId, (task) => ['completed', 'failed', 'cancelled'].includes(task.status), timeoutMs, 200);
const text = (task: TaskView) => (task.result?.['content'] as Array<{ text: string }> | undefined)?.[0]?.text;

async function executionsOf(client: SFNClient, taskId: string) {
  const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:deploy-release';
  const listed = await client.send(new ListExecutionsCommand({ stateMachineArn: machine, maxResults: 1000 }));
  return (listed.executions ?? []).filter((execution) => execution.name?.startsWith(taskId));
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { ...process.env, MCP_TASKS_URL: stack.url }, timeout: 90_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe('deploy_release on npm start', () => {
  it('asks its approval as a question for a person, and completes with the output once approved', { timeout: 120_000 }, async () => {
    const taskId = await started(stack.url);
    const asked = await waiting(stack.url, taskId);
    const request = asked.inputRequests?.['approval'];
    assert.equal(request?.method, 'elicitation/create');
    assert.equal(request?.params?.['message'], 'Deploy web@1.4.2 to ["eu-west-1","us-east-1"]?');
    assert.match(asked.statusMessage ?? '', /Waiting for a person to answer on the task's page/);
    assert.doesNotMatch(JSON.stringify(asked), /arn:aws:states|token/i, 'no ARN, no token on the wire');
    const ack = await rpc(stack.url, 'tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { approve: true } } },
    });
    assert.equal(ack.status, 200);
    const done = await ended(stack.url, taskId);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(text(done), 'Deployed web@1.4.2 to eu-west-1, us-east-1 and verified it');
    assert.deepEqual(done.result?.['structuredContent'], {
      release: 'web@1.4.2',
      deployed: [
        { region: 'eu-west-1', status: 'deployed' },
        { region: 'us-east-1', status: 'deployed' },
      ],
      verified: true,
    });
    const [execution] = await executionsOf(sfn, taskId);
    assert.equal(execution?.status, 'SUCCEEDED');
    assert.equal(execution?.name, taskId, 'the execution is named after its task');
  });

  it('approved from the CLI (npx mcp-tasks call deploy_release … --answer)', { timeout: 120_000 }, async () => {
    const run = await cli([
      'call',
      'deploy_release',
      JSON.stringify({ ...ARGS, release: 'api@2.0.0' }),
      '--answer',
      'approval.approve=true',
    ]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.equal(run.stdout, 'Deployed api@2.0.0 to eu-west-1, us-east-1 and verified it\n');
    assert.match(run.stderr, /input_required/);
  });

  it("rejected from the CLI: the machine's Catch path ends the task with a tool error naming the reason", {
    timeout: 120_000,
  }, async () => {
    const run = await cli([
      '--json',
      'call',
      'deploy_release',
      JSON.stringify({ ...ARGS, release: 'api@2.0.1' }),
      '--answer',
      'approval.approve=no',
      '--answer',
      'approval.comment=not during the freeze',
    ]);
    assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
    const task = JSON.parse(run.stdout) as TaskView;
    assert.equal(task.status, 'completed');
    assert.equal(task.result?.['isError'], true);
    // The decider named (on an open endpoint, the endpoint's one principal), once: no "Rejected (Rejected …)".
    assert.equal(text(task), 'The workflow deploy-release failed: Rejected by local: not during the freeze');
    const [execution] = await executionsOf(sfn, task.taskId);
    assert.equal(execution?.status, 'FAILED');
  });

  it('cancelled while its approval waits: the execution is stopped, naming the cancel, and the task ends cancelled', {
    timeout: 150_000,
  }, async () => {
    const taskId = await started(stack.url, { ...ARGS, release: 'web@9.9.9' });
    await waiting(stack.url, taskId);
    const ack = await rpc(stack.url, 'tasks/cancel', { taskId });
    assert.equal(ack.status, 200);
    const done = await ended(stack.url, taskId, CANCEL_SETTLES_MS);
    assert.equal(done.status, 'cancelled');
    const [listed] = await executionsOf(sfn, taskId);
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: listed!.executionArn! }));
    assert.equal(execution.status, 'ABORTED');
    assert.equal(execution.error, 'mcp-tasks.Cancelled');
    assert.match(execution.cause ?? '', new RegExp(`Cancelled by the caller of task ${taskId}`));
  });
});

describe('deploy_release across a SIGKILL of the stack', () => {
  it('killed right after the execution started: after the restart one execution runs, and the task completes', {
    timeout: 180_000,
  }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-workflow-kill-'));
    const first = await startLocalStackProcess({ dataDir });
    let second: LocalStackProcess | undefined;
    let client: SFNClient | undefined;
    try {
      const taskId = await started(first.url);
      // The emulator logs the start when it serves it: the worker has yet to record it, or has just done so.
      await waitFor('the execution to start', () => first.output().includes('"event":"sfn-execution-started"'), SETTLE_MS, 5);
      first.kill('SIGKILL');
      await first.stop();
      second = await startLocalStackProcess({ dataDir });
      client = await stepFunctionsOf(second);
      await waiting(second.url, taskId);
      const running = (await executionsOf(client, taskId)).filter((execution) => execution.status === 'RUNNING');
      assert.equal(running.length, 1, 'one live execution');
      await rpc(second.url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { approve: true } } } });
      const done = await ended(second.url, taskId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(text(done), 'Deployed web@1.4.2 to eu-west-1, us-east-1 and verified it');
      assert.match(second.output(), new RegExp(`"event":"workflow-restarted","taskId":"${taskId}"`));
    } finally {
      client?.destroy();
      await second?.stop();
      await first.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  /** Runs `scenario` on a stack that is SIGKILLed where it says, then started again on the same data. */
  async function acrossKill(scenario: (first: LocalStackProcess, again: () => Promise<LocalStackProcess>) => Promise<void>) {
    const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-workflow-kill-'));
    const first = await startLocalStackProcess({ dataDir });
    let second: LocalStackProcess | undefined;
    try {
      await scenario(first, async () => {
        first.kill('SIGKILL');
        await first.stop();
        second = await startLocalStackProcess({ dataDir });
        return second;
      });
    } finally {
      await second?.stop();
      await first.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  it('killed while its approval waits, before any decision: the old question is withdrawn at once, and the one asked anew decides', {
    timeout: 180_000,
  }, async () => {
    await acrossKill(async (first, again) => {
      const taskId = await started(first.url, { ...ARGS, release: 'kill@1.0.0' });
      await waiting(first.url, taskId);
      const second = await again();
      // The replaced execution's question is never offered again: only the restarted one's, under a key of its own.
      const asked = await pollUntil(second.url, taskId, (task) => task.inputRequests?.['approval#2'] !== undefined, SETTLE_MS, 100);
      assert.equal(asked.inputRequests?.['approval'], undefined);
      assert.match(second.output(), new RegExp(`"event":"workflow-restarted","taskId":"${taskId}","restart":1,"withdrawn":1`));
      await rpc(second.url, 'tasks/update', { taskId, inputResponses: { 'approval#2': { action: 'accept', content: { approve: true } } } });
      const done = await ended(second.url, taskId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(text(done), 'Deployed kill@1.0.0 to eu-west-1, us-east-1 and verified it');
    });
  });

  it("killed right after a rejection's POST returned: the recorded decision reaches the restarted execution, nobody is asked again", {
    timeout: 180_000,
  }, async () => {
    await acrossKill(async (first, again) => {
      const taskId = await started(first.url, { ...ARGS, release: 'kill@2.0.0' });
      await waiting(first.url, taskId);
      const ack = await rpc(first.url, 'tasks/update', {
        taskId,
        inputResponses: { approval: { action: 'accept', content: { approve: false, comment: 'not today' } } },
      });
      assert.equal(ack.status, 200);
      const second = await again();
      // Whether the first life delivered it or not, the task ends rejected, and no question is open meanwhile.
      await rejectedNeverAskedAgain(second, taskId);
    });
  });

  /** The restarted stack ends the task as the rejection says, and offers no question meanwhile: the decision was delivered. */
  async function rejectedNeverAskedAgain(second: LocalStackProcess, taskId: string): Promise<void> {
    const done = await pollUntil(
      second.url,
      taskId,
      (task) => {
        assert.equal(task.status === 'input_required', false, `asked again: ${JSON.stringify(task.inputRequests)}`);
        return ['completed', 'failed', 'cancelled'].includes(task.status);
      },
      SETTLE_MS,
      100,
    );
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(text(done), 'The workflow deploy-release failed: Rejected by local: not today');
  }

  /**
   * Killed during a decision's POST, at each of its fault points
   * (`test/support/stack-with-fault.ts`: the first life SIGKILLs itself
   * there, `npm start` follows on the same data): the decision recorded is
   * delivered to the restarted execution, and nobody is asked again.
   */
  const FAULTS = [
    ['decision-recorded', 'the decision written, its POST unanswered and its resume not queued'],
    ['delivering', 'the POST answered, the worker sending the rejection to its execution'],
    ['delivered', 'the rejection accepted by the execution, the worker not having recorded so'],
  ] as const;
  for (const [fault, where] of FAULTS) {
    it(`killed during a rejection's POST (${where}): the decision reaches the restarted execution, nobody is asked again`, {
      timeout: 180_000,
    }, async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-workflow-fault-'));
      const first = await startLocalStackProcess({ dataDir, entry: 'test/support/stack-with-fault.ts', env: { FAULT_AT: fault } });
      let second: LocalStackProcess | undefined;
      try {
        const taskId = await started(first.url, { ...ARGS, release: `fault@${fault}` });
        await waiting(first.url, taskId);
        const posted = rpc(first.url, 'tasks/update', {
          taskId,
          inputResponses: { approval: { action: 'accept', content: { approve: false, comment: 'not today' } } },
        });
        if (fault === 'decision-recorded') await assert.rejects(posted, 'the stack died before it answered the POST');
        else assert.equal((await posted).status, 200);
        await waitFor('the fault point', () => first.output().includes(`"event":"fault-point","at":"${fault}"`), SETTLE_MS, 20);
        await first.stop();
        second = await startLocalStackProcess({ dataDir });
        await rejectedNeverAskedAgain(second, taskId);
        assert.match(second.output(), new RegExp(`"event":"workflow-restarted","taskId":"${taskId}","restart":1,"withdrawn":0`));
      } finally {
        await second?.stop();
        await first.stop();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  }
});
