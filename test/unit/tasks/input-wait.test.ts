/** The transitions of a wait for input with a deadline (pure decisions; both stores apply them). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyOutcome, decideCancel, decideExpireWait, decideReschedule, newTaskRecord } from '../../../shared/tasks/decisions.ts';
import type { TaskRecord } from '../../../shared/tasks/model.ts';
import { isDueToRun, isWaitExpired } from '../../../shared/tasks/predicates.ts';
import { CLOCK_MARGIN_MS, renderedTtlMs } from '../../../shared/tasks/ttl.ts';
import { newTask } from '../../support/factories.ts';

const POLICY = { leaseMs: 10, sweepGraceMs: 5, retentionMs: 1000 };
const ERROR = { code: -32603, message: 'waited too long' };

function waiting(maxInputWaitMs?: number): TaskRecord {
  const task = newTaskRecord(newTask({ taskId: 't', owner: 'o', tool: 'x', ttlMs: 100, pollIntervalMs: 1 }), POLICY);
  return applyOutcome(
    { ...task, lease: { owner: 'w', until: 20 } },
    { status: 'input_required', inputRequests: { k: { method: 'elicitation/create' } } },
    50,
    POLICY.retentionMs,
    maxInputWaitMs,
  );
}

describe('waits for input with a deadline (transitions)', () => {
  it('starting to wait sets sweepAt to the deadline and the row to expire at it plus the retention; it advertises age + retention', () => {
    const task = waiting(500);
    assert.equal(task.sweepAt, 550);
    assert.equal(task.keptUntil, 550 + POLICY.retentionMs);
    assert.equal(task.ttlMs, 50 + POLICY.retentionMs, 'the floor of what is advertised, not the deadline');
    assert.equal(renderedTtlMs(task, 300 + CLOCK_MARGIN_MS, POLICY.retentionMs), 300 + POLICY.retentionMs);
  });

  it('at its end, whichever way, the TTL is the end plus the retention and never shorter than anything advertised', () => {
    const task = waiting(500);
    // Reads until the end's decision, and up to the clock margin after it (its write still in flight).
    const advertised = [60, 300, 549].map((at) => renderedTtlMs(task, at + CLOCK_MARGIN_MS, POLICY.retentionMs));
    const expired = decideExpireWait(task, ERROR, 'm', 560, POLICY).next!;
    const cancelled = decideCancel('t', task, 'o', 400, POLICY).next!;
    for (const [ended, at] of [
      [expired, 560],
      [cancelled, 400],
    ] as const) {
      assert.equal(ended.ttlMs, at + POLICY.retentionMs);
      assert.equal(ended.keptUntil, undefined, 'the wait expiry goes with the wait');
      for (const [index, value] of advertised.entries()) {
        if ([60, 300, 549][index]! <= at) assert.ok(value <= ended.ttlMs, `advertised ${value} before the end`);
      }
    }
  });

  it('without the setting a wait has no deadline and is off the index, as before', () => {
    const task = waiting();
    assert.equal(task.sweepAt, undefined);
    assert.equal(decideExpireWait(task, ERROR, 'm', 10_000, POLICY).result, undefined);
  });

  it('a waiting task is due but never rescheduled; past its deadline it is expired', () => {
    const task = waiting(500);
    assert.equal(isDueToRun(task, 600), false);
    assert.deepEqual(decideReschedule(task, 600, 700), { result: false });
    assert.equal(isWaitExpired(task, 549), false);
    assert.equal(decideExpireWait(task, ERROR, 'm', 549, POLICY).result, undefined);
    const { result, next } = decideExpireWait(task, ERROR, 'm', 560, POLICY);
    assert.equal(result?.status, 'failed');
    assert.deepEqual(result?.status === 'failed' && result.error, ERROR);
    assert.equal(next?.sweepAt, undefined);
    assert.ok(next!.ttlMs >= task.ttlMs);
  });

  it('an operator cancel writes its reason', () => {
    const { result, next } = decideCancel('t', waiting(500), 'o', 60, POLICY, { statusMessage: 'Ended by an operator: x' });
    assert.equal(result.result, 'cancelled');
    assert.equal(next?.statusMessage, 'Ended by an operator: x');
  });
});
