import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTaskMessage } from '../../../shared/queue/queue.ts';

describe('parseTaskMessage', () => {
  it('reads a task message and keeps only its fields', () => {
    assert.deepEqual(parseTaskMessage('{"taskId":"t1","reason":"wake","extra":1}'), { taskId: 't1', reason: 'wake' });
  });

  for (const [label, body] of [
    ['not JSON', '{"taskId":'],
    ['JSON null', 'null'],
    ['an array', '["t1","start"]'],
    ['no task id', '{"reason":"start"}'],
    ['a numeric task id', '{"taskId":7,"reason":"start"}'],
    ['an unknown reason', '{"taskId":"t1","reason":"reboot"}'],
  ] as const) {
    it(`drops ${label}`, () => {
      assert.equal(parseTaskMessage(body), undefined);
    });
  }
});
