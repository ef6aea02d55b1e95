/**
 * Approvals in a real browser, on `LOCAL_AUTH=1 npm start` with approvers
 * named (`TASKS_APPROVERS=group:approvers`, and `ada` given that group by the
 * local authorization server): an approver decides, from the list of
 * questions waiting for them, an `approval_gate` started by a
 * client-credentials client (a machine nobody else could approve for), and
 * sees none of its arguments; a four-eyes question shows its caller why they
 * cannot decide it, and an approver decides it; a task-declaring client with
 * URL mode gets the task page to decide on, its accept decides nothing, and
 * the page's decision completes the task; a person who is no approver sees
 * no other principal's tasks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { pollUntil, TasksClient } from '../../bin/cli/client.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { clientCredentialsToken, discover, personToken, registerServiceClient } from '../support/oauth.ts';
import { errorOf, resultOf, rpc, TASKS_EXTENSION } from '../support/wire.ts';
import { launchBrowser, signInOnAuthPages, type TestBrowser } from './browser.ts';

/** Generous: the machine may be busy; nothing here asserts how fast anything is. */
const SETTLE_MS = 30_000;
const URL_MODE = { elicitation: { form: {}, url: {} }, extensions: { [TASKS_EXTENSION]: {} } };

let stack: LocalStackProcess;
let base: string;
const browsers: TestBrowser[] = [];

before(async () => {
  stack = await startLocalStackProcess({
    env: { LOCAL_AUTH: '1', LOCAL_AUTH_PORT: '0', LOCAL_AUTH_GROUPS: 'ada=approvers', TASKS_APPROVERS: 'group:approvers' },
  });
  base = stack.url.replace(/\/mcp$/, '');
});

after(async () => {
  for (const browser of browsers) await browser.close();
  await stack?.stop();
});

/** A browser page with `login` signed in to the console. */
async function signedIn(login: string): Promise<Page> {
  const browser = await launchBrowser();
  browsers.push(browser);
  const page = await browser.page();
  await page.goto(`${base}/console`);
  await signInOnAuthPages(page, login);
  await page.waitForURL(`${base}/console`);
  return page;
}

/** A machine's client: client credentials, no person behind it. */
async function serviceClient(): Promise<TasksClient> {
  const { server, metadata } = await discover(stack.url);
  const registered = await registerServiceClient(server.registration_endpoint, 'tasks');
  return new TasksClient({
    url: stack.url,
    token: await clientCredentialsToken(server.token_endpoint, registered, metadata.resource, 'tasks'),
  });
}

const started = async (client: TasksClient, args: Record<string, unknown>) => {
  const outcome = await client.callTool('approval_gate', args);
  assert.equal(outcome.kind, 'task');
  return outcome.kind === 'task' ? outcome.task.taskId : '';
};

const waitingOn = async (client: TasksClient, taskId: string) =>
  pollUntil(
    () => client.getTask(taskId),
    (task) => task.status === 'input_required',
    { timeoutMs: SETTLE_MS, interval: () => 250 },
  );

/** Approves the question on the page open in `page` (an approver's view or the owner's). */
async function approve(page: Page): Promise<void> {
  await page.locator('section[data-question="approval"] button[value="true"]').click();
}

