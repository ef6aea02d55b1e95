/**
 * "Who asks" on a task's pages: the caller's token claim kept on the row,
 * else the owner's name from their last console sign-in, else the subject;
 * each branch with the reads it costs (none where the row or the owner's own
 * session already says it, at most one otherwise, none on an open console).
 * Then in process, over the memory store: the owner signs in with a name, an
 * approver opens the owner's task (its row keeps no requester) and reads the
 * owner's name on the approval card.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { principalFor } from '../../../shared/auth/principal.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import { SESSION_SECONDS, type Session, seal, unseal } from '../../../shared/console/session.ts';
import type { SignedIn } from '../../../shared/console/sign-in.ts';
import { signInNameKeepMs, signInNames } from '../../../shared/console/sign-in-names.ts';
import { whoAsks } from '../../../shared/console/words.ts';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { ANSWERED_BY_META, type TaskRecord } from '../../../shared/tasks/model.ts';
import type { SignInNameStore } from '../../../shared/tasks/sign-in-names-store.ts';
import type { NewTask } from '../../../shared/tasks/store-types.ts';
import { CONTRACT_POLICY, T0 } from '../../contract/kit.ts';
import { newTask } from '../../support/factories.ts';

const ORIGIN = 'https://tasks.example';
const ISSUER = `${ORIGIN}/issuer`;
const ALICE = principalFor(ISSUER, 'alice-sub');
const BOB = principalFor(ISSUER, 'bob-sub');
const CONFIG = { retentionMs: 3_600_000, maxInputWaitMs: 86_400_000 };
const SIGN_IN = { kind: 'sign-in', issuer: ISSUER, clientId: 'console' } as const;
const APPROVAL = {
  method: 'elicitation/create' as const,
  params: {
    message: 'Approve: rotate keys?',
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } }, required: ['approve'] },
    _meta: { [ANSWERED_BY_META]: 'person' },
  },
};

/** A store whose name reads are counted (and may be made to fail). */
function countedNames(store: SignInNameStore) {
  const counted = { reads: 0, fail: false };
  const names: SignInNameStore = {
    recordSignInName: (principal, name, at, keepUntil) => store.recordSignInName(principal, name, at, keepUntil),
    signInNameOf: async (principal, now) => {
      counted.reads += 1;
      if (counted.fail) throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
      return store.signInNameOf(principal, now);
    },
  };
  return { counted, names };
}

const session = (principal: string, extra: Partial<Session> = {}): Session => ({ kind: 'person', principal, formToken: 't', ...extra });

const task = (overrides: Partial<TaskRecord> = {}): TaskRecord =>
  ({
    taskId: 't1',
    owner: ALICE,
    tool: 'approval_gate',
    arguments: {},
    clientCapabilities: {},
    createdAt: T0,
    lastUpdatedAt: T0,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    status: 'working',
    inputResponses: {},
    cancelRequested: false,
    attempts: 0,
    version: 1,
    ...overrides,
  }) as TaskRecord;

