/** `batch_process` through the tool author's test kit (`#tool-kit`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testTool, textOf } from '#tool-kit';
import { batchProcess } from '../../../functions/tools/batch-process.ts';

describe('batch_process', () => {
  it('processes every item, reporting progress item by item', async () => {
    const run = testTool(batchProcess, { items: ['a', 'b', 'c'], delayMs: 0 });
    const result = await run.result();
    assert.equal(textOf(result), 'Processed 3 items');
    assert.deepEqual(run.progress, ['Processed 1 of 3 items', 'Processed 2 of 3 items', 'Processed 3 of 3 items']);
    const processed = (result.structuredContent as { processed: Array<{ item: number; fingerprint: string }> }).processed;
    assert.deepEqual(
      processed.map((entry) => entry.item),
      [0, 1, 2],
    );
    assert.match(processed[0]!.fingerprint, /^[0-9a-f]{16}$/);
    assert.notEqual(processed[0]!.fingerprint, processed[1]!.fingerprint);
  });

  it('checkpoints each item: a run handed over mid-batch resumes at the first unfinished item', async () => {
    const run = testTool(batchProcess, { items: ['a', 'b', 'c', 'd', 'e'], delayMs: 0 }, { stepsPerRun: 2 });
    assert.deepEqual(await run.once(), { kind: 'continue' });
    assert.deepEqual([...run.checkpoints.keys()], ['item#0', 'item#1']);
    const first = (run.checkpoints.get('item#0') as { fingerprint: string }).fingerprint;
    const result = await run.result();
    assert.deepEqual([...run.checkpoints.keys()], ['item#0', 'item#1', 'item#2', 'item#3', 'item#4'], 'each item recorded once');
    const processed = (result.structuredContent as { processed: Array<{ fingerprint: string }> }).processed;
    assert.equal(processed[0]?.fingerprint, first, 'the finished item was replayed, not redone');
    const counts = run.progress.map((message) => Number(/^Processed (\d+) of 5 items$/.exec(message)?.[1]));
    assert.deepEqual(
      [...counts].sort((a, b) => a - b),
      counts,
      'progress never goes backwards on a replay',
    );
    assert.equal(counts.at(-1), 5);
  });

  it('stops when cancelled', async () => {
    const run = testTool(batchProcess, { items: ['a', 'b'], delayMs: 60_000 });
    const pending = run.once();
    run.cancel();
    assert.deepEqual(await pending, { kind: 'cancelled' });
    assert.deepEqual(run.progress, []);
  });
});
