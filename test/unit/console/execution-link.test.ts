/**
 * A workflow tool's task page gives its owner the execution the task
 * follows: deployed, a link to its page in the AWS console (built from the
 * ARN's partition and region); on the local stack (a loopback origin) its
 * name alone. Tasks without an execution, and anything but an execution's
 * ARN, show none. Pages served in process over the in-memory store.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import { executionLink } from '../../../shared/console/execution-link.ts';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { CONTRACT_POLICY, contractKit, OWNER, T0 } from '../../contract/kit.ts';

const EXECUTION = 'arn:aws:states:eu-west-1:123456789012:execution:McpTasks-deploy_release:task_abc';

describe('executionLink', () => {
  it("links an execution to its region's Step Functions page in its partition's console", () => {
    assert.deepEqual(executionLink(EXECUTION, false), {
      name: 'task_abc',
      url: `https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1#/v2/executions/details/${EXECUTION}`,
    });
    const china = EXECUTION.replace('arn:aws:', 'arn:aws-cn:').replace('eu-west-1', 'cn-north-1');
    assert.equal(
      executionLink(china, false)?.url,
      `https://console.amazonaws.cn/states/home?region=cn-north-1#/v2/executions/details/${china}`,
    );
  });

  it('names a local execution without a link, and refuses what is not an execution ARN', () => {
    assert.deepEqual(executionLink(EXECUTION, true), { name: 'task_abc' });
    assert.deepEqual(executionLink(EXECUTION.replace('arn:aws:', 'arn:aws-iso:'), false), { name: 'task_abc' });
    for (const arn of ['', 'task_abc', EXECUTION.replace(':execution:', ':stateMachine:'), `${EXECUTION}"><script>`])
      assert.equal(executionLink(arn, false), undefined, arn);
  });
});

describe("a workflow task's page", () => {
  const pageOf = async (origin: string, follows: string | undefined) => {
    const store = new InMemoryTaskStore({ ...CONTRACT_POLICY, listing: { sharedOwner: OWNER } });
    const secret = randomBytes(32);
    const app = createConsoleApp({
      actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => T0 + 10 }),
      mode: { kind: 'open' },
      links: new DeploymentLinks(`${origin}/mcp`),
      keys: purposeKeys(async () => secret),
      signOutRecords: store,
      signInNameRecords: store,
      config: { retentionMs: CONTRACT_POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 3_600_000 },
      approvers: { groups: [], scopes: [] },
      localPrincipal: OWNER,
      log: () => {},
      now: () => T0 + 10,
    });
    const { taskId } = (await contractKit(() => store).claimed({ tool: 'deploy_release' })).task;
    if (follows) assert.equal(await store.followExecution(taskId, follows), follows);
    const first = await app.request('/console');
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    const response = await app.request(`/console/tasks/${taskId}`, { headers: { cookie } });
    assert.equal(response.status, 200);
    return response.text();
  };

  it('deployed, links the owner to the execution in the AWS console', async () => {
    const html = await pageOf('https://tasks.example.com', EXECUTION);
    assert.match(html, /<dt>Workflow execution<\/dt>/);
    assert.ok(
      html.includes(`href="https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1#/v2/executions/details/${EXECUTION}"`),
      html,
    );
    assert.match(html, /rel="noopener noreferrer"/);
  });

  it('on the local stack names the execution without a link; a task following none shows nothing of it', async () => {
    const local = await pageOf('http://127.0.0.1:8788', EXECUTION);
    assert.match(local, /<code class="id">task_abc<\/code> \(run by the local stack\)/);
    assert.doesNotMatch(local, /console\.aws\.amazon\.com/);
    assert.doesNotMatch(await pageOf('https://tasks.example.com', undefined), /Workflow execution/);
  });
});
