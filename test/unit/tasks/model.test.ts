import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canTransition, isExpired, isTerminal, type TaskStatus, TRANSITIONS } from '../../../shared/tasks/model.ts';
import { CLOCK_MARGIN_MS, expiresAtSeconds, extendedTtl, renderedTtlMs } from '../../../shared/tasks/ttl.ts';

const ALL: TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

describe('task state machine (spec §2)', () => {
  const allowed: Array<[TaskStatus, TaskStatus]> = [
    ['working', 'input_required'],
    ['working', 'completed'],
    ['working', 'failed'],
    ['working', 'cancelled'],
    ['input_required', 'working'],
    ['input_required', 'completed'],
    ['input_required', 'failed'],
    ['input_required', 'cancelled'],
  ];

  for (const from of ALL) {
    for (const to of ALL) {
      const expected = allowed.some(([a, b]) => a === from && b === to);
      it(`${from} → ${to} is ${expected ? 'allowed' : 'refused'}`, () => {
        assert.equal(canTransition(from, to), expected);
      });
    }
  }

  it('terminal statuses have no way out and are exactly completed, failed, cancelled', () => {
    assert.deepEqual(ALL.filter(isTerminal), ['completed', 'failed', 'cancelled']);
    for (const status of ALL.filter(isTerminal)) assert.deepEqual(TRANSITIONS[status], []);
  });
});

describe('TTL', () => {
  it('a terminal task expires exactly at createdAt + ttlMs', () => {
    assert.equal(isExpired({ status: 'completed', createdAt: 1000, ttlMs: 500 }, 1499), false);
    assert.equal(isExpired({ status: 'completed', createdAt: 1000, ttlMs: 500 }, 1500), true);
  });

  it('a task still working or waiting for input never expires', () => {
    assert.equal(isExpired({ status: 'working', createdAt: 0, ttlMs: 1 }, 10 ** 12), false);
    assert.equal(isExpired({ status: 'input_required', createdAt: 0, ttlMs: 1 }, 10 ** 12), false);
  });

  it('advertises a TTL that outlives a non-terminal task, and keeps a terminal one as it is', () => {
    assert.equal(renderedTtlMs({ status: 'working', createdAt: 0, ttlMs: 1000 }, 8000 + CLOCK_MARGIN_MS, 60_000), 68_000);
    assert.equal(
      renderedTtlMs({ status: 'working', createdAt: 0, ttlMs: 90_000 }, 8000 + CLOCK_MARGIN_MS, 60_000),
      90_000,
      'never below the floor',
    );
    assert.equal(renderedTtlMs({ status: 'completed', createdAt: 0, ttlMs: 1000 }, 5000, 60_000), 1000);
  });

  it('extends to keep the task readable for the window, never shortens (item 8)', () => {
    assert.equal(extendedTtl({ createdAt: 0, ttlMs: 10_000 }, 1_000, 60_000), 61_000);
    assert.equal(extendedTtl({ createdAt: 0, ttlMs: 100_000 }, 1_000, 60_000), 100_000);
  });

  it('rounds the DynamoDB TTL attribute up, so a row is never deleted early', () => {
    assert.equal(expiresAtSeconds(1_000, 1), 2);
    assert.equal(expiresAtSeconds(1_000, 1_000), 2);
  });
});
