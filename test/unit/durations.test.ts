/** The one duration formatter (`shared/durations.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration } from '../../shared/durations.ts';

describe('formatDuration', () => {
  it('exact: the largest unit that divides the duration, else milliseconds', () => {
    for (const [ms, text] of [
      [7 * 86_400_000, '7 days'],
      [86_400_000, '1 day'],
      [3_600_000, '1 hour'],
      [90 * 60_000, '90 minutes'],
      [20_000, '20 s'],
      [1000, '1 s'],
      [1500, '1500 ms'],
      [0, '0 ms'],
    ] as const) {
      assert.equal(formatDuration(ms), text, String(ms));
    }
  });

  it('approximate: the two largest units, rounded down', () => {
    for (const [ms, text] of [
      [3 * 86_400_000 + 4 * 3_600_000 + 5 * 60_000, '3d 4h'],
      [5 * 60_000 + 10_500, '5m 10s'],
      [800, '800ms'],
      [-61_000, '-1m 1s'],
    ] as const) {
      assert.equal(formatDuration(ms, { approximate: true }), text, String(ms));
    }
  });
});
