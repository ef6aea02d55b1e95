/** `long_computation` through the tool author's test kit (`#tool-kit`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testTool, textOf } from '#tool-kit';
import { longComputation } from '../../../functions/tools/long-computation.ts';

describe('long_computation', () => {
  it('reports its progress and answers a result that depends only on its arguments, said in structuredContent too', async () => {
    const first = testTool(longComputation, { seconds: 1, label: 'x' });
    const result = await first.result();
    assert.match(textOf(result), /^Computed x in 1 s: [0-9a-f]{16}$/);
    assert.equal(result.structuredContent?.['message'], textOf(result));
    assert.deepEqual(first.progress, ['Computed 1 of 1 s']);
    const again = await testTool(longComputation, { seconds: 1, label: 'x' }).result();
    assert.equal(again.structuredContent?.['result'], result.structuredContent?.['result']);
  });

  it('stops when cancelled', async () => {
    const run = testTool(longComputation, { seconds: 600 });
    const pending = run.once();
    run.cancel();
    assert.deepEqual(await pending, { kind: 'cancelled' });
  });
});
