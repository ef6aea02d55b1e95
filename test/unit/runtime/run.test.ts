import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { runTool, type RunOptions } from '../../../shared/runtime/run.ts';
import { defineTool, ToolError, ToolProtocolError, type TaskContext, type ToolDefinition } from '../../../shared/runtime/tool.ts';

function options(overrides: Partial<RunOptions> = {}): RunOptions {
  return {
    taskId: 't-1',
    clientCapabilities: { elicitation: {}, sampling: {} },
    answers: {},
    cancel: new AbortController().signal,
    progress: async () => {},
    ...overrides,
  };
}

function tool(handler: ToolDefinition['handler']): ToolDefinition {
  return defineTool({ name: 't', description: 't', inputSchema: z.object({}), execution: 'task', handler });
}

const form = (message: string) => ({ message, requestedSchema: { type: 'object', properties: {} } });

describe('runTool', () => {
  it('wraps a returned string as text content', async () => {
    const outcome = await runTool(tool(async () => 'hi'), {}, options());
    assert.deepEqual(outcome, { kind: 'result', result: { content: [{ type: 'text', text: 'hi' }] } });
  });

  it('maps a ToolError to an isError result (item 50)', async () => {
    const outcome = await runTool(tool(async () => { throw new ToolError('nope'); }), {}, options());
    assert.deepEqual(outcome, { kind: 'result', result: { content: [{ type: 'text', text: 'nope' }], isError: true } });
  });

  it('maps a ToolProtocolError to a protocol error (item 51)', async () => {
    const outcome = await runTool(tool(async () => { throw new ToolProtocolError(-32000, 'upstream down', { retryAfter: 5 }); }), {}, options());
    assert.deepEqual(outcome, { kind: 'protocol-error', error: { code: -32000, message: 'upstream down', data: { retryAfter: 5 } } });
  });

  it('rethrows unexpected exceptions for the caller to retry', async () => {
    await assert.rejects(runTool(tool(async () => { throw new TypeError('bug'); }), {}, options()), TypeError);
  });

  it('reports a handler that stopped because of cancellation as cancelled', async () => {
    const cancel = new AbortController();
    const run = runTool(tool((_a, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)))), {}, options({ cancel: cancel.signal }));
    cancel.abort(new Error('cancelled'));
    assert.deepEqual(await run, { kind: 'cancelled' });
  });

  it('suspends on an unanswered elicit with one input request', async () => {
    const outcome = await runTool(tool(async (_a, ctx) => { await ctx.elicit('confirm', form('Sure?')); return 'done'; }), {}, options());
    assert.deepEqual(outcome, {
      kind: 'input',
      inputRequests: { confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } } } },
    });
  });

  it('collects parallel elicits into several outstanding keys', async () => {
    const outcome = await runTool(tool(async (_a, ctx) => { await Promise.all([ctx.elicit('a', form('A?')), ctx.elicit('b', form('B?'))]); return 'done'; }), {}, options());
    assert.equal(outcome.kind, 'input');
    assert.deepEqual(Object.keys(outcome.kind === 'input' ? outcome.inputRequests : {}).sort(), ['a', 'b']);
  });

  it('replays recorded answers and asks only for the next key', async () => {
    const handler = async (_a: unknown, ctx: TaskContext) => {
      const first = await ctx.elicit('first', form('1?'));
      const second = await ctx.elicit('second', form('2?'));
      return `${String(first.content?.['v'])}+${String(second.content?.['v'])}`;
    };
    const partly = await runTool(tool(handler), {}, options({ answers: { first: { action: 'accept', content: { v: 1 } } } }));
    assert.deepEqual(partly.kind === 'input' && Object.keys(partly.inputRequests), ['second']);
    const done = await runTool(tool(handler), {}, options({ answers: { first: { action: 'accept', content: { v: 1 } }, second: { action: 'accept', content: { v: 2 } } } }));
    assert.deepEqual(done, { kind: 'result', result: { content: [{ type: 'text', text: '1+2' }] } });
  });

  it('aborts the handler signal when it suspends, so abandoned work can stop', async () => {
    let signal: AbortSignal | undefined;
    await runTool(tool(async (_a, ctx) => { signal = ctx.signal; await ctx.elicit('k', form('?')); return ''; }), {}, options());
    assert.equal(signal?.aborted, true);
  });

  it('fails with -32021 when the client did not declare the capability an input request needs (MRTR rule 98)', async () => {
    const outcome = await runTool(tool(async (_a, ctx) => { await ctx.sample('s', { messages: [] }); return ''; }), {}, options({ clientCapabilities: {} }));
    assert.deepEqual(outcome, { kind: 'protocol-error', error: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { sampling: {} } } } });
  });
});
