/**
 * The console in a real browser, on `npm start`'s defaults (the product
 * toolset, an open console on loopback): the list, a task page, the
 * several-question demo answered in its forms (a refused answer first), the
 * result arriving without a reload, a long computation cancelled from its
 * page, forms refused from another origin or without their token, and the
 * page links the fallback and the CLI give.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TasksClient } from '../../bin/cli/client.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { resultOf, rpc } from '../support/wire.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));
/** Generous: the machine may be busy; nothing here asserts how fast anything is. */
const SETTLE_MS = 30_000;

let stack: LocalStackProcess;
let browser: TestBrowser;
let client: TasksClient;
let base: string;

before(async () => {
  stack = await startLocalStackProcess();
  base = stack.url.replace(/\/mcp$/, '');
  client = new TasksClient({ url: stack.url });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const started = async (tool: string, args: Record<string, unknown>) => {
  const outcome = await client.callTool(tool, args);
  assert.equal(outcome.kind, 'task', `${tool} runs as a task`);
  return outcome.kind === 'task' ? outcome.task.taskId : '';
};

describe('console in a browser', () => {
  it('list → task page → both forms of the intake demo answered → the result shows without a reload', { timeout: 120_000 }, async () => {
    const intake = await started('intake_form', { project: 'apollo' });
    const page = await browser.page();
    await page.goto(`${base}/console`);
    await page.locator(`tr[data-task="${intake}"]`).waitFor();
    assert.match(await page.locator('#reach').innerText(), /Open console/);
    await page.locator(`tr[data-task="${intake}"] a`).click();
    await page.waitForURL(`${base}/console/tasks/${intake}`);
    assert.equal(await page.locator('h1').innerText(), 'Project intake form');
    // The worker may not have asked yet: the page reloads itself when the questions appear.
    const contact = page.locator('section[data-question="contact"]');
    const project = page.locator('section[data-question="project"]');
    await contact.waitFor({ timeout: SETTLE_MS });
    await project.waitFor();

    // An answer that does not fit the schema (the browser's own check turned off) is refused, naming why; nothing is recorded.
    await contact.locator('input[name="field.name"]').fill('Ada');
    await contact.locator('input[name="field.email"]').fill('not an email');
    await contact.locator('form').evaluate((form) => {
      (form as unknown as { noValidate: boolean }).noValidate = true;
    });
    const refused = page.waitForResponse((response) => response.url().endsWith('/answer'));
    await contact.locator('button[type="submit"]').click();
    assert.equal((await refused).status(), 400);
    assert.equal(
      await contact.locator('.field.invalid .field-problem').innerText(),
      'Enter an email address, such as name@example.com.',
      'the problem in words, beside its field',
    );
    assert.equal(await contact.locator('input[name="field.email"]').getAttribute('aria-invalid'), 'true');
    assert.equal(await contact.locator('input[name="field.name"]').inputValue(), 'Ada', 'what was typed is kept');
    const waiting = await client.getTask(intake);
    assert.deepEqual(Object.keys(waiting.inputRequests ?? {}).sort(), ['contact', 'project']);

    await contact.locator('input[name="field.email"]').fill('ada@example.com');
    await contact.locator('button[type="submit"]').click();
    await page.waitForURL(`${base}/console/tasks/${intake}`);
    assert.equal(await page.locator('section[data-question="contact"]').count(), 0, 'the answered question is gone');
    await project.locator('select[name="field.plan"]').selectOption('enterprise');
    await project.locator('input[name="field.team"]').fill('12');
    await project.locator('input[value="ts"]').check();
    await project.locator('input[value="go"]').check();
    await project.locator('input[name="field.remote"][value="false"]').check();
    await project.locator('input[name="field.start"]').fill('2027-03-01');
    await project.locator('button[type="submit"]').click();
    await page.waitForURL(`${base}/console/tasks/${intake}`);

    // From here on the page is not reloaded: a mark set on this document must survive until the result shows.
    await page.evaluate(() => {
      (globalThis as unknown as { mark: string }).mark = 'same document';
    });
    const outcome = page.locator('#outcome');
    await outcome.waitFor({ state: 'visible', timeout: SETTLE_MS });
    assert.match(await page.locator('#result').innerText(), /Intake for apollo: Ada <ada@example.com>, plan enterprise, languages ts, go/);
    assert.equal(await page.locator('#status-line .badge').innerText(), 'Done');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { mark?: string }).mark), 'same document');
    assert.equal(await page.locator('#cancel').isVisible(), false, 'an ended task has no cancel');
    const done = await client.getTask(intake);
    assert.equal(done.status, 'completed');
    assert.deepEqual((done.result?.['structuredContent'] as { answers?: unknown } | undefined)?.answers, {
      name: 'Ada',
      email: 'ada@example.com',
      plan: 'enterprise',
      team: 12,
      remote: false,
      languages: ['ts', 'go'],
      start: '2027-03-01',
    });
    assert.deepEqual(browser.dialogs, []);
    await page.close();
  });

  it('cancels a long computation from its page, after the confirmation', { timeout: 120_000 }, async () => {
    const long = await started('long_computation', { seconds: 600 });
    const page = await browser.page();
    await page.goto(`${base}/console/tasks/${long}`);
    const confirm = page.locator('#cancel button[name="confirm"]');
    assert.equal(await confirm.isVisible(), false, 'the confirmation is behind a first click');
    await page.locator('#cancel summary').click();
    await confirm.click();
    await page.waitForURL(`${base}/console/tasks/${long}`);
    await page.locator('#status-line .badge', { hasText: 'Cancelled' }).waitFor({ timeout: SETTLE_MS });
    assert.equal((await client.getTask(long)).status, 'cancelled');
    await page.close();
  });

  it('refuses a form posted from another origin, or without its token, and changes nothing', { timeout: 120_000 }, async () => {
    const long = await started('long_computation', { seconds: 600 });
    const page = await browser.page();
    await page.goto(`${base}/console/tasks/${long}`);
    const token = await page.locator('#cancel input[name="token"]').inputValue();

    // Another origin (same host, another port: the session cookie is sent), even holding the token.
    const attacker = await serveAttacker(`${base}/console/tasks/${long}/cancel`, token);
    try {
      const refused = page.waitForResponse((response) => response.url().endsWith('/cancel'));
      await page.goto(attacker.url);
      assert.equal((await refused).status(), 403);
    } finally {
      attacker.server.closeAllConnections();
      await new Promise((resolve) => attacker.server.close(resolve));
    }
    assert.equal((await client.getTask(long)).status, 'working');

    // This origin, without the token.
    await page.goto(`${base}/console/tasks/${long}`);
    await page.locator('#cancel input[name="token"]').evaluate((input) => {
      (input as unknown as { value: string }).value = 'forged';
    });
    await page.locator('#cancel summary').click();
    const noToken = page.waitForResponse((response) => response.url().endsWith('/cancel'));
    await page.locator('#cancel button[name="confirm"]').click();
    assert.equal((await noToken).status(), 403);
    assert.equal((await client.getTask(long)).status, 'working');

    // A script (no browser): no Origin, no Sec-Fetch-Site.
    const scripted = await fetch(`${base}/console/tasks/${long}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, confirm: 'yes' }),
    });
    assert.equal(scripted.status, 403);
    assert.equal((await client.getTask(long)).status, 'working');
    await client.cancel(long);
    await page.close();
  });

  it("the fallback's text for a person's question and the CLI give the task page's URL, which opens the task", {
    timeout: 120_000,
  }, async () => {
    // A client without tasks: the person-only approval is answered on the page the fallback names.
    const called = await rpc(stack.url, 'tools/call', { name: 'approval_gate', arguments: { action: 'ship it' } }, { capabilities: {} });
    const result = resultOf(called);
    const text = (result['content'] as Array<{ text: string }>)[0]!.text;
    const person = (result['structuredContent'] as { taskId: string; person?: { page?: string } }) ?? {};
    const page = person.person?.page;
    assert.equal(page, `${base}/console/tasks/${person.taskId}`);
    assert.ok(text.includes(page!), text);
    const tab = await browser.page();
    await tab.goto(page!);
    await tab.locator('section[data-question="approval"]').waitFor({ timeout: SETTLE_MS });
    // The status names the page for whoever reads it elsewhere; on the page itself, no link to it.
    assert.equal(await tab.locator('#status-message').innerText(), 'Waiting for a person to answer on this page');
    await tab.locator('section[data-question="approval"] button[value="true"]').click();
    await tab.locator('#outcome').waitFor({ state: 'visible', timeout: SETTLE_MS });
    assert.match(await tab.locator('#result').innerText(), /Approved and done: ship it/);

    // The CLI, off a terminal, stops at the question and prints the page.
    const cli = await run(['--url', stack.url, 'call', 'approval_gate', '{"action":"rotate"}']);
    assert.equal(cli.code, 3, cli.stderr);
    const printed = /its page: (http:\/\/\S+?)\)/.exec(cli.stderr)?.[1];
    assert.ok(printed, cli.stderr);
    await tab.goto(printed);
    assert.equal(await tab.locator('h1').innerText(), 'Approval gate');
    assert.ok(await tab.locator('section[data-question="approval"]').isVisible());
    await tab.close();
  });
});

/** A page on another origin that posts the cancel form at once (as a hostile site would). */
async function serveAttacker(action: string, token: string): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<form method="post" action="${action}"><input name="token" value="${token}"><input name="confirm" value="yes"></form>` +
        '<script>document.forms[0].submit()</script>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
