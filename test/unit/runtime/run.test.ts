import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { runTool } from '../../../shared/runtime/run.ts';
import type { RunOptions } from '../../../shared/runtime/run-types.ts';
import {
  defineTool,
  RetryableError,
  type TaskContext,
  type ToolDefinition,
  ToolError,
  ToolProtocolError,
} from '../../../shared/runtime/tool.ts';

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
    const outcome = await runTool(
      tool(async () => 'hi'),
      {},
      options(),
    );
    assert.deepEqual(outcome, { kind: 'result', result: { content: [{ type: 'text', text: 'hi' }] } });
  });

  it('maps a ToolError to an isError result (item 50)', async () => {
    const outcome = await runTool(
      tool(async () => {
        throw new ToolError('nope');
      }),
      {},
      options(),
    );
    assert.deepEqual(outcome, { kind: 'result', result: { content: [{ type: 'text', text: 'nope' }], isError: true } });
  });

  it('maps a ToolProtocolError to a protocol error (item 51)', async () => {
    const outcome = await runTool(
      tool(async () => {
        throw new ToolProtocolError(-32000, 'upstream down', { retryAfter: 5 });
      }),
      {},
      options(),
    );
    assert.deepEqual(outcome, { kind: 'protocol-error', error: { code: -32000, message: 'upstream down', data: { retryAfter: 5 } } });
  });

  it('rethrows unexpected exceptions for the caller to retry', async () => {
    await assert.rejects(
      runTool(
        tool(async () => {
          throw new TypeError('bug');
        }),
        {},
        options(),
      ),
      TypeError,
    );
  });

  it('reports a handler that stopped because of cancellation as cancelled', async () => {
    const cancel = new AbortController();
    const run = runTool(
      tool((_a, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)))),
      {},
      options({ cancel: cancel.signal }),
    );
    cancel.abort(new Error('cancelled'));
    assert.deepEqual(await run, { kind: 'cancelled' });
  });

  it('suspends on an unanswered elicit with one input request', async () => {
    const outcome = await runTool(
      tool(async (_a, ctx) => {
        await ctx.elicit('confirm', form('Sure?'));
        return 'done';
      }),
      {},
      options(),
    );
    assert.deepEqual(outcome, {
      kind: 'input',
      inputRequests: {
        confirm: {
          method: 'elicitation/create',
          params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } },
        },
      },
    });
  });

  it('collects parallel elicits into several outstanding keys', async () => {
    const outcome = await runTool(
      tool(async (_a, ctx) => {
        await Promise.all([ctx.elicit('a', form('A?')), ctx.elicit('b', form('B?'))]);
        return 'done';
      }),
      {},
      options(),
    );
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
    const done = await runTool(
      tool(handler),
      {},
      options({ answers: { first: { action: 'accept', content: { v: 1 } }, second: { action: 'accept', content: { v: 2 } } } }),
    );
    assert.deepEqual(done, { kind: 'result', result: { content: [{ type: 'text', text: '1+2' }] } });
  });

  it('aborts the handler signal when it suspends, so abandoned work can stop', async () => {
    let signal: AbortSignal | undefined;
    await runTool(
      tool(async (_a, ctx) => {
        signal = ctx.signal;
        await ctx.elicit('k', form('?'));
        return '';
      }),
      {},
      options(),
    );
    assert.equal(signal?.aborted, true);
  });

  it('fails with -32021 when the client did not declare the capability an input request needs (MRTR rule 98)', async () => {
    const outcome = await runTool(
      tool(async (_a, ctx) => {
        await ctx.sample('s', { messages: [] });
        return '';
      }),
      {},
      options({ clientCapabilities: {} }),
    );
    assert.deepEqual(outcome, {
      kind: 'protocol-error',
      error: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { sampling: {} } } },
    });
  });
});

