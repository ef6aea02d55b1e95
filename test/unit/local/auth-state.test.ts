/**
 * The local authorization server's kept state (`bin/local/auth-state.ts`):
 * `oidc-provider`'s adapter over files, and the keys. A clock the test moves
 * decides expiry.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { FileAdapter, openAuthState } from '../../../bin/local/auth-state.ts';

const roots: string[] = [];
let root: string;
let clock: number;
const now = () => clock;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'auth-state-'));
  roots.push(root);
  clock = 1_800_000_000_000;
});

after(async () => {
  for (const dir of roots) await rm(dir, { recursive: true, force: true });
});

/** Every file under `dir`, with its mode. */
async function modes(dir: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const entry of await readdir(dir, { recursive: true })) found.set(entry, (await stat(join(dir, entry))).mode & 0o777);
  return found;
}

describe('FileAdapter', () => {
  it('finds what it stored, across instances (a restart), until it expires', async () => {
    await new FileAdapter(root, 'RefreshToken', now).upsert('rt-1', { jti: 'rt-1', grantId: 'g1' }, 60);
    const again = new FileAdapter(root, 'RefreshToken', now);
    assert.deepEqual(await again.find('rt-1'), { jti: 'rt-1', grantId: 'g1' });
    assert.equal(await new FileAdapter(root, 'AccessToken', now).find('rt-1'), undefined, 'models are apart');
    clock += 59_999;
    assert.ok(await again.find('rt-1'));
    clock += 1;
    assert.equal(await again.find('rt-1'), undefined);
    assert.deepEqual(await readdir(join(root, 'RefreshToken')), [], 'an expired record met is deleted');
  });

  it('keeps a record without expiresIn until it is destroyed', async () => {
    const clients = new FileAdapter(root, 'Client', now);
    await clients.upsert('client-1', { client_id: 'client-1', redirect_uris: ['http://127.0.0.1/cb'] });
    clock += 10 * 365 * 86_400_000;
    assert.deepEqual(await clients.find('client-1'), { client_id: 'client-1', redirect_uris: ['http://127.0.0.1/cb'] });
    await clients.destroy('client-1');
    assert.equal(await clients.find('client-1'), undefined);
    await clients.destroy('client-1');
  });

  it('upsert replaces the record and its expiry', async () => {
    const sessions = new FileAdapter(root, 'Session', now);
    await sessions.upsert('s', { uid: 'u1', accountId: 'ada' }, 10);
    await sessions.upsert('s', { uid: 'u1', accountId: 'bob' }, 100);
    clock += 50_000;
    assert.deepEqual(await sessions.find('s'), { uid: 'u1', accountId: 'bob' });
  });

  it('consume marks the record with the time in epoch seconds and keeps its expiry', async () => {
    const codes = new FileAdapter(root, 'AuthorizationCode', now);
    await codes.upsert('code', { jti: 'code', grantId: 'g' }, 60);
    clock += 1_500;
    await codes.consume('code');
    assert.deepEqual(await codes.find('code'), { jti: 'code', grantId: 'g', consumed: 1_800_000_001 });
    clock += 58_500;
    assert.equal(await codes.find('code'), undefined);
    await codes.consume('code');
    assert.equal(await codes.find('code'), undefined, 'consuming a gone record makes none');
  });

  it("revokeByGrantId deletes the model's records of that grant only", async () => {
    const tokens = new FileAdapter(root, 'RefreshToken', now);
    await tokens.upsert('a', { grantId: 'g1' }, 60);
    await tokens.upsert('b', { grantId: 'g1' }, 60);
    await tokens.upsert('c', { grantId: 'g2' }, 60);
    const codes = new FileAdapter(root, 'AuthorizationCode', now);
    await codes.upsert('d', { grantId: 'g1' }, 60);
    await tokens.revokeByGrantId('g1');
    assert.equal(await tokens.find('a'), undefined);
    assert.equal(await tokens.find('b'), undefined);
    assert.deepEqual(await tokens.find('c'), { grantId: 'g2' });
    assert.deepEqual(await codes.find('d'), { grantId: 'g1' }, "another model's records are its own adapter's to revoke");
    await new FileAdapter(root, 'Nothing', now).revokeByGrantId('g1');
  });

  it('findByUid and findByUserCode find live records by those fields', async () => {
    const sessions = new FileAdapter(root, 'Session', now);
    await sessions.upsert('s1', { uid: 'u1' }, 10);
    await sessions.upsert('s2', { uid: 'u2' }, 100);
    assert.deepEqual(await sessions.find('s1'), { uid: 'u1' });
    assert.deepEqual(await sessions.findByUid('u2'), { uid: 'u2' });
    assert.equal(await sessions.findByUid('u3'), undefined);
    clock += 10_000;
    assert.equal(await sessions.findByUid('u1'), undefined, 'an expired session is not found');
    const devices = new FileAdapter(root, 'DeviceCode', now);
    assert.equal(await devices.findByUserCode('ABCD-EFGH'), undefined);
    await devices.upsert('d1', { userCode: 'ABCD-EFGH' }, 60);
    assert.deepEqual(await devices.findByUserCode('ABCD-EFGH'), { userCode: 'ABCD-EFGH' });
  });

  it('writes files only the user can read (0600, folders 0700), named by a hash of the id, with no temporary files left', async () => {
    const state = await openAuthState(join(root, 'auth'), now);
    const refreshToken = 'secret-refresh-token-value';
    await state.adapter('RefreshToken').upsert(refreshToken, { jti: refreshToken }, 60);
    await state.adapter('RefreshToken').consume(refreshToken);
    const found = await modes(join(root, 'auth'));
    assert.equal(found.get('RefreshToken'), 0o700);
    const files = [...found].filter(([name]) => name !== 'RefreshToken');
    assert.equal(files.length, 2, [...found.keys()].join(', '));
    for (const [name, mode] of files) {
      assert.equal(mode, 0o600, name);
      assert.ok(!name.includes(refreshToken) && !name.endsWith('.tmp'), name);
    }
    assert.equal((await stat(join(root, 'auth'))).mode & 0o777, 0o700);
  });
});

describe('openAuthState', () => {
  it('makes keys once and gives the same ones at every later open', async () => {
    const dir = join(root, 'auth');
    const first = await openAuthState(dir, now);
    const signingKey = first.keys.jwks.keys[0]!;
    assert.equal(signingKey['kty'], 'EC');
    assert.equal(signingKey['alg'], 'ES256');
    assert.ok(signingKey['d'], 'a private key');
    assert.equal(first.keys.cookieKeys.length, 1);
    assert.equal((await stat(join(dir, 'keys.json'))).mode & 0o777, 0o600);
    assert.deepEqual((await openAuthState(dir, now)).keys, first.keys);
    await rm(dir, { recursive: true });
    assert.notDeepEqual((await openAuthState(dir, now)).keys, first.keys, 'a deleted folder means new keys');
  });

  it('makes a folder that existed the user only, and drops expired records and leftover temporary files', async () => {
    const dir = join(root, 'auth');
    const first = await openAuthState(dir, now);
    await first.adapter('Session').upsert('old', { uid: 'old' }, 10);
    await first.adapter('Session').upsert('new', { uid: 'new' }, 100);
    await writeFile(join(dir, 'Session', '.left.json.0123.tmp'), '{"payload":');
    await chmod(dir, 0o755);
    clock += 50_000;
    await openAuthState(dir, now);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    const left = await readdir(join(dir, 'Session'));
    assert.equal(left.length, 1, left.join(', '));
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'Session', left[0]!), 'utf8')).payload, { uid: 'new' });
  });
});
