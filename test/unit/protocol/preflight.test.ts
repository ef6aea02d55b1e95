import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestsDeeperThan } from '../../../shared/json-depth.ts';
import { inputResponsesProblem } from '../../../shared/protocol/preflight.ts';
import { checkBudget, jsonBytes, LimitExceededError, MAX_JSON_DEPTH } from '../../../shared/tasks/limits.ts';

describe('nestsDeeperThan', () => {
  const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`;

  it('counts arrays and objects alike, up to the limit inclusive', () => {
    assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH)), false);
    assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1)), true);
    const objects = `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`;
    assert.equal(nestsDeeperThan(objects), true);
    assert.equal(nestsDeeperThan(objects, MAX_JSON_DEPTH + 1), false);
  });

  it('measures depth, not the number of brackets', () => {
    const wide = `[${Array.from({ length: 1000 }, () => '[[]]').join(',')}]`;
    assert.equal(nestsDeeperThan(wide, 3), false);
    assert.equal(nestsDeeperThan(wide, 2), true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    assert.equal(nestsDeeperThan(JSON.stringify({ s: '['.repeat(1000) }), 1), false);
    assert.equal(nestsDeeperThan(JSON.stringify({ s: `\\"${'{'.repeat(100)}\\"` }), 1), false);
    assert.equal(nestsDeeperThan(`{"s":"\\\\",${'['.repeat(5)}`, 5), true);
  });

  it('scans 100,000 nested arrays without a stack', () => {
    assert.equal(nestsDeeperThan(nested(100_000)), true);
  });
});

describe('inputResponsesProblem', () => {
  it('accepts an absent value and an object of objects', () => {
    assert.equal(inputResponsesProblem('tasks/update', { taskId: 't' }), undefined);
    assert.equal(inputResponsesProblem('tasks/update', undefined), undefined);
    assert.equal(inputResponsesProblem('tasks/update', { inputResponses: {} }), undefined);
    assert.equal(inputResponsesProblem('tools/call', { inputResponses: { a: { action: 'accept' }, b: { roots: [] } } }), undefined);
  });

  it('refuses a non-object and a non-object entry, naming the method and the key', () => {
    for (const bad of ['s', ['a'], 5, null, true]) {
      assert.match(
        inputResponsesProblem('tasks/update', { inputResponses: bad }) ?? '',
        /^tasks\/update: inputResponses must be an object/,
      );
    }
    for (const bad of ['yes', ['a'], 5, null]) {
      assert.match(
        inputResponsesProblem('tools/call', { inputResponses: { ok: {}, confirm: bad } }) ?? '',
        /inputResponses\["confirm"\] must be an object/,
      );
    }
  });
});

describe('jsonBytes never throws', () => {
  it('measures a value too deep to serialise, or cyclic, as over every budget', () => {
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(jsonBytes(deep), Number.POSITIVE_INFINITY);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.equal(jsonBytes(cyclic), Number.POSITIVE_INFINITY);
    assert.throws(
      () => checkBudget('clientCapabilities', deep, 16 * 1024),
      (error: unknown) => error instanceof LimitExceededError && /cannot be measured/.test(error.message),
    );
    assert.equal(jsonBytes({ a: 'é' }), 10);
  });
});
