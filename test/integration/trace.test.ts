/**
 * `mcp-tasks ops trace` on the local stack, through the stack's
 * `outputs.json` as an operator runs it: the phases of a simple task, of a
 * question for a person decided by an approver, and of a run that was lost
 * and recovered, in order, with their durations and who answered; the
 * waterfall as text and the timeline as `--json`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { runOps } from '../../bin/ops/cli.ts';
import { jsonLog } from '../../shared/log.ts';
import type { Timeline } from '../../shared/tasks/timeline.ts';
import { createTask } from '../support/durable.ts';
import { newTask } from '../support/factories.ts';
import { pollUntil } from '../support/wire.ts';

/** Runs `ops trace`; returns its exit code and output. */
async function trace(outputsFile: string, taskId: string, json = false): Promise<{ code: number; text: string }> {
  let text = '';
  const code = await runOps(['trace', taskId, '--outputs', outputsFile, ...(json ? ['--json'] : [])], (chunk) => (text += chunk));
  return { code, text };
}

async function timeline(outputsFile: string, taskId: string): Promise<Timeline> {
  const { code, text } = await trace(outputsFile, taskId, true);
  assert.equal(code, 0, text);
  return JSON.parse(text) as Timeline;
}

describe('ops trace on the local stack', () => {
  let root: string;
  let stack: LocalStack;
  let outputsFile: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mcp-tasks-trace-'));
    stack = await startLocalStack({
      port: 0,
      dataDir: join(root, 'data'),
      env: { ...process.env, TASKS_TOOLSET: 'all' },
      sweepIntervalMs: 3_600_000,
      log: jsonLog(() => {}),
    });
    outputsFile = join(root, 'data', 'outputs.json');
  });
  after(async () => {
    await stack?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('a simple task: queued, then one run to its end; the shares add up to the whole', async () => {
    const taskId = await createTask(stack.url, 'slow_compute', { seconds: 0.05 });
    await pollUntil(stack.url, taskId, (task) => task.status === 'completed');
    const found = await timeline(outputsFile, taskId);
    assert.deepEqual(
      found.phases.map((phase) => phase.phase),
      ['queued', 'run'],
    );
    assert.ok(found.phases[1]!.ms >= 50, `the run took the tool's 50 ms at least: ${found.phases[1]!.ms}`);
    assert.equal(
      found.phases.reduce((sum, phase) => sum + phase.ms, 0),
      found.ms,
    );
    assert.equal(found.status, 'completed');
    const { code, text } = await trace(outputsFile, taskId);
    assert.equal(code, 0);
    assert.match(text, new RegExp(`^task ${taskId} \\(slow_compute\\): completed, .* in all; 1 run, 0 retries, 0 recovered$`, 'm'));
    assert.match(text, /^queued +\+0ms +\d+ms +\d+% +█/m);
    assert.match(text, /^running \(run 1\) +\+\S+ +\S+( \S+)? +\d+% +·*█+$/m);
    assert.match(text, /^end: completed +\+\S+/m);
  });

  it('a question for a person decided by an approver: the wait, who decided it and when, then the second run', async () => {
    const taskId = await createTask(stack.url, 'approval_gate', { action: 'deploy web@1.4.2' });
    await pollUntil(stack.url, taskId, (task) => task.status === 'input_required');
    const decidedAt = Date.now();
    const decider = { principal: 'ada', name: 'Ada Lovelace', approver: true };
    const decided = await stack.store.decide(taskId, decider, { approval: { action: 'accept', content: { approve: true } } }, decidedAt);
    assert.equal(decided.resumed, true);
    await stack.queue.send({ taskId, reason: 'resume' });
    await pollUntil(stack.url, taskId, (task) => task.status === 'completed');

    const found = await timeline(outputsFile, taskId);
    assert.deepEqual(
      found.phases.map((phase) => phase.phase),
      ['queued', 'run', 'wait:person', 'queued', 'run'],
    );
    const wait = found.phases[2]!;
    assert.equal(wait.to, decidedAt, 'the wait ends with the decision');
    assert.deepEqual(wait.answers, [{ key: 'approval', by: 'ada', name: 'Ada Lovelace', as: 'approver', via: 'page', at: decidedAt }]);
    const { text } = await trace(outputsFile, taskId);
    assert.match(text, /^waiting for a person +\+\S+/m);
    assert.match(
      text,
      new RegExp(
        `↳ "approval" decided by Ada Lovelace <ada> as an approver, on the task's page, at \\+\\S+ \\(${new Date(decidedAt).toISOString()}\\)`,
      ),
    );
    assert.match(text, /running \(run 2\)/);
  });

  it('a run lost and recovered: the lost run until the next claim, then the run that ended it', async () => {
    const { leaseMs } = stack.config;
    const taskId = randomUUID();
    const t0 = Date.now();
    // Created without a message (nothing of the stack runs it): one run is lost, the next takes over once its lease ran out.
    await stack.store.create(newTask({ taskId, owner: stack.config.localPrincipal, tool: 'slow_compute', now: t0, ttlMs: 60_000 }));
    assert.ok(await stack.store.claim(taskId, 'lost-worker', t0 + 20));
    const second = await stack.store.claim(taskId, 'second-worker', t0 + 20 + leaseMs + 1);
    assert.ok(second);
    await stack.store.finish(second, 'second-worker', { status: 'completed', result: { content: [] } }, t0 + 20 + leaseMs + 301);

    const found = await timeline(outputsFile, taskId);
    assert.deepEqual(
      found.phases.map((phase) => [phase.phase, phase.ms]),
      [
        ['queued', 20],
        ['recovered', leaseMs + 1],
        ['run', 300],
      ],
    );
    assert.deepEqual([found.runs, found.recoveries], [2, 1]);
    const { text } = await trace(outputsFile, taskId);
    assert.match(text, /2 runs, 0 retries, 1 recovered/);
    assert.match(text, /^run lost, then recovered \(run 1\)/m);
    assert.match(text, /↳ the run was lost \(its worker crashed or timed out\) and the next run took the task over/);
  });

  it('an unknown task: exit code 1 and no waterfall', async () => {
    const { code, text } = await trace(outputsFile, randomUUID());
    assert.equal(code, 1);
    assert.match(text, /^No task /);
  });
});
