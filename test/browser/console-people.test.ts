/**
 * The console as a person uses it, on `LOCAL_AUTH=1 npm start` with two
 * approvers (`ada`, `eve`): every page passes axe-core (no serious or
 * critical violation) and fits a 390-px phone without sideways scroll, its
 * targets 44 px, while the served CSP stays strict; statuses in words and
 * times in the browser's zone; a rejection's reason reaches the caller's
 * result; lists update without a reload, a question decided elsewhere leaves
 * the other approver's list and page, and their late submit says who
 * decided and when; a malformed form is a 400; a copied cookie is refused
 * after sign-out.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Page, Response } from 'playwright-core';
import { pollUntil, TasksClient } from '../../bin/cli/client.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { personToken } from '../support/oauth.ts';
import { type BrowserOptions, launchBrowser, signInOnAuthPages, type TestBrowser } from './browser.ts';

/** Generous: the machine may be busy; nothing here asserts how fast anything is. */
const SETTLE_MS = 45_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const LONG_WORD = 'x'.repeat(300);

let stack: LocalStackProcess;
let base: string;
const browsers: TestBrowser[] = [];

before(async () => {
  stack = await startLocalStackProcess({
    env: { LOCAL_AUTH: '1', LOCAL_AUTH_PORT: '0', LOCAL_AUTH_GROUPS: 'ada=approvers,eve=approvers', TASKS_APPROVERS: 'group:approvers' },
  });
  base = stack.url.replace(/\/mcp$/, '');
});

after(async () => {
  for (const browser of browsers) await browser.close();
  await stack?.stop();
});

/** A browser with `login` signed in to the console, on the list. */
async function signedIn(login: string, options: BrowserOptions = {}): Promise<{ browser: TestBrowser; page: Page }> {
  const browser = await launchBrowser(options);
  browsers.push(browser);
  const page = await browser.page();
  await page.goto(`${base}/console`);
  await signInOnAuthPages(page, login);
  await page.waitForURL(`${base}/console`);
  return { browser, page };
}

const client = async (login: string) => new TasksClient({ url: stack.url, token: await personToken(stack.url, login) });

async function started(who: TasksClient, args: Record<string, unknown>, tool = 'approval_gate'): Promise<string> {
  const outcome = await who.callTool(tool, args);
  assert.equal(outcome.kind, 'task');
  const taskId = outcome.kind === 'task' ? outcome.task.taskId : '';
  if (tool === 'approval_gate') {
    await pollUntil(
      () => who.getTask(taskId),
      (task) => task.status === 'input_required',
      { timeoutMs: SETTLE_MS, interval: () => 250 },
    );
  }
  return taskId;
}

