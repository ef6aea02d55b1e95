/** The moments' own rules: the phases they start, a lost run, folding past the budget, and the row's string form. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEPT_MOMENTS, MAX_MOMENTS } from '../../../shared/tasks/limits.ts';
import { decodeMoment, encodeMoment, spansOf, withMoment } from '../../../shared/tasks/moments.ts';
import type { Moment } from '../../../shared/tasks/phases.ts';

const T0 = 1_767_225_600_000;

describe('moments', () => {
  it('each starts the phase that follows it; a claim after a claim is a lost run, recovered', () => {
    const moments: Moment[] = [
      { kind: 'claim', at: T0 + 10 },
      { kind: 'claim', at: T0 + 100 },
      { kind: 'ask', at: T0 + 110, note: 'client' },
      { kind: 'resume', at: T0 + 200, note: 'answer' },
      { kind: 'claim', at: T0 + 210 },
      { kind: 'sleep', at: T0 + 220 },
      { kind: 'claim', at: T0 + 500 },
      { kind: 'end', at: T0 + 510, note: 'failed' },
    ];
    assert.deepEqual(
      spansOf(T0, moments, T0 + 9_999).map((span) => [span.phase, span.to - span.from]),
      [
        ['queued', 10],
        ['recovered', 90],
        ['run', 10],
        ['wait:client', 90],
        ['queued', 10],
        ['run', 10],
        ['wait:sleep', 280],
        ['run', 10],
      ],
    );
  });

  it('past MAX_MOMENTS the oldest fold into one summary that keeps every phase’s time', () => {
    let task: { createdAt: number; moments: Moment[] } = { createdAt: T0, moments: [] };
    for (let n = 0; n < MAX_MOMENTS; n += 1) {
      task = { ...task, moments: withMoment(task, { kind: 'claim', at: T0 + n * 100 + 10 }) };
      task = { ...task, moments: withMoment(task, { kind: 'continue', at: T0 + n * 100 + 40 }) };
    }
    assert.ok(task.moments.length <= MAX_MOMENTS && task.moments.length > KEPT_MOMENTS);
    const [earlier, ...kept] = task.moments;
    assert.equal(earlier?.kind, 'earlier');
    const until = T0 + MAX_MOMENTS * 100;
    const spans = spansOf(T0, task.moments, until);
    const sum = (phase: 'run' | 'queued') =>
      (earlier?.totals?.[phase] ?? 0) +
      spans.filter((span) => span.phase === phase).reduce((total, span) => total + span.to - span.from, 0);
    assert.equal(sum('run'), 30 * MAX_MOMENTS);
    assert.equal(sum('queued'), 70 * MAX_MOMENTS);
    assert.equal((earlier?.runs ?? 0) + kept.filter((moment) => moment.kind === 'claim').length, MAX_MOMENTS);
  });

  it('round-trip through the row’s short strings; a kind this release does not know reads as nothing', () => {
    const moments: Moment[] = [
      { kind: 'claim', at: T0 },
      { kind: 'end', at: T0 + 5, note: 'completed' },
      { kind: 'earlier', at: T0, until: T0 + 99, runs: 3, folded: 40, totals: { run: 60, 'wait:person': 39 } },
    ];
    for (const moment of moments) assert.deepEqual(decodeMoment(encodeMoment(moment)), moment);
    assert.ok(encodeMoment(moments[0]!).length <= 10, encodeMoment(moments[0]!));
    assert.equal(decodeMoment('Zmk2x9q1l'), undefined);
    assert.equal(decodeMoment(''), undefined);
  });
});