describe('who asks: the rule', () => {
  it('is the kept claim, else the sign-in name, else the subject', () => {
    assert.equal(whoAsks(task({ requester: 'Alice Liddell' }), 'Alice from the console'), 'Alice Liddell');
    assert.equal(whoAsks(task(), 'Alice from the console'), 'Alice from the console');
    assert.equal(whoAsks(task()), 'alice-sub');
  });

  it("claim: the row's requester, read from nowhere else", async () => {
    const { counted, names } = countedNames(new InMemoryTaskStore(CONTRACT_POLICY));
    await names.recordSignInName(ALICE, 'Alice from the console', T0, T0 + 60_000);
    const rule = signInNames(names, { mode: SIGN_IN, config: CONFIG, log: () => {}, now: () => T0 + 1 });
    assert.equal(await rule.whoAsks(task({ requester: 'Alice Liddell' }), session(BOB, { approver: true })), 'Alice Liddell');
    assert.equal(counted.reads, 0);
  });

  it("sign-in name: the owner's recorded name, one read for an approver, none for the owner whose session knows it", async () => {
    const { counted, names } = countedNames(new InMemoryTaskStore(CONTRACT_POLICY));
    const rule = signInNames(names, { mode: SIGN_IN, config: CONFIG, log: () => {}, now: () => T0 + 1 });
    await rule.record(ALICE, 'Alice from the console');
    assert.equal(await rule.whoAsks(task(), session(BOB, { approver: true })), 'Alice from the console');
    assert.equal(counted.reads, 1);
    assert.equal(await rule.whoAsks(task(), session(ALICE, { requester: 'Alice (this session)' })), 'Alice (this session)');
    assert.equal(counted.reads, 1, "the owner's session names her: no read");
    assert.equal(await rule.whoAsks(task(), session(ALICE)), 'Alice from the console', 'a session without a name reads the record');
    assert.equal(counted.reads, 2);
  });

  it('subject: no name recorded, or its keep ran out, or nobody signs in to this console', async () => {
    const store = new InMemoryTaskStore(CONTRACT_POLICY);
    const { counted, names } = countedNames(store);
    let now = T0;
    const rule = signInNames(names, { mode: SIGN_IN, config: CONFIG, log: () => {}, now: () => now });
    assert.equal(await rule.whoAsks(task(), session(BOB, { approver: true })), 'alice-sub');
    assert.equal(counted.reads, 1);
    await rule.record(ALICE, 'Alice');
    now += signInNameKeepMs(CONFIG) - 1;
    assert.equal(await rule.whoAsks(task(), undefined), 'Alice', 'kept until the end of its keep');
    now += 1;
    assert.equal(await rule.whoAsks(task(), undefined), 'alice-sub', 'past its keep the name is gone');
    const open = signInNames(names, { mode: { kind: 'open' }, config: CONFIG, log: () => {}, now: () => T0 });
    const reads = counted.reads;
    assert.equal(await open.whoAsks(task({ owner: 'local' }), session('local', { kind: 'open' })), 'local');
    assert.equal(counted.reads, reads, 'an open console reads no name');
  });

  it('keeps a name for a session, the longest input wait and the retention; a failed read names the subject and logs no name', async () => {
    assert.equal(signInNameKeepMs(CONFIG), SESSION_SECONDS * 1000 + CONFIG.maxInputWaitMs + CONFIG.retentionMs);
    const store = new InMemoryTaskStore(CONTRACT_POLICY);
    const { counted, names } = countedNames(store);
    const logged: LogEvent[] = [];
    const rule = signInNames(names, { mode: SIGN_IN, config: CONFIG, log: (event) => logged.push(event), now: () => T0 });
    await rule.record(ALICE, 'Alice Secretname');
    counted.fail = true;
    assert.equal(await rule.whoAsks(task(), undefined), 'alice-sub');
    assert.deepEqual(logged, [
      { event: 'console-sign-in-name-failed', op: 'read', taskId: 't1', error: 'ProvisionedThroughputExceededException' },
    ]);
    const failing: SignInNameStore = {
      recordSignInName: async () => {
        throw Object.assign(new Error('Alice Secretname'), { name: 'ValidationException' });
      },
      signInNameOf: async () => undefined,
    };
    await signInNames(failing, { mode: SIGN_IN, config: CONFIG, log: (event) => logged.push(event), now: () => T0 }).record(
      ALICE,
      'Alice Secretname',
    );
    assert.deepEqual(logged.at(-1), { event: 'console-sign-in-name-failed', op: 'record', error: 'ValidationException' });
    assert.equal(JSON.stringify(logged).includes('Secretname'), false, 'the name is never logged');
  });
});

