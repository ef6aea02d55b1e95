/** Keys per purpose (`shared/keys.ts`): derived, distinct, stable. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEY_PURPOSES, mac, purposeKey, purposeKeys, sameMac } from '../../shared/keys.ts';

const secret = new Uint8Array(32).fill(7);

describe('purpose keys', () => {
  it('are 32 bytes, the same for the same secret and purpose, and different for every purpose', () => {
    const keys = KEY_PURPOSES.map((purpose) => Buffer.from(purposeKey(secret, purpose)).toString('hex'));
    assert.equal(new Set(keys).size, KEY_PURPOSES.length);
    for (const purpose of KEY_PURPOSES) {
      assert.equal(purposeKey(secret, purpose).length, 32);
      assert.deepEqual(purposeKey(secret, purpose), purposeKey(new Uint8Array(32).fill(7), purpose));
    }
    assert.notDeepEqual(purposeKey(secret, 'callback-token'), purposeKey(new Uint8Array(32).fill(8), 'callback-token'));
  });

  it('read the secret once and try again after a failed read', async () => {
    let reads = 0;
    const keys = purposeKeys(async () => {
      reads += 1;
      if (reads === 1) throw new Error('SSM unavailable');
      return secret;
    });
    await assert.rejects(keys('callback-token'), /SSM unavailable/);
    assert.deepEqual(await keys('callback-token'), purposeKey(secret, 'callback-token'));
    await keys('callback-token');
    assert.equal(reads, 2);
  });
});

describe('mac', () => {
  const key = purposeKey(secret, 'callback-token');
  it('binds the parts and their boundaries', () => {
    assert.notEqual(mac(key, ['ab', 'c']), mac(key, ['a', 'bc']));
    assert.equal(mac(key, ['a', 'b']), mac(key, ['a', 'b']));
    assert.notEqual(mac(key, ['a']), mac(purposeKey(secret, 'console-session'), ['a']));
  });

  it('compares in constant time, refusing any other value', () => {
    const value = mac(key, ['task', 'cb']);
    assert.equal(sameMac(value, value), true);
    assert.equal(sameMac(`${value.slice(0, -1)}A`, value) && !value.endsWith('A'), false);
    assert.equal(sameMac('', value), false);
  });
});