/** The served page's policy is as strict as ever (the test context bypasses it only to inject axe). */
function strictCsp(response: Response | null, url: string): void {
  const csp = response?.headers()['content-security-policy'] ?? '';
  assert.match(csp, /default-src 'none'/, url);
  assert.match(csp, /script-src 'nonce-[^']+'(;|$)/, `${url}: only the nonce's script`);
  assert.match(csp, /style-src 'nonce-[^']+'(;|$)/, url);
  assert.match(csp, /frame-ancestors 'none'/, url);
}

/** At a desktop's and a phone's width: strict CSP, no serious or critical axe violation, no sideways scroll, 44-px targets. */
async function checkPage(page: Page, url: string): Promise<void> {
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    strictCsp(await page.goto(url), url);
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const axe = (
        globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }
      ).axe;
      const { violations: found } = await axe.run();
      return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
    });
    assert.deepEqual(violations, [], `${url} at ${viewport.width} px`);
    const { scroll, width } = await page.evaluate(() => {
      const g = globalThis as any;
      return { scroll: g.document.documentElement.scrollWidth as number, width: g.innerWidth as number };
    });
    assert.ok(scroll <= width, `${url} at ${viewport.width} px scrolls sideways: ${scroll} > ${width}`);
    if (viewport === PHONE) {
      const small = await page.evaluate(() => {
        const targets =
          'button, summary, .chip, td a, select, textarea, input:not([type="hidden"]):not([type="radio"]):not([type="checkbox"])';
        return [...(globalThis as any).document.querySelectorAll(targets)]
          .filter((e: any) => e.offsetParent !== null)
          .map((e: any) => ({
            what: `${e.tagName} ${(e.textContent ?? '').trim().slice(0, 20)}`,
            height: e.getBoundingClientRect().height as number,
          }))
          .filter((e) => e.height < 44);
      });
      assert.deepEqual(small, [], `${url}: touch targets under 44 px`);
    }
  }
}

describe('the console for people (LOCAL_AUTH, two approvers)', () => {
  it('every page: axe, 390 px, 44-px targets, a strict CSP; words and times in the browser’s zone', { timeout: 240_000 }, async () => {
    const alice = await client('alice');
    const own = await started(alice, { action: `deploy ${LONG_WORD}` });
    const fourEyes = await started(alice, { action: 'drop table', fourEyes: true });
    const intake = await started(alice, { project: 'apollo' }, 'intake_form');
    const { page } = await signedIn('alice', { bypassCSP: true, timezoneId: 'Asia/Tokyo' });
    await checkPage(page, `${base}/console`);
    assert.equal(await page.locator(`tr[data-task="${own}"] .badge`).innerText(), 'Waiting for your answer');
    assert.equal(
      await page.locator(`tr[data-task="${fourEyes}"] .badge`).innerText(),
      'Waiting for an approver',
      'her own four-eyes question is not hers',
    );
    assert.match(await page.locator(`tr[data-task="${own}"] .summary`).innerText(), /^Action: deploy x+…$/);
    const started_ = page.locator(`tr[data-task="${own}"] time`);
    assert.match(await started_.innerText(), /just now|minutes? ago/);
    assert.match((await started_.getAttribute('title')) ?? '', /GMT\+9/, 'the absolute time in the browser’s zone');
    await checkPage(page, `${base}/console?show=waiting&q=deploy`);
    assert.equal(await page.locator(`tr[data-task="${fourEyes}"]`).count(), 0, '"waiting for me" leaves out what she may not decide');
    await checkPage(page, `${base}/console/tasks/${own}`);
    assert.equal(await page.locator('h1').innerText(), 'Approval gate');
    assert.ok(await page.locator('section.approval button[value="false"]').isVisible(), 'an approval card: Reject');
    assert.equal(await page.locator('section.approval .requester').innerText(), 'alice');
    await checkPage(page, `${base}/console/tasks/${fourEyes}`);
    await page.goto(`${base}/console/tasks/${intake}`);
    await page.locator('section[data-question="contact"]').waitFor({ timeout: SETTLE_MS });
    // A refused answer: each problem beside its field, in words.
    await page.locator('input[name="field.email"]').fill('not an email');
    await page.locator('input[name="field.name"]').fill('Ada');
    await page.locator('section[data-question="contact"] form').evaluate((form) => {
      (form as unknown as { noValidate: boolean }).noValidate = true;
    });
    await page.locator('section[data-question="contact"] button[type="submit"]').click();
    await page.locator('.field-problem').waitFor();
    assert.equal(await page.locator('.field.invalid .field-problem').innerText(), 'Enter an email address, such as name@example.com.');
    await checkPage(page, `${base}/console/tasks/not-a-task`);
    const { page: adaPage } = await signedIn('ada', { bypassCSP: true });
    await checkPage(adaPage, `${base}/console`);
    await adaPage.locator(`tr[data-waiting="${fourEyes}:approval"]`).waitFor();
    await checkPage(adaPage, `${base}/console/tasks/${fourEyes}`);
    assert.equal(await adaPage.locator('section.approval .requester').innerText(), 'alice', 'who asks, on the approver’s card');
    assert.equal(await adaPage.locator('#arguments').count(), 0, 'an approver sees no arguments');
  });

  it('a rejection’s reason reaches the caller; the page says Not approved', { timeout: 120_000 }, async () => {
    const alice = await client('alice');
    const taskId = await started(alice, { action: 'rotate keys' });
    const { page } = await signedIn('alice');
    await page.goto(`${base}/console/tasks/${taskId}`);
    await page.locator('section.approval textarea').fill('not during the freeze');
    await page.locator('section.approval button[value="false"]').click();
    await page.waitForURL(`${base}/console/tasks/${taskId}`);
    await page.locator('#status-line .badge', { hasText: 'Not approved' }).waitFor({ timeout: SETTLE_MS });
    const done = await pollUntil(
      () => alice.getTask(taskId),
      (task) => task.status === 'completed',
      { timeoutMs: SETTLE_MS, interval: () => 250 },
    );
    const result = (done.result?.['structuredContent'] ?? {}) as Record<string, unknown>;
    assert.equal(result['approved'], false);
    assert.equal(result['comment'], 'not during the freeze');
    assert.equal(result['decidedBy'], 'alice');
    assert.match(String(result['message']), /^Not approved by alice: rotate keys\. Reason: not during the freeze$/);
    assert.match(await page.locator('#result-note').innerText(), /Not approved/);
  });

  it('lists update without a reload; a question decided elsewhere leaves the other approver; a late submit says who and when', {
    timeout: 240_000,
  }, async () => {
    const alice = await client('alice');
    const { page: aliceList } = await signedIn('alice');
    const { page: adaList } = await signedIn('ada');
    const { browser: adaBrowser } = { browser: browsers.at(-1)! };
    await Promise.all(
      [aliceList, adaList].map((page) =>
        page.evaluate(() => {
          (globalThis as unknown as { mark: string }).mark = 'same document';
        }),
      ),
    );
    const taskId = await started(alice, { action: 'restart api', fourEyes: true });
    // Alice's list shows her new task, ada's the question, both without a reload (15 s refreshes).
    await aliceList.locator(`tr[data-task="${taskId}"]`).waitFor({ timeout: SETTLE_MS });
    const row = adaList.locator(`tr[data-waiting="${taskId}:approval"]`);
    await row.waitFor({ timeout: SETTLE_MS });
    const adaPage = await adaBrowser.page();
    await adaPage.goto(`${base}/console/tasks/${taskId}`);
    await adaPage.locator('section.approval').waitFor();

    const { page: eve } = await signedIn('eve');
    await eve.goto(`${base}/console/tasks/${taskId}`);
    await eve.locator('section.approval button[value="true"]').click();
    await eve.waitForURL(`${base}/console?decided=approved`);

    await row.waitFor({ state: 'detached', timeout: SETTLE_MS });
    await aliceList.locator(`tr[data-task="${taskId}"] .badge`, { hasText: /Running|Done/ }).waitFor({ timeout: SETTLE_MS });
    for (const page of [aliceList, adaList]) {
      assert.equal(await page.evaluate(() => (globalThis as unknown as { mark?: string }).mark), 'same document', 'never reloaded');
    }
    // Ada's open page follows: who decided shows, the card leaves; her late submit is told who decided and when.
    await adaPage.locator('#decision-list [data-decision="approval"]', { hasText: 'eve' }).waitFor({ timeout: SETTLE_MS });
    const late = adaPage.waitForResponse((response) => response.url().endsWith('/answer'));
    await adaPage.locator('section.approval form').evaluate((form) => {
      (form as unknown as { requestSubmit(submitter?: unknown): void }).requestSubmit(
        (form as unknown as { querySelector(s: string): unknown }).querySelector('button[value="false"]'),
      );
    });
    assert.equal((await late).status(), 409);
    assert.match(
      await adaPage.locator('main').innerText(),
      /eve decided this question (just now|\d+ minutes? ago) \(\d+ \w+ \d{4}, \d\d:\d\d UTC\)/,
    );
  });

  it('a malformed form is a 400 page, and a copied cookie is refused after sign-out', { timeout: 120_000 }, async () => {
    const { browser, page } = await signedIn('carol');
    const malformed = await page.evaluate(async () => {
      const response = await fetch('/console/sign-out', { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
      return { status: response.status, text: await response.text() };
    });
    assert.equal(malformed.status, 400);
    assert.match(malformed.text, /could not be read/);

    const copy = await launchBrowser();
    browsers.push(copy);
    // The console's session cookie only (not the authorization server's, which would sign the copy in again).
    await copy.context.addCookies((await browser.context.cookies()).filter((cookie) => cookie.name.includes('mcp-tasks-console')));
    const stolen = await copy.page();
    await stolen.goto(`${base}/console`);
    assert.match(await stolen.locator('#reach').innerText(), /Signed in as carol/, 'the copy works while the session lives');

    const cookie = (await copy.context.cookies(base)).map((c) => `${c.name}=${c.value}`).join('; ');
    await page.locator('header button', { hasText: 'Sign out' }).click();
    await page.locator('h1', { hasText: 'Signed out' }).waitFor();
    const refused = await stolen.goto(`${base}/console`);
    assert.doesNotMatch(stolen.url(), /\/console$/, 'sent to sign in again');
    assert.notEqual(refused?.status(), 500);
    assert.equal((await fetch(`${base}/console/live`, { headers: { cookie } })).status, 401, 'the copy reads nothing');
  });
});