describe('who asks: an approver sees the name the owner signed in with', () => {
  const store = new InMemoryTaskStore({ ...CONTRACT_POLICY, maxInputWaitMs: 86_400_000 });
  const { counted, names } = countedNames(store);
  const logged: LogEvent[] = [];
  const now = T0 + 60_000;
  let person: SignedIn;
  const secret = randomBytes(32);
  const app = createConsoleApp({
    actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => now }),
    mode: SIGN_IN,
    links: new DeploymentLinks(`${ORIGIN}/mcp`),
    keys: purposeKeys(async () => secret),
    signOutRecords: store,
    signInNameRecords: names,
    config: { retentionMs: CONTRACT_POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 86_400_000 },
    approvers: { groups: ['approvers'], scopes: [] },
    localPrincipal: 'local',
    signIn: {
      start: async (next) => ({ url: ISSUER, state: { state: 's', nonce: 'n', verifier: 'v', next } }),
      finish: async () => person,
    },
    log: (event) => logged.push(event),
    now: () => now,
  });
  const cookieOf = (response: Response, name: string) =>
    (response.headers.getSetCookie().find((line) => line.startsWith(`__Host-${name}=`)) ?? '').split(';')[0]!;
  const signIn = async (who: SignedIn) => {
    person = who;
    const state = cookieOf(await app.request('/console/sign-in'), 'mcp-tasks-sign-in');
    const cookie = cookieOf(await app.request('/console/callback?code=c&state=s', { headers: { cookie: state } }), 'mcp-tasks-console');
    assert.match(cookie, /=./, 'signed in');
    return (path: string) => app.request(path, { headers: { cookie } });
  };
  const waitingTask = async (overrides: Partial<NewTask>) => {
    const { task: created } = await store.create(newTask({ owner: ALICE, tool: 'approval_gate', now: T0, ...overrides }));
    const claimed = await store.claim(created.taskId, 'worker', T0 + 1);
    assert.ok(claimed);
    return store.finish(claimed, 'worker', { status: 'input_required', inputRequests: { approval: APPROVAL } }, T0 + 2);
  };
  const whoAsksOn = (html: string) => /<dd class="requester">([^<]*)<\/dd>/.exec(html)?.[1];

  it('the approval card names the owner by her sign-in; her own page by her session, with no read', async () => {
    const alice = await signIn({
      principal: ALICE,
      name: 'alice@example.com',
      requester: 'Alice Liddell',
      claims: { groups: [], scopes: [] },
    });
    const bob = await signIn({ principal: BOB, name: 'bob@example.com', requester: 'Bob', claims: { groups: ['approvers'], scopes: [] } });
    const waiting = await waitingTask({});
    assert.equal(waiting.requester, undefined, 'the row keeps no requester');

    counted.reads = 0;
    const approverPage = await (await bob(`/console/tasks/${waiting.taskId}`)).text();
    assert.match(approverPage, /data-view="approver"/);
    assert.equal(whoAsksOn(approverPage), 'Alice Liddell');
    assert.equal(counted.reads, 1, 'one read for the page');

    const ownPage = await (await alice(`/console/tasks/${waiting.taskId}`)).text();
    assert.equal(/<dd id="requester">([^<]*)<\/dd>/.exec(ownPage)?.[1], 'Alice Liddell');
    assert.equal(counted.reads, 1, "the owner's session already names her");

    const claimed = await waitingTask({ requester: 'Alice L. (from her token)' });
    assert.equal(whoAsksOn(await (await bob(`/console/tasks/${claimed.taskId}`)).text()), 'Alice L. (from her token)');
    assert.equal(counted.reads, 1, 'a row that keeps its requester needs no read');
    assert.equal(JSON.stringify(logged).includes('Alice'), false, 'no log line names her');
  });

  it('a sign-in whose token has neither name nor email records nothing: the card names the subject', async () => {
    const carol = principalFor(ISSUER, 'carol-sub');
    await signIn({ principal: carol, name: 'carol-sub', claims: { groups: [], scopes: [] } });
    const bob = await signIn({ principal: BOB, name: 'bob@example.com', claims: { groups: ['approvers'], scopes: [] } });
    assert.equal(await store.signInNameOf(carol, now), undefined);
    const waiting = await waitingTask({ owner: carol });
    assert.equal(whoAsksOn(await (await bob(`/console/tasks/${waiting.taskId}`)).text()), 'carol-sub');
  });

  it('a session sealed before it carried a name still reads, and the page reads the record for it', async () => {
    const keys = purposeKeys(async () => secret);
    const old = await seal(
      keys,
      'console-session',
      { kind: 'person', principal: ALICE, name: 'alice@example.com', formToken: 'f' },
      SESSION_SECONDS,
    );
    const read = await unseal(keys, 'console-session', old);
    assert.equal(read?.principal, ALICE);
    assert.equal(read?.requester, undefined);
    const waiting = await waitingTask({});
    counted.reads = 0;
    const page = await (
      await app.request(`/console/tasks/${waiting.taskId}`, { headers: { cookie: `__Host-mcp-tasks-console=${old}` } })
    ).text();
    assert.equal(/<dd id="requester">([^<]*)<\/dd>/.exec(page)?.[1], 'Alice Liddell', 'her name recorded at her last sign-in');
    assert.equal(counted.reads, 1);
  });
});
