/**
 * Server-side sign-out: "Sign out" records the time for the person (one
 * write), and every session of theirs started until then is refused, a
 * copied cookie included, by this function at once and by any other warm
 * function within the cache window; a later sign-in works. Each request
 * reads the record at most once, and a warm function at most once per
 * window. A session sealed before sessions carried their start reads its
 * seal's issue time.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import { seal, unseal } from '../../../shared/console/session.ts';
import type { SignIn } from '../../../shared/console/sign-in.ts';
import { SIGN_OUT_CACHE_MS, signOuts } from '../../../shared/console/sign-outs.ts';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import type { SignOutStore } from '../../../shared/tasks/sign-outs-store.ts';
import { CONTRACT_POLICY, T0 } from '../../contract/kit.ts';

const ORIGIN = 'https://tasks.example';
const ADA = 'jwt|issuer|ada';

let store: InMemoryTaskStore;
let reads: number;
let clock: number;
const secret = randomBytes(32);
const keys = purposeKeys(async () => secret);

/** A sign-in that needs no issuer: the callback signs Ada in. */
const fakeSignIn: SignIn = {
  start: async (next) => ({ url: `${ORIGIN}/issuer`, state: { state: 's', nonce: 'n', verifier: 'v', next } }),
  finish: async () => ({ principal: ADA, name: 'Ada', claims: { groups: [], scopes: [] } }),
};

/** One warm console function over the shared store. */
function consoleFunction() {
  const counted: SignOutStore = {
    recordSignOut: (principal, at, keepUntil) => store.recordSignOut(principal, at, keepUntil),
    signedOutAfter: (principal, now) => {
      reads += 1;
      return store.signedOutAfter(principal, now);
    },
  };
  return createConsoleApp({
    actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => clock }),
    mode: { kind: 'sign-in', issuer: `${ORIGIN}/issuer`, clientId: 'console' },
    links: new DeploymentLinks(`${ORIGIN}/mcp`),
    keys,
    signOutRecords: counted,
    signInNameRecords: store,
    config: { retentionMs: CONTRACT_POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 3_600_000 },
    approvers: { groups: [], scopes: [] },
    localPrincipal: 'local',
    signIn: fakeSignIn,
    log: () => {},
    now: () => clock,
  });
}

const cookieOf = (response: Response, name: string) =>
  (response.headers.getSetCookie().find((line) => line.startsWith(`__Host-${name}=`)) ?? '').split(';')[0]!;

async function signedIn(app: ReturnType<typeof consoleFunction>): Promise<string> {
  const started = await app.request('/console/sign-in?next=/console');
  const state = cookieOf(started, 'mcp-tasks-sign-in');
  const back = await app.request('/console/callback?code=c&state=s', { headers: { cookie: state } });
  assert.equal(back.status, 303);
  return cookieOf(back, 'mcp-tasks-console');
}

const list = (app: ReturnType<typeof consoleFunction>, cookie: string) => app.request('/console', { headers: { cookie } });

beforeEach(() => {
  store = new InMemoryTaskStore(CONTRACT_POLICY);
  reads = 0;
  clock = T0;
});

describe('server-side sign-out', () => {
  it('refuses a copied cookie after sign-out, here at once and on another warm function within the window', async () => {
    const here = consoleFunction();
    const there = consoleFunction();
    const cookie = await signedIn(here);
    clock += 1000;
    assert.equal((await list(here, cookie)).status, 200);
    assert.equal((await list(there, cookie)).status, 200, 'the other function has read (and cached) the record');

    const page = await (await list(here, cookie)).text();
    const token = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? assert.fail('a form token');
    const out = await here.request('/console/sign-out', {
      method: 'POST',
      headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    assert.equal(out.status, 200);
    assert.match(await out.text(), /every device/);

    const copied = await list(here, cookie);
    assert.equal(copied.status, 302, 'the copy of the cookie is refused where the sign-out was recorded');
    assert.match(copied.headers.get('location') ?? '', /^\/console\/sign-in/);
    clock += SIGN_OUT_CACHE_MS;
    assert.equal((await list(there, cookie)).status, 302, 'and everywhere once the window has passed');

    clock += 1;
    const again = await signedIn(there);
    assert.equal((await list(here, again)).status, 200, 'a sign-in after the sign-out works');
  });

  it('reads the record at most once a request, and at most once a window per warm function', async () => {
    const app = consoleFunction();
    const cookie = await signedIn(app);
    const before = reads;
    await list(app, cookie);
    assert.equal(reads - before, 1);
    for (let i = 0; i < 5; i += 1) await list(app, cookie);
    assert.equal(reads - before, 1, 'cached within the window');
    clock += SIGN_OUT_CACHE_MS;
    await list(app, cookie);
    assert.equal(reads - before, 2);
  });

  it('a session sealed before sessions carried their start is ended by a later sign-out', async () => {
    const old = await seal(keys, 'console-session', { kind: 'person', principal: ADA, formToken: 'f' }, 3600);
    const read = await unseal(keys, 'console-session', old);
    assert.equal(read?.sid, undefined);
    assert.ok(read?.startedAt !== undefined && Math.abs(read.startedAt - Date.now()) < 60_000, 'its seal’s issue time');
    const checker = signOuts(store, () => Date.now());
    assert.equal(await checker.ended(read), false);
    await checker.signOut(ADA);
    assert.equal(await checker.ended(read), true);
  });
});
