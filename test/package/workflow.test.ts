/**
 * The project's workflow tool on `LOCAL_AUTH=1 npm start` (every tool of
 * `src/tools/index.ts`): its own ASL file runs in the local Step Functions
 * emulator to its end: a Parallel whose branches are a Map and an SNS task
 * state (run by the handler of the project's `src/local-states.ts`), then two
 * questions: the caller answers the first through the CLI, an approver other
 * than the caller (`ada`) signs the second off on the task's page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { personToken } from '../support/oauth.ts';
import { LOCAL_MESSAGE_ID, TASK_TOOLS, WORKFLOW_TOOL } from './kinds.ts';
import { APPROVERS, approveOnPage, callerCli, type ProjectStack, startProjectStack } from './project.ts';

let stack: ProjectStack;
let caller: ReturnType<typeof callerCli>;

before(async () => {
  stack = await startProjectStack([], APPROVERS);
  caller = callerCli(stack.url, await personToken(stack.url, 'alice'));
});

after(async () => {
  await stack?.stop();
});

describe('LOCAL_AUTH=1 npm start in the project, its workflow tool', () => {
  it('serves every tool, the workflow among them', async () => {
    const tools = (await caller.cli('tools'))
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[0]);
    assert.deepEqual(tools, [...TASK_TOOLS, WORKFLOW_TOOL]);
  });

  it('runs the workflow to its end: the Parallel, the Map, the local SNS handler, the caller’s answer, the approver’s sign-off', async () => {
    const { taskId } = await caller.task('call', WORKFLOW_TOOL, JSON.stringify({ batch: 'b7', items: ['cups', 'plates'] }), '--detach');
    const planning = await caller.until(taskId, (task) => task.status === 'input_required' || task.status === 'failed');
    assert.deepEqual(Object.keys(planning.inputRequests ?? {}), ['plan'], JSON.stringify(planning));
    await caller.cli('answer', taskId, '--answer', 'plan.approve=true', '--no-input');
    await caller.until(taskId, (task) => Object.keys(task.inputRequests ?? {}).includes('signoff'));
    await approveOnPage(stack.url, 'ada', taskId, 'signoff');
    const done = await caller.task('watch', taskId, '--no-input');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.structuredContent, {
      batch: 'b7',
      packed: [
        { item: 'cups', packed: true },
        { item: 'plates', packed: true },
      ],
      messageId: LOCAL_MESSAGE_ID,
      shipped: true,
    });
  });
});
