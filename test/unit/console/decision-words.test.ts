/**
 * The console's words where they said the wrong thing: an approver's
 * confirmation names what their decision did (never "the task goes on"
 * after a rejection); a task's own page does not link to itself in its
 * status line, to its owner or an approver; a time in task data (a workflow
 * step's `startDate`, an ISO date in a result) is a `<time>` read as words.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import type { LiveView } from '../../../shared/console/live.ts';
import { el } from '../../../shared/console/nodes.ts';
import { timeOf, valueNodes } from '../../../shared/console/values.ts';
import { liveView, onItsOwnPage } from '../../../shared/console/view.ts';
import { decidedKind, decidedWords } from '../../../shared/console/words.ts';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { ANSWERED_BY_META, FOUR_EYES_META, type InputRequest } from '../../../shared/tasks/model.ts';
import { CONTRACT_POLICY, contractKit, OWNER, T0 } from '../../contract/kit.ts';

const ORIGIN = 'https://tasks.example';
const ADA = 'jwt|ada';
const CONFIG = { retentionMs: CONTRACT_POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 86_400_000 };
const APPROVAL: InputRequest = {
  method: 'elicitation/create',
  params: {
    message: 'Approve: rotate keys?',
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } }, required: ['approve'] },
    _meta: { [ANSWERED_BY_META]: 'person', [FOUR_EYES_META]: true },
  },
};
const FORM: InputRequest = {
  method: 'elicitation/create',
  params: { message: 'Which colour?', requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } } },
};

/** A console signed in as Ada, an approver, over a memory store with one task waiting on a four-eyes approval. */
async function approversConsole(statusMessage?: (taskId: string) => string) {
  const store = new InMemoryTaskStore({ ...CONTRACT_POLICY, maxInputWaitMs: 86_400_000 });
  const { task: claimed, leaseOwner } = await contractKit(() => store).claimed({}, T0 + 1);
  const task = await store.finish(
    claimed,
    leaseOwner,
    {
      status: 'input_required',
      inputRequests: { approval: APPROVAL },
      ...(statusMessage ? { statusMessage: statusMessage(claimed.taskId) } : {}),
    },
    T0 + 2,
  );
  const now = T0 + 60_000;
  const secret = randomBytes(32);
  const app = createConsoleApp({
    actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => now }),
    mode: { kind: 'sign-in', issuer: `${ORIGIN}/issuer`, clientId: 'console' },
    links: new DeploymentLinks(`${ORIGIN}/mcp`),
    keys: purposeKeys(async () => secret),
    signOutRecords: store,
    signInNameRecords: store,
    config: CONFIG,
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
  /** Ada decides the approval on the task's page; the answer's redirect. */
  const decide = async (fields: Record<string, string>) => {
    const page = await (await get(`/console/tasks/${task.taskId}`)).text();
    const token = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? assert.fail('a form token');
    return app.request(`/console/tasks/${task.taskId}/answer`, {
      method: 'POST',
      headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, key: 'approval', ...fields }).toString(),
    });
  };
  return { store, task, get, decide, now };
}

describe("a decision's confirmation", () => {
  it('after Reject, says the task ends and the reason goes to whoever started it', async () => {
    const { decide, get, store, task, now } = await approversConsole();
    const response = await decide({ 'field.approve': 'false', 'field.comment': 'not this week' });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/console?decided=rejected');
    const list = await (await get('/console?decided=rejected')).text();
    assert.match(
      list,
      /<p id="decided" class="note" role="status">Rejected: the task ends and your reason goes to whoever started it\.<\/p>/,
    );
    assert.doesNotMatch(list, /the task goes on/);
    assert.deepEqual((await store.get(task.taskId, OWNER, now))?.inputResponses, {
      approval: { action: 'accept', content: { approve: false, comment: 'not this week' } },
    });
  });

  it('after Approve, says the task goes on and does what it asked approval for', async () => {
    const { decide, get } = await approversConsole();
    const response = await decide({ 'field.approve': 'true' });
    assert.equal(response.headers.get('location'), '/console?decided=approved');
    const list = await (await get('/console?decided=approved')).text();
    assert.match(list, /role="status">Approved: the task goes on and does what it asked approval for\.<\/p>/);
  });

  it('is worded from what was posted, and only for a kind it knows', () => {
    const cases: Array<[InputRequest, unknown, string]> = [
      [APPROVAL, { action: 'accept', content: { approve: true } }, 'approved'],
      [APPROVAL, { action: 'accept', content: { approve: false, comment: 'no' } }, 'rejected'],
      [APPROVAL, { action: 'decline' }, 'rejected'],
      [FORM, { action: 'accept', content: { colour: 'red' } }, 'answered'],
    ];
    for (const [request, response, kind] of cases) assert.equal(decidedKind(request, response), kind, JSON.stringify(response));
    assert.equal(decidedWords('answered'), 'Answered: the task goes on with your answer.');
    assert.equal(decidedWords('1'), undefined, 'no words for a kind it does not know');
    assert.equal(decidedWords(undefined), undefined);
  });
});

