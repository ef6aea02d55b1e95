import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ProtocolError } from '@modelcontextprotocol/server';
import { requestStateSealer } from '../../../shared/protocol/request-state.ts';

const key = randomBytes(32);
const sealer = requestStateSealer(async () => key);
const binding = { principal: 'alice', tool: 'confirm_delete' };

/** Asserts `promise` is refused with -32602 and a message that quotes nothing of the state. */
async function refused(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ProtocolError);
    assert.equal(error.code, -32602);
    assert.equal(error.message, 'Invalid or expired requestState');
    return true;
  });
}

// Sealed requestState (MRTR: tampered state MUST be rejected).
describe('inline requestState', () => {
  it('round-trips recorded answers', async () => {
    const answers = { name: { action: 'accept', content: { name: 'Ada' } } };
    const state = await sealer.seal({ answers, issuedKeys: ['name'] }, binding);
    assert.deepEqual(await sealer.open(state, binding), { answers, issuedKeys: ['name'] });
  });

  it('treats absent state as no answers', async () => {
    assert.deepEqual(await sealer.open(undefined, binding), { answers: {}, issuedKeys: [] });
  });

  for (const [label, state] of [
    ['not base64 JSON', '%%%'],
    ['a JSON array', Buffer.from('[1]').toString('base64url')],
    ['JSON null', Buffer.from('null').toString('base64url')],
    ['the old unsealed answers', Buffer.from(JSON.stringify({ confirm: { action: 'accept' } })).toString('base64url')],
    ['a non-string', 42],
  ] as const) {
    it(`refuses ${label} as state`, async () => {
      await refused(sealer.open(state, binding));
    });
  }

  it('refuses a tampered state, and one sealed for another principal, another tool or with another key', async () => {
    const state = await sealer.seal({ answers: {}, issuedKeys: ['confirm'] }, binding);
    await refused(sealer.open(`${state}-TAMPERED`, binding));
    const [prefix, body, mac] = state.split('.');
    const forgedBody = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(body!, 'base64url').toString()),
        p: { answers: { confirm: { action: 'accept' } }, issuedKeys: ['confirm'] },
      }),
    ).toString('base64url');
    await refused(sealer.open(`${prefix}.${forgedBody}.${mac}`, binding));
    await refused(sealer.open(state, { ...binding, principal: 'mallory' }));
    await refused(sealer.open(state, { ...binding, tool: 'another_tool' }));
    await refused(requestStateSealer(async () => randomBytes(32)).open(state, binding));
  });

  it('refuses a state over its size limit without verifying it', async () => {
    await assert.rejects(sealer.open(`v1.${'A'.repeat(200 * 1024)}.x`, binding), (error: unknown) => {
      assert.ok(
        error instanceof ProtocolError && error.code === -32602 && /requestState is over its limit of 196608 bytes/.test(error.message),
      );
      return true;
    });
  });

  it('refuses a key shorter than 32 bytes', async () => {
    await assert.rejects(requestStateSealer(async () => randomBytes(16)).seal({ answers: {}, issuedKeys: [] }, binding), RangeError);
  });
});