describe('approvals (LOCAL_AUTH, approvers named)', () => {
  it('an approver decides a machine’s approval from the waiting list without seeing its arguments; four eyes; no peeking', {
    timeout: 300_000,
  }, async () => {
    const machine = await serviceClient();
    const machineTask = await started(machine, { action: 'deploy web' });
    const form = (await waitingOn(machine, machineTask)).inputRequests?.['approval'];
    assert.equal(form?.params?.['mode'], 'form', 'a client without URL mode gets the form');
    assert.doesNotMatch(JSON.stringify(form), /https?:/, 'with no link inside it');

    const alice = new TasksClient({ url: stack.url, token: await personToken(stack.url, 'alice') });
    const fourEyesTask = await started(alice, { action: 'drop table', fourEyes: true });
    await waitingOn(alice, fourEyesTask);

    // A person who is no approver: no waiting list, and another principal's task is not found.
    const bob = await signedIn('bob');
    assert.equal(await bob.locator('#waiting').count(), 0);
    assert.equal(await bob.locator(`tr[data-task="${machineTask}"]`).count(), 0);
    assert.equal((await bob.goto(`${base}/console/tasks/${machineTask}`))?.status(), 404);

    // The four-eyes question's caller: the page says why there is no form; tasks/update is refused and leaves it open.
    const alicePage = await signedIn('alice');
    await alicePage.goto(`${base}/console/tasks/${fourEyesTask}`);
    const blocked = alicePage.locator('section[data-question="approval"] [data-blocked]');
    await blocked.waitFor({ timeout: SETTLE_MS });
    assert.match(await blocked.innerText(), /approver other than the task's caller/);
    assert.equal(await alicePage.locator('section[data-question="approval"] form').count(), 0);
    const aliceToken = await personToken(stack.url, 'alice');
    const refused = await rpc(
      stack.url,
      'tasks/update',
      { taskId: fourEyesTask, inputResponses: { approval: { action: 'accept', content: { approve: true } } } },
      { headers: { Authorization: `Bearer ${aliceToken}` } },
    );
    assert.match(errorOf(refused).message, /approver other than the task's caller/);
    assert.equal((await alice.getTask(fourEyesTask)).status, 'input_required');

    // The approver: both questions wait in their list, each with its deadline.
    const ada = await signedIn('ada');
    const machineRow = ada.locator(`tr[data-waiting="${machineTask}:approval"]`);
    await machineRow.waitFor({ timeout: SETTLE_MS });
    await ada.locator(`tr[data-waiting="${fourEyesTask}:approval"]`).waitFor();
    await machineRow.locator('a').click();
    await ada.waitForURL(`${base}/console/tasks/${machineTask}`);
    assert.equal(await ada.locator('#task[data-view="approver"]').count(), 1);
    assert.match(await ada.locator('section[data-question="approval"] .deadline').innerText(), /^Deadline: in 7 days/);
    const shown = await ada.content();
    assert.doesNotMatch(shown, /&quot;action&quot;|"action"/, 'the arguments are never shown to an approver');
    assert.doesNotMatch(shown, /<h2>(Arguments|Recorded steps|Result)<\/h2>/);
    await approve(ada);
    await ada.waitForURL(`${base}/console?decided=approved`);
    await ada.locator('#decided').waitFor();

    const done = await pollUntil(
      () => machine.getTask(machineTask),
      (task) => task.status === 'completed',
      { timeoutMs: SETTLE_MS, interval: () => 250 },
    );
    assert.equal(((done.result?.['structuredContent'] ?? {}) as Record<string, unknown>)['decidedBy'], 'ada');

    await ada.goto(`${base}/console/tasks/${fourEyesTask}`);
    await approve(ada);
    await ada.waitForURL(`${base}/console?decided=approved`);
    await pollUntil(
      () => alice.getTask(fourEyesTask),
      (task) => task.status === 'completed',
      { timeoutMs: SETTLE_MS, interval: () => 250 },
    );
    await alicePage.goto(`${base}/console/tasks/${fourEyesTask}`);
    assert.match(await alicePage.locator('#decisions [data-decision="approval"]').innerText(), /ada as an approver, on this page/);
    assert.equal(await ada.locator(`tr[data-waiting="${machineTask}:approval"]`).count(), 0, 'decided questions leave the list');
  });

  it('a URL-mode client gets the task page to decide on; its accept decides nothing; the page decides', { timeout: 180_000 }, async () => {
    const token = await personToken(stack.url, 'carol');
    const auth = { headers: { Authorization: `Bearer ${token}` }, capabilities: URL_MODE };
    const carol = new TasksClient({ url: stack.url, token, capabilities: { elicitation: { form: {}, url: {} } } });
    const taskId = await started(carol, { action: 'restart api' });
    await waitingOn(carol, taskId);
    const read = async () => resultOf(await rpc(stack.url, 'tasks/get', { taskId }, auth));
    const asked = (await read())['inputRequests'] as Record<string, { params: Record<string, unknown> }>;
    assert.equal(asked['approval']?.params['mode'], 'url');
    assert.equal(asked['approval']?.params['url'], `${base}/console/tasks/${taskId}`);
    const ack = await rpc(stack.url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept' } } }, auth);
    assert.equal(ack.status, 200, ack.text);
    const still = await read();
    assert.equal(still['status'], 'input_required');
    assert.deepEqual(Object.keys(still['inputRequests'] as object), ['approval']);

    const page = await signedIn('carol');
    await page.goto(String(asked['approval']?.params['url']));
    await approve(page);
    await page.waitForURL(`${base}/console/tasks/${taskId}`);
    const done = await pollUntil(
      () => carol.getTask(taskId),
      (task) => task.status === 'completed',
      { timeoutMs: SETTLE_MS, interval: () => 250 },
    );
    assert.equal(((done.result?.['structuredContent'] ?? {}) as Record<string, unknown>)['approved'], true);
  });
});
