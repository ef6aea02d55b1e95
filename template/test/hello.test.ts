import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accept, decline, testTool, textOf } from 'mcp-tasks-serverless/testing';
import { hello } from '../src/tools/hello.ts';

describe('hello', () => {
  it('asks how formal to be, then greets accordingly', async () => {
    const run = testTool(hello, { name: 'Ada' }, { answers: { style: accept({ formal: true }) } });
    assert.equal(textOf(await run.result()), 'Good day, Ada.');
    assert.equal(run.checkpoints.get('compose'), 'Good day, Ada.');
  });

  it('waits for the answer before it greets', async () => {
    const run = testTool(hello, { name: 'Ada' });
    const first = await run.once();
    assert.equal(first.kind, 'input');
    assert.deepEqual(Object.keys(run.inputRequests), ['style']);
    run.answer('style', accept({ formal: false }));
    assert.equal(textOf(await run.result()), 'Hi Ada!');
  });

  it('greets nobody when the question is declined', async () => {
    const run = testTool(hello, { name: 'Ada' }, { answers: { style: decline() } });
    assert.equal(textOf(await run.result()), 'No greeting for Ada.');
  });
});
