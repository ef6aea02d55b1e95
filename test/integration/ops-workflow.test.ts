/**
 * `ops inspect` on a workflow tool's task, on the local stack (in process,
 * the test catalogue's `deploy_release`): the execution the task follows
 * (its name and ARN), its status as the row records it, and the keys of its
 * questions still open; once answered and ended, its recorded end.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { runOps } from '../../bin/ops/cli.ts';
import type { TaskInspection } from '../../bin/ops/ops.ts';
import { pollUntil, resultOf, rpc } from '../support/wire.ts';

const SETTLE_MS = 60_000;

describe('ops inspect on a workflow task (local stack)', () => {
  let dataDir: string;
  let stack: LocalStack;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-ops-workflow-'));
    stack = await startLocalStack({ port: 0, dataDir, env: { ...process.env, TASKS_TOOLSET: 'test' }, log: () => {} });
  });

  after(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const inspect = async (taskId: string, json: boolean) => {
    let text = '';
    const code = await runOps(
      ['inspect', taskId, '--outputs', join(dataDir, 'outputs.json'), ...(json ? ['--json'] : [])],
      (chunk) => (text += chunk),
    );
    assert.equal(code, 0, text);
    return text;
  };

  it('shows the execution, its status and its open question keys; then its recorded end', { timeout: 120_000 }, async () => {
    const created = resultOf(
      await rpc(stack.url, 'tools/call', { name: 'deploy_release', arguments: { release: 'ops@1.0.0', regions: ['eu-west-1'] } }),
    );
    const taskId = created['taskId'] as string;
    await pollUntil(stack.url, taskId, (task) => task.status === 'input_required', SETTLE_MS, 100);

    const waiting = JSON.parse(await inspect(taskId, true)) as TaskInspection;
    const arn = `arn:aws:states:us-east-1:000000000000:execution:deploy-release:${taskId}`;
    assert.deepEqual(
      { ...waiting.execution, progress: undefined },
      { arn, name: taskId, status: 'RUNNING', openQuestions: ['approval'], progress: undefined },
    );
    const table = await inspect(taskId, false);
    assert.match(table, new RegExp(`execution\\s+${taskId} \\(${arn.replaceAll(/[.:]/g, '\\$&')}\\)\n`));
    assert.match(table, /executionStatus\s+RUNNING \(no end recorded\)\n/);
    assert.match(table, /openQuestions\s+approval\n/);

    await rpc(stack.url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { approve: true } } } });
    await pollUntil(stack.url, taskId, (task) => task.status === 'completed', SETTLE_MS, 100);
    const ended = JSON.parse(await inspect(taskId, true)) as TaskInspection;
    assert.equal(ended.execution?.status, 'SUCCEEDED');
    assert.deepEqual(ended.execution?.openQuestions, []);
    assert.match(await inspect(taskId, false), /openQuestions\s+\(none\)\n/);
  });

  it('shows no execution for a task of an ordinary tool', { timeout: 60_000 }, async () => {
    const created = resultOf(await rpc(stack.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1 } }));
    const taskId = created['taskId'] as string;
    assert.equal(typeof taskId, 'string', JSON.stringify(created));
    const found = JSON.parse(await inspect(taskId, true)) as TaskInspection;
    assert.equal(found.execution, undefined);
  });
});