describe('runTool: steps and sleeps', () => {
  function memoryJournal(initial: Record<string, unknown> = {}) {
    const steps = new Map(Object.entries(initial));
    const writes: string[] = [];
    return {
      steps,
      writes,
      journal: {
        lookup: async (name: string) => (steps.has(name) ? { value: steps.get(name) } : undefined),
        record: async (name: string, value: unknown) => {
          writes.push(name);
          if (!steps.has(name)) steps.set(name, value);
          return steps.get(name);
        },
      },
    };
  }

  it('runs a step once and returns its checkpoint on replay', async () => {
    let calls = 0;
    const stepTool = tool(async (_a, ctx) => String(await ctx.step('compute', async () => ++calls)));
    const state = memoryJournal();
    assert.deepEqual(await runTool(stepTool, {}, options({ journal: state.journal })), {
      kind: 'result',
      result: { content: [{ type: 'text', text: '1' }] },
    });
    assert.deepEqual(await runTool(stepTool, {}, options({ journal: state.journal })), {
      kind: 'result',
      result: { content: [{ type: 'text', text: '1' }] },
    });
    assert.equal(calls, 1);
    assert.deepEqual(state.writes, ['compute']);
  });

  it('returns the value stored by whoever recorded the step first', async () => {
    const state = memoryJournal();
    state.journal.record = async (name: string) => {
      state.steps.set(name, 'theirs');
      return 'theirs';
    };
    const outcome = await runTool(
      tool(async (_a, ctx) => String(await ctx.step('s', async () => 'mine'))),
      {},
      options({ journal: state.journal }),
    );
    assert.deepEqual(outcome, { kind: 'result', result: { content: [{ type: 'text', text: 'theirs' }] } });
  });

  it('yields at the next step boundary once the budget is spent, keeping recorded steps', async () => {
    const state = memoryJournal({ a: 1 });
    let ran = 0;
    const outcome = await runTool(
      tool(async (_a, ctx) => {
        await ctx.step('a', async () => ++ran);
        await ctx.step('b', async () => ++ran);
        return 'done';
      }),
      {},
      options({ journal: state.journal, shouldYield: () => true }),
    );
    assert.deepEqual(outcome, { kind: 'continue' });
    assert.equal(ran, 0);
  });

  it('sleeps until the recorded wake-up time, across replays', async () => {
    let clock = 1000;
    const state = memoryJournal();
    const sleeper = tool(async (_a, ctx) => {
      await ctx.sleep(500);
      return 'awake';
    });
    assert.deepEqual(await runTool(sleeper, {}, options({ journal: state.journal, now: () => clock })), { kind: 'sleep', wakeAt: 1500 });
    clock = 1400;
    assert.deepEqual(await runTool(sleeper, {}, options({ journal: state.journal, now: () => clock })), { kind: 'sleep', wakeAt: 1500 });
    clock = 1500;
    assert.deepEqual(await runTool(sleeper, {}, options({ journal: state.journal, now: () => clock })), {
      kind: 'result',
      result: { content: [{ type: 'text', text: 'awake' }] },
    });
  });

  it('waits in-process when there is no journal (an inline call)', async () => {
    const started = Date.now();
    const outcome = await runTool(
      tool(async (_a, ctx) => {
        await ctx.sleep(30);
        return 'ok';
      }),
      {},
      options(),
    );
    assert.equal(outcome.kind, 'result');
    assert.ok(Date.now() - started >= 25);
  });

  it('asks for input before sleeping when both are pending', async () => {
    const state = memoryJournal();
    const outcome = await runTool(
      tool(async (_a, ctx) => {
        await Promise.all([ctx.sleep(10_000), ctx.elicit('k', form('?'))]);
        return '';
      }),
      {},
      options({ journal: state.journal }),
    );
    assert.equal(outcome.kind, 'input');
  });

  it('maps a RetryableError to a retry outcome', async () => {
    const outcome = await runTool(
      tool(async () => {
        throw new RetryableError('busy', { delayMs: 5 });
      }),
      {},
      options(),
    );
    assert.equal(outcome.kind, 'retry');
    assert.equal(outcome.kind === 'retry' && outcome.error.options.delayMs, 5);
  });
});
