import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SETTINGS, ENV, loadConfig } from '../../shared/config.ts';

const base = { [ENV.tableName]: 'tasks', [ENV.queueUrl]: 'https://sqs.example/q' };

describe('loadConfig', () => {
  it('reads required values and applies defaults', () => {
    const config = loadConfig(base);
    assert.equal(config.tableName, 'tasks');
    assert.equal(config.queueUrl, 'https://sqs.example/q');
    assert.equal(config.localPrincipal, 'local');
    assert.equal(config.toolset, 'product');
    assert.equal(config.taskTtlMs, DEFAULT_SETTINGS.taskTtlMs);
  });

  it('fails loudly at start when a required value is missing', () => {
    assert.throws(() => loadConfig({ [ENV.queueUrl]: 'q' }), /TASKS_TABLE_NAME/);
    assert.throws(() => loadConfig({ [ENV.tableName]: 't' }), /TASKS_QUEUE_URL/);
  });

  for (const value of ['0', '-5', '1.5', 'soon']) {
    it(`rejects ${JSON.stringify(value)} for a duration`, () => {
      assert.throws(() => loadConfig({ ...base, [ENV.leaseMs]: value }), /TASKS_LEASE_MS must be a positive integer/);
    });
  }

  it('rejects an unknown toolset', () => {
    assert.throws(() => loadConfig({ ...base, [ENV.toolset]: 'everything' }), /TASKS_TOOLSET/);
  });
});