describe("a task page's status line", () => {
  const waitingOn = (taskId: string) => `Waiting for a person to answer on the task's page: ${ORIGIN}/console/tasks/${taskId}`;

  it("does not link to the page itself: on an approver's page", async () => {
    const { get, task } = await approversConsole(waitingOn);
    const page = await (await get(`/console/tasks/${task.taskId}`)).text();
    const status = /<p id="status-line"[^>]*>([\s\S]*?)<\/p>/.exec(page)?.[1] ?? assert.fail('a status line');
    assert.match(status, /<span id="status-message">Waiting for a person to answer on this page<\/span>/);
    assert.doesNotMatch(status, /https?:/);
    const live = (await (await get(`/console/tasks/${task.taskId}/live`)).json()) as LiveView;
    assert.doesNotMatch(JSON.stringify(live.statusNodes), /https?:/, 'nor in what the live read draws');
  });

  it("does not link to the page itself: on the owner's page", async () => {
    const { task } = await approversConsole(waitingOn);
    const view = liveView(task, T0 + 60_000, CONFIG, { principal: OWNER, approver: false });
    assert.deepEqual(view.statusNodes.slice(1), [' ', el('span', { id: 'status-message' }, 'Waiting for a person to answer on this page')]);
  });

  it("keeps other links, and another task's page", () => {
    assert.equal(
      onItsOwnPage(`See ${ORIGIN}/console/tasks/t1 and https://docs.example/x`, 't1'),
      'See this page and https://docs.example/x',
    );
    assert.equal(onItsOwnPage(`Waiting on ${ORIGIN}/console/tasks/t10`, 't1'), `Waiting on ${ORIGIN}/console/tasks/t10`);
    assert.equal(onItsOwnPage(`Waiting on ${ORIGIN}/console/tasks/t1/live`, 't1'), `Waiting on ${ORIGIN}/console/tasks/t1/live`);
    assert.equal(onItsOwnPage(undefined, 't1'), undefined);
  });
});

describe('times in task data', () => {
  it("a workflow step's startDate (epoch milliseconds) is a <time> read as words, not a number", () => {
    const at = 1796685334368;
    const drawn = JSON.stringify(valueNodes({ executionArn: 'arn:aws:states:…', startDate: at }));
    assert.doesNotMatch(drawn, /"1796685334368"/);
    assert.ok(
      drawn.includes(
        JSON.stringify(el('time', { datetime: '2026-12-07T23:15:34.368Z', title: '7 Dec 2026, 23:15 UTC' }, '7 Dec 2026, 23:15 UTC')),
      ),
      drawn,
    );
  });

  it('is read from ISO date-times anywhere, and from epoch milliseconds under a key that names a time only', () => {
    const cases: Array<[unknown, string | undefined, number | undefined]> = [
      [1796685334368, 'startDate', 1796685334368],
      [1796685334368, 'created_at', 1796685334368],
      [1796685334368, 'timestamp', 1796685334368],
      [1796685334368, 'count', undefined],
      [1796685334368, 'format', undefined],
      [1796685334, 'startDate', undefined],
      [42, 'stopTime', undefined],
      ['2026-12-07T23:15:34.368Z', 'decidedAt', 1796685334368],
      ['2026-12-07T23:15:34.368Z', undefined, 1796685334368],
      ['2026-12-08', 'date', undefined],
      ['yesterday', 'date', undefined],
    ];
    for (const [value, key, at] of cases) assert.equal(timeOf(value, key), at, `${String(value)} under ${String(key)}`);
  });

  it('in a table of steps too', () => {
    const drawn = JSON.stringify(valueNodes([{ name: 'deploy', startDate: 1796685334368 }]));
    assert.match(drawn, /"tag":"time","attrs":\{"datetime":"2026-12-07T23:15:34\.368Z"/);
  });
});
