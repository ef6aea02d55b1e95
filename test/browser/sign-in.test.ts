/**
 * The console with sign-in (`LOCAL_AUTH=1 npm start`): a link to a task page
 * leads through the local authorization server's login page and lands on
 * that page; the list holds the person's own tasks only; a second person
 * gets the same 404 for the first one's task as for an unknown id. Tasks are
 * made over MCP with each person's own access token (the authorization code
 * grant, scripted), so the console's principal must be exactly the MCP one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TasksClient } from '../../bin/cli/client.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { personToken } from '../support/oauth.ts';
import { launchBrowser, signInOnAuthPages, type TestBrowser } from './browser.ts';

let stack: LocalStackProcess;
let base: string;
const browsers: TestBrowser[] = [];

before(async () => {
  stack = await startLocalStackProcess({ env: { LOCAL_AUTH: '1', LOCAL_AUTH_PORT: '0' } });
  base = stack.url.replace(/\/mcp$/, '');
});

after(async () => {
  for (const browser of browsers) await browser.close();
  await stack?.stop();
});

const started = async (client: TasksClient) => {
  const outcome = await client.callTool('long_computation', { seconds: 600 });
  assert.equal(outcome.kind, 'task');
  return outcome.kind === 'task' ? outcome.task.taskId : '';
};

describe('console sign-in (LOCAL_AUTH)', () => {
  it("lands on the linked task page after the login page, lists one's own tasks only, and shows nobody else's", {
    timeout: 180_000,
  }, async () => {
    const alice = new TasksClient({ url: stack.url, token: await personToken(stack.url, 'alice') });
    const bob = new TasksClient({ url: stack.url, token: await personToken(stack.url, 'bob') });
    const aliceTask = await started(alice);
    const bobTask = await started(bob);

    const first = await launchBrowser();
    browsers.push(first);
    const page = await first.page();
    const link = `${base}/console/tasks/${aliceTask}`;
    await page.goto(link);
    assert.ok(!page.url().startsWith(base), `sent to the authorization server: ${page.url()}`);
    await signInOnAuthPages(page, 'alice');
    await page.waitForURL(link);
    assert.equal(await page.locator('h1').innerText(), 'Long computation');
    assert.match(await page.locator('#reach').innerText(), /Signed in as alice/);
    const [session] = (await first.context.cookies(base)).filter((cookie) => cookie.name === 'mcp-tasks-console');
    assert.ok(session, 'a session cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Lax');
    assert.equal(session.secure, false, 'plain HTTP on loopback only');

    await page.goto(`${base}/console`);
    await page.locator(`tr[data-task="${aliceTask}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-task="${bobTask}"]`).count(), 0, "bob's task is not in alice's list");

    const second = await launchBrowser();
    browsers.push(second);
    const other = await second.page();
    await other.goto(`${base}/console`);
    await signInOnAuthPages(other, 'bob');
    await other.waitForURL(`${base}/console`);
    await other.locator(`tr[data-task="${bobTask}"]`).waitFor();
    assert.equal(await other.locator(`tr[data-task="${aliceTask}"]`).count(), 0);
    const foreign = await other.goto(link);
    assert.equal(foreign?.status(), 404);
    const unknown = await other.goto(`${base}/console/tasks/${crypto.randomUUID()}`);
    assert.equal(unknown?.status(), 404);
    const foreignText = await (await other.goto(link))?.text();
    const unknownText = await (await other.goto(`${base}/console/tasks/00000000-0000-4000-8000-000000000000`))?.text();
    assert.equal(strip(foreignText), strip(unknownText), 'the same page for another person’s task as for an unknown id');

    // Signed out, the session is gone: the next page asks to sign in again.
    await other.goto(`${base}/console`);
    await other.locator('header button[type="submit"]', { hasText: 'Sign out' }).click();
    await other.locator('h1', { hasText: 'Signed out' }).waitFor();
    const after = await fetch(`${base}/console/tasks/${bobTask}/live`, {
      headers: { cookie: (await second.context.cookies(base)).map((c) => `${c.name}=${c.value}`).join('; ') },
    });
    assert.equal(after.status, 401);

    await alice.cancel(aliceTask);
    await bob.cancel(bobTask);
  });
});

/** A page without its per-response parts (nonce, form token). */
function strip(html: string | undefined): string {
  return (html ?? '').replace(/nonce="[^"]*"/g, '').replace(/name="token" value="[^"]*"/g, '');
}
