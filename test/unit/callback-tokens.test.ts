import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { sealCallback, unsealCallback } from '../../shared/callback-tokens.ts';
import { type KeyPurpose, MIN_SECRET_BYTES, purposeKey } from '../../shared/keys.ts';
import { REQUEST_STATE_KEY_BYTES } from '../../shared/protocol/request-state.ts';

const secret = randomBytes(32);
const keys = async (purpose: KeyPurpose) => purposeKey(secret, purpose);
const grant = { taskId: 'task-1', callbackId: 'cb_1', expiresAt: 1_700_000_000_000 };

describe('callback tokens', () => {
  it("the secret's minimum is the requestState codec's", () => {
    assert.equal(MIN_SECRET_BYTES, REQUEST_STATE_KEY_BYTES);
  });

  it('unseal what was sealed; each sealing differs, and the token shows neither id', async () => {
    const a = await sealCallback(keys, grant);
    const b = await sealCallback(keys, grant);
    assert.notEqual(a, b);
    assert.match(a, /^[A-Za-z0-9_-]+$/);
    assert.doesNotMatch(Buffer.from(a, 'base64url').toString('latin1'), /task-1|cb_1/);
    assert.deepEqual(await unsealCallback(keys, a), grant);
    assert.deepEqual(await unsealCallback(keys, b), grant);
  });

  it('refuses an altered token, another secret, another purpose and junk', async () => {
    const token = await sealCallback(keys, grant);
    const bytes = Buffer.from(token, 'base64url');
    bytes[20] = (bytes[20] ?? 0) ^ 1;
    assert.equal(await unsealCallback(keys, bytes.toString('base64url')), undefined);
    const other = randomBytes(32);
    assert.equal(await unsealCallback(async (purpose) => purposeKey(other, purpose), token), undefined);
    // Sealed under the console's key: not a callback token.
    const foreign = await sealCallback(async () => purposeKey(secret, 'console-session'), grant);
    assert.equal(await unsealCallback(keys, foreign), undefined);
    for (const junk of ['', 'abc', 'a.b.c', '%2e%2e', 'A'.repeat(5000)]) assert.equal(await unsealCallback(keys, junk), undefined);
  });

  it("a token has one spelling: the same bytes spelled with padding or a last character's unused bits set are refused", async () => {
    // A sealing whose length leaves unused bits in the last character (a length of bytes not a multiple of 3).
    let token = '';
    for (let n = 0; Buffer.from(token, 'base64url').length % 3 === 0; n++)
      token = await sealCallback(keys, { ...grant, taskId: `task-${'1'.repeat(n)}` });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = `${token.slice(0, -1)}${alphabet[alphabet.indexOf(token.at(-1)!) ^ 1]}`;
    assert.notEqual(sibling, token);
    assert.deepEqual(Buffer.from(sibling, 'base64url'), Buffer.from(token, 'base64url'), 'the same bytes');
    assert.ok(await unsealCallback(keys, token));
    assert.equal(await unsealCallback(keys, sibling), undefined);
    const padding = '='.repeat((4 - (token.length % 4)) % 4);
    assert.equal(await unsealCallback(keys, `${token}${padding}`), undefined);
    assert.equal(await unsealCallback(keys, Buffer.from(token, 'base64url').toString('base64')), undefined, 'base64, not base64url');
  });
});
