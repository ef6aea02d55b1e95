import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeAnswers, encodeAnswers } from '../../../shared/protocol/request-state.ts';

describe('inline requestState', () => {
  it('round-trips recorded answers', () => {
    const answers = { name: { action: 'accept', content: { name: 'Ada' } } };
    assert.deepEqual(decodeAnswers(encodeAnswers(answers)), answers);
  });

  for (const [label, state] of [
    ['absent', undefined],
    ['not base64 JSON', '%%%'],
    ['a JSON array', Buffer.from('[1]').toString('base64url')],
    ['JSON null', Buffer.from('null').toString('base64url')],
  ] as const) {
    it(`treats ${label} state as no answers`, () => {
      assert.deepEqual(decodeAnswers(state), {});
    });
  }
});
