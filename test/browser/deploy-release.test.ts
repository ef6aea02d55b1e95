/**
 * A person decides `deploy_release` on its task's page, in a real browser,
 * on `npm start`'s defaults (the product toolset, an open console on
 * loopback): the workflow's approval shows as the approval card, the
 * decision goes back to the state machine, and the outcome arrives on the
 * page: the deployment's result once approved; once rejected, the machine's
 * `Catch` path ends the task naming the reason typed with the rejection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TasksClient } from '../../bin/cli/client.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

/** Generous: the machine may be busy; nothing here asserts how fast anything is. */
const SETTLE_MS = 60_000;

let stack: LocalStackProcess;
let browser: TestBrowser;

before(async () => {
  stack = await startLocalStackProcess();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('deploy_release in a browser', () => {
  it("is approved on its task's page, and its result arrives there", { timeout: 120_000 }, async () => {
    const client = new TasksClient({ url: stack.url });
    const outcome = await client.callTool('deploy_release', { release: 'web@3.1.0', regions: ['eu-west-1', 'eu-central-1'] });
    assert.equal(outcome.kind, 'task');
    const taskId = outcome.kind === 'task' ? outcome.task.taskId : '';
    const page = await browser.page();
    await page.goto(`${stack.url.replace(/\/mcp$/, '')}/console/tasks/${taskId}`);
    const question = page.locator('section[data-question="approval"]');
    await question.waitFor({ timeout: SETTLE_MS });
    assert.match(await question.locator('h3').innerText(), /Deploy web@3\.1\.0 to \["eu-west-1","eu-central-1"\]\?/);
    await question.locator('button[value="true"]').click();
    await page.locator('#outcome').waitFor({ state: 'visible', timeout: SETTLE_MS });
    assert.match(await page.locator('#result').innerText(), /Deployed web@3\.1\.0 to eu-west-1, eu-central-1 and verified it/);
    const task = await client.getTask(taskId);
    assert.equal(task.status, 'completed');
    await page.close();
  });

  it('is rejected on its page with a reason, which ends the task through the Catch path', { timeout: 120_000 }, async () => {
    const client = new TasksClient({ url: stack.url });
    const outcome = await client.callTool('deploy_release', { release: 'web@3.2.0', regions: ['eu-west-1'] });
    const taskId = outcome.kind === 'task' ? outcome.task.taskId : '';
    assert.ok(taskId);
    const page = await browser.page();
    await page.goto(`${stack.url.replace(/\/mcp$/, '')}/console/tasks/${taskId}`);
    const question = page.locator('section[data-question="approval"]');
    await question.waitFor({ timeout: SETTLE_MS });
    await question.locator('textarea').fill('not during the freeze');
    await question.locator('button[value="false"]').click();
    await page.locator('#outcome').waitFor({ state: 'visible', timeout: SETTLE_MS });
    assert.match(await page.locator('#result').innerText(), /The workflow deploy-release failed: Rejected by local: not during the freeze/);
    const task = await client.getTask(taskId);
    assert.equal(task.status, 'completed');
    assert.equal(task.result?.['isError'], true);
    await page.close();
  });
});
