/**
 * An approver's console in process (a stand-in sign-in, the memory store):
 * the waiting list and its live rows, the live view of another's question
 * (no result, no arguments), and once another approver has decided it: the
 * page's live read says who and stops, and a late submit is refused with
 * who decided and when, recording nothing.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import type { LiveList, LiveView } from '../../../shared/console/live.ts';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { ANSWERED_BY_META, FOUR_EYES_META } from '../../../shared/tasks/model.ts';
import { CONTRACT_POLICY, contractKit, OWNER, T0 } from '../../contract/kit.ts';

const ORIGIN = 'https://tasks.example';
const ADA = 'jwt|ada';
const EVE = 'jwt|eve';
const APPROVAL = {
  method: 'elicitation/create' as const,
  params: {
    message: 'Approve: rotate keys?',
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } }, required: ['approve'] },
    _meta: { [ANSWERED_BY_META]: 'person', [FOUR_EYES_META]: true },
  },
};

describe("an approver's console", () => {
  it('lists, follows and refuses a late decision of a question decided elsewhere', async () => {
    const store = new InMemoryTaskStore({ ...CONTRACT_POLICY, maxInputWaitMs: 86_400_000 });
    const task = await contractKit(() => store).waiting({ approval: APPROVAL });
    const now = T0 + 60_000;
    const secret = randomBytes(32);
    const app = createConsoleApp({
      actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => now }),
      mode: { kind: 'sign-in', issuer: `${ORIGIN}/issuer`, clientId: 'console' },
      links: new DeploymentLinks(`${ORIGIN}/mcp`),
      keys: purposeKeys(async () => secret),
      signOutRecords: store,
      signInNameRecords: store,
      config: { retentionMs: CONTRACT_POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 86_400_000 },
      approvers: { groups: ['approvers'], scopes: [] },
      localPrincipal: 'local',
      signIn: {
        start: async (next) => ({ url: `${ORIGIN}/issuer`, state: { state: 's', nonce: 'n', verifier: 'v', next } }),
        finish: async () => ({ principal: ADA, name: 'Ada', claims: { groups: ['approvers'], scopes: [] } }),
      },
      log: () => {},
      now: () => now,
    });
    const cookieOf = (response: Response, name: string) =>
      (response.headers.getSetCookie().find((line) => line.startsWith(`__Host-${name}=`)) ?? '').split(';')[0]!;
    const state = cookieOf(await app.request('/console/sign-in'), 'mcp-tasks-sign-in');
    const cookie = cookieOf(await app.request('/console/callback?code=c&state=s', { headers: { cookie: state } }), 'mcp-tasks-console');
    const get = (path: string) => app.request(path, { headers: { cookie } });

    const list = await (await get('/console')).text();
    assert.match(list, new RegExp(`data-waiting="${task.taskId}:approval"`));
    const rows = (await (await get('/console/live')).json()) as LiveList;
    assert.equal(rows.pollIntervalMs, 15_000);
    assert.equal(JSON.stringify(rows.rows['waiting-rows']).includes(task.taskId), true);

    const page = await (await get(`/console/tasks/${task.taskId}`)).text();
    assert.match(page, /data-view="approver"/);
    assert.doesNotMatch(page, /id="arguments"/, 'no arguments for an approver');
    const token = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? assert.fail('a form token');
    const open = (await (await get(`/console/tasks/${task.taskId}/live?key=approval`)).json()) as LiveView;
    assert.deepEqual(open.questions, ['approval']);
    assert.equal(open.over, undefined);

    // Another approver decides it elsewhere.
    await store.decide(
      task.taskId,
      { principal: EVE, name: 'Eve', approver: true },
      { approval: { action: 'accept', content: { approve: true } } },
      now - 30_000,
    );
    const decided = (await (await get(`/console/tasks/${task.taskId}/live?key=approval`)).json()) as LiveView;
    assert.equal(decided.over, true);
    assert.deepEqual(decided.questions, []);
    assert.match(JSON.stringify(decided.decisionNodes), /Eve/);
    assert.doesNotMatch(JSON.stringify(await (await get('/console/live')).json()), new RegExp(task.taskId), 'it left the waiting list');

    const late = await app.request(`/console/tasks/${task.taskId}/answer`, {
      method: 'POST',
      headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, key: 'approval', 'field.approve': 'false' }).toString(),
    });
    assert.equal(late.status, 409);
    assert.match(
      await late.text(),
      /Eve decided this question <time datetime="[^"]+" title="[^"]+">just now<\/time> \(\d+ \w+ \d{4}, \d\d:\d\d UTC\), before your answer arrived/,
    );
    assert.deepEqual((await store.get(task.taskId, OWNER, now))?.inputResponses, {
      approval: { action: 'accept', content: { approve: true } },
    });
    assert.equal((await get(`/console/tasks/${task.taskId}/live?key=other`)).status, 404, 'nothing for a key nobody decided');
  });
});
