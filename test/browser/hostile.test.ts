/**
 * Task data on the console's pages is text, whatever it holds: a task whose
 * arguments, status message, step, question and result carry `<script>`,
 * `<img onerror>` and a `javascript:` link (the `hostile_output` fixture of
 * the `test` toolset) shows them as text, no dialog ever opens, and the only
 * script on the page is the console's own. Checked on the server-rendered
 * page and on the result the live script builds.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { TasksClient } from '../../bin/cli/client.ts';
import { HOSTILE } from '../../functions/fixtures/durability/hostile.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const SETTLE_MS = 30_000;
const ARGUMENT = `<script>alert("argument")</script><img src=x onerror="alert('argument')">`;

let stack: LocalStackProcess;
let browser: TestBrowser;

before(async () => {
  stack = await startLocalStackProcess({ env: { TASKS_TOOLSET: 'test' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** What must hold on any console page showing the task: nothing of the task became markup or a script link. */
async function nothingRan(page: Page): Promise<void> {
  assert.equal(await page.locator('script').count(), await page.locator('script[nonce]').count(), 'no script but the console’s own');
  assert.equal(await page.locator('[onerror]').count(), 0, 'no element with an onerror handler');
  assert.equal(await page.locator('a[href^="javascript:"]').count(), 0, 'no javascript: link');
  assert.deepEqual(browser.dialogs, [], 'no dialog opened');
}

describe('hostile task data on the console', () => {
  it('arguments, status message, step, question and result show as text, and no script of theirs runs', { timeout: 120_000 }, async () => {
    const client = new TasksClient({ url: stack.url });
    const outcome = await client.callTool('hostile_output', { text: ARGUMENT });
    assert.equal(outcome.kind, 'task');
    const taskId = outcome.kind === 'task' ? outcome.task.taskId : '';
    const base = stack.url.replace(/\/mcp$/, '');
    const page = await browser.page();

    await page.goto(`${base}/console`);
    await page.locator(`tr[data-task="${taskId}"]`).waitFor();
    await page.goto(`${base}/console/tasks/${taskId}`);
    const question = page.locator('#questions section[data-question]');
    await question.waitFor({ timeout: SETTLE_MS });
    assert.equal(await question.getAttribute('data-question'), `q-${HOSTILE.image}`, 'the key itself, as an attribute value');
    assert.ok((await page.locator('#status-message').innerText()).includes(`${HOSTILE.script} ${HOSTILE.image} ${ARGUMENT}`));
    assert.ok((await page.locator('#arguments dd').first().innerText()).includes(ARGUMENT), 'the argument, drawn as text');
    assert.ok(
      ((await page.locator('#arguments details.raw pre').textContent()) ?? '').includes(ARGUMENT.replaceAll('"', '\\"')),
      'and raw',
    );
    assert.ok((await question.locator('h3').innerText()).includes(HOSTILE.script));
    assert.ok((await question.locator('label').innerText()).includes(HOSTILE.image));
    assert.equal(await question.locator('input[name="field.note"]').inputValue(), HOSTILE.link, 'a default is a value, not a link');
    assert.ok((await page.locator('figure figcaption', { hasText: 'onerror' }).innerText()).includes(HOSTILE.image), 'the step name');
    await page.goto(`${base}/console`);
    assert.ok((await page.locator(`tr[data-task="${taskId}"]`).innerText()).includes(HOSTILE.script), 'the list shows the message as text');
    await nothingRan(page);

    // The answer completes the task; the result arrives through the live script.
    await page.goto(`${base}/console/tasks/${taskId}`);
    await page.locator('#questions button[type="submit"]').click();
    await page.waitForURL(`${base}/console/tasks/${taskId}`);
    await page.locator('#outcome').waitFor({ state: 'visible', timeout: SETTLE_MS });
    await checkResult(page);

    // And as the server renders it.
    await page.reload();
    await checkResult(page);
    await page.close();
  });
});

async function checkResult(page: Page): Promise<void> {
  const result = page.locator('#result');
  const text = await result.innerText();
  assert.ok(text.includes(`${HOSTILE.script} ${HOSTILE.image} ${HOSTILE.link}`), text);
  assert.ok(text.includes(`${HOSTILE.image} (${HOSTILE.link})`), 'the javascript: link is shown as text');
  assert.equal(await result.locator('a').count(), 1, 'one link: the https one');
  assert.equal(await result.locator('a').getAttribute('href'), 'https://example.com/report');
  assert.ok(text.includes('[image of type image/svg+xml: not shown]'));
  assert.equal(await result.locator('img').count(), 1, 'the PNG, as a data: URL');
  assert.match((await result.locator('img').getAttribute('src')) ?? '', /^data:image\/png;base64,/);
  assert.ok(text.includes('<script>alert("script")</script>'), 'structured content drawn as text');
  assert.ok(
    ((await result.locator('details.raw pre').textContent()) ?? '').includes('"html": "<script>alert(\\"script\\")</script>"'),
    'and as raw JSON',
  );
  await nothingRan(page);
}
