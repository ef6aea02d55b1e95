/**
 * The console's pages served in process (Hono's `app.request`) over the
 * in-memory store, as an open console on loopback: the list, a waiting task's
 * form refused then answered, a finished task's result, cancel with and
 * without its confirmation, the live view, find, and what it refuses (another
 * origin, a missing form token, unknown ids). Untrusted text stays text. The
 * browser lane runs the same pages in Chromium on the local stack.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { CONTRACT_POLICY, contractKit, ELICIT, OWNER, T0 } from '../../contract/kit.ts';

const ORIGIN = 'http://127.0.0.1:8788';
const HOSTILE = '<script>alert(1)</script>';

let store: InMemoryTaskStore;
let logged: LogEvent[];
let app: ReturnType<typeof createConsoleApp>;
let cookie: string;

const kit = contractKit(() => store);

beforeEach(async () => {
  store = new InMemoryTaskStore({ ...CONTRACT_POLICY, listing: { sharedOwner: OWNER } });
  logged = [];
  const secret = randomBytes(32);
  app = createConsoleApp({
    actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: (event) => logged.push(event), now: () => T0 + 10 }),
    mode: { kind: 'open' },
    links: new DeploymentLinks(`${ORIGIN}/mcp`),
    keys: purposeKeys(async () => secret),
    signOutRecords: store,
    signInNameRecords: store,
    config: { retentionMs: CONTRACT_POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 3_600_000 },
    events: true,
    approvers: { groups: [], scopes: [] },
    localPrincipal: OWNER,
    log: (event) => logged.push(event),
    now: () => T0 + 10,
  });
  const first = await app.request('/console');
  cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
  assert.match(cookie, /=/, 'an open console gives its visitor a session');
});

const get = (path: string) => app.request(path, { headers: { cookie } });
const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = { origin: ORIGIN }) =>
  app.request(path, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
const formToken = (html: string) => /name="token" value="([^"]+)"/.exec(html)?.[1] ?? assert.fail('the page carries a form token');

describe('console pages in process', () => {
  it('list the principal’s tasks, newest first, with hostile text escaped', async () => {
    const { task: older, leaseOwner } = await kit.claimed({ now: T0 - 2 }, T0 - 2);
    await store.heartbeat(older.taskId, leaseOwner, T0 - 1, { statusMessage: HOSTILE });
    const newer = await kit.created({ now: T0 - 1 });
    const response = await get('/console');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const html = await response.text();
    assert.ok(html.indexOf(newer.taskId) < html.indexOf(older.taskId), 'newest first');
    assert.equal(html.includes(HOSTILE), false, 'the status message is not markup');
    assert.match(html, /&lt;script&gt;/);
  });

  it('a waiting task’s form: an answer outside its schema is refused on the page, a fitting one recorded and the task resumed', async () => {
    const schema = { type: 'object', properties: { count: { type: 'integer', minimum: 1 } }, required: ['count'] };
    const task = await kit.waiting({
      ask: { method: 'elicitation/create', params: { mode: 'form', message: HOSTILE, requestedSchema: schema } },
    });
    const page = await get(`/console/tasks/${task.taskId}`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /data-question="ask"/);
    assert.equal(html.includes(HOSTILE), false);
    const token = formToken(html);

    const wrong = await post(`/console/tasks/${task.taskId}/answer`, { token, key: 'ask', 'field.count': '0' });
    assert.equal(wrong.status, 400);
    assert.equal((await store.get(task.taskId, OWNER, T0 + 20))?.status, 'input_required', 'nothing recorded');
    assert.ok(logged.some((event) => event.event === 'console-answer-refused'));

    const right = await post(`/console/tasks/${task.taskId}/answer`, { token, key: 'ask', 'field.count': '3' });
    assert.equal(right.status, 303);
    assert.equal(right.headers.get('location'), `/console/tasks/${task.taskId}`);
    const after = await store.get(task.taskId, OWNER, T0 + 20);
    assert.equal(after?.status, 'working');
    assert.deepEqual(after?.inputResponses['ask'], { action: 'accept', content: { count: 3 } });

    const again = await post(`/console/tasks/${task.taskId}/answer`, { token, key: 'ask', 'field.count': '4' });
    assert.equal(again.status, 409, 'a question answered is no longer open');
  });

  it('a finished task shows its result and its end event; its live view says it is terminal', async () => {
    const task = await kit.completed();
    const html = await (await get(`/console/tasks/${task.taskId}`)).text();
    assert.match(html, /class="badge badge-done" data-status="completed">Done</);
    assert.match(html, /done/);
    assert.match(
      html,
      new RegExp(`<li data-event="Task Completed">Task Completed, <time datetime="${new Date(task.lastUpdatedAt).toISOString()}"`),
    );
    const waiting = await kit.waiting({ ask: ELICIT });
    assert.doesNotMatch(
      await (await get(`/console/tasks/${waiting.taskId}`)).text(),
      /data-event=/,
      "a question the client's model may answer sends none",
    );
    const live = await get(`/console/tasks/${task.taskId}/live`);
    assert.equal(live.status, 200);
    assert.equal(((await live.json()) as { status: string }).status, 'completed');
  });

  it('cancel needs its confirmation, then cancels', async () => {
    const task = await kit.waiting({ ask: ELICIT });
    const token = formToken(await (await get(`/console/tasks/${task.taskId}`)).text());
    assert.equal((await post(`/console/tasks/${task.taskId}/cancel`, { token })).status, 400);
    assert.equal((await store.get(task.taskId, OWNER, T0 + 20))?.status, 'input_required');
    assert.equal((await post(`/console/tasks/${task.taskId}/cancel`, { token, confirm: 'yes' })).status, 303);
    assert.equal((await store.get(task.taskId, OWNER, T0 + 20))?.status, 'cancelled');
  });

  it('refuses a form from another origin or without the session’s token, changing nothing', async () => {
    const task = await kit.waiting({ ask: ELICIT });
    const token = formToken(await (await get(`/console/tasks/${task.taskId}`)).text());
    const foreign = await post(`/console/tasks/${task.taskId}/cancel`, { token, confirm: 'yes' }, { origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    const tokenless = await post(`/console/tasks/${task.taskId}/cancel`, { confirm: 'yes' });
    assert.equal(tokenless.status, 403);
    assert.equal((await store.get(task.taskId, OWNER, T0 + 20))?.status, 'input_required');
  });

  it('unknown ids are the same not-found; find redirects to a task’s page and refuses an empty id', async () => {
    assert.equal((await get('/console/tasks/no-such-task')).status, 404);
    assert.equal((await get(`/console/tasks/${'x'.repeat(500)}`)).status, 404);
    assert.equal((await get('/console/tasks/no-such-task/live')).status, 404);
    assert.equal((await get('/console/elsewhere')).status, 404);
    const found = await get('/console/find?id=abc');
    assert.equal(found.status, 303);
    assert.equal(found.headers.get('location'), '/console/tasks/abc');
    assert.equal((await get('/console/find?id=')).status, 400);
  });

  it('a malformed multipart body is a 400 page before any session check, on every form route; an oversized one still 413', async () => {
    const task = await kit.waiting({ ask: ELICIT });
    const boundary = '----cut';
    const bodies: Array<[string, string]> = [
      ['multipart/form-data', 'token=x'],
      [`multipart/form-data; boundary=${boundary}`, `--${boundary}\r\nContent-Disposition: form-data; name="token"\r\n\r\nabc`],
    ];
    for (const path of [`/console/tasks/${task.taskId}/answer`, `/console/tasks/${task.taskId}/cancel`, '/console/sign-out']) {
      for (const [type, body] of bodies) {
        // No cookie: the body is refused before anything looks at a session.
        const response = await app.request(path, { method: 'POST', headers: { origin: ORIGIN, 'content-type': type }, body });
        assert.equal(response.status, 400, `${path} ${type}`);
        assert.match(await response.text(), /could not be read/);
      }
    }
    assert.ok(logged.some((event) => event.event === 'console-refused' && event['reason'] === 'malformed-form'));
    const big = await app.request(`/console/tasks/${task.taskId}/cancel`, {
      method: 'POST',
      headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${'x'.repeat(300 * 1024)}`,
    });
    assert.equal(big.status, 413);
    assert.equal((await store.get(task.taskId, OWNER, T0 + 20))?.status, 'input_required');
  });
});
