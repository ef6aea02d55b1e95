import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { accept, DEFAULT_START, decline, TestClock, testTool, textOf } from '../../../kit/kit.ts';
import { defineTool, RetryableError, ToolError, ToolProtocolError } from '../../../shared/runtime/tool.ts';

const form = (message: string) => ({ message, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } });

/** Asks two questions together, then one more, and reports the answers. */
const questions = defineTool({
  name: 'questions',
  description: 'Asks questions.',
  inputSchema: z.object({ topic: z.string(), loud: z.boolean().default(false) }),
  execution: 'task',
  handler: async ({ topic, loud }, ctx) => {
    const [a, b] = await Promise.all([ctx.elicit('a', form(`A about ${topic}?`)), ctx.elicit('b', form('B?'))]);
    const c = await ctx.elicit('c', form('C?'));
    const text = [a, b, c].map((answer) => answer.action).join(',');
    return loud ? text.toUpperCase() : text;
  },
});

/** A step, a durable sleep of `ms`, another step; counts how often each step body ran. */
function sleeper(ran: { before: number; after: number }) {
  return defineTool({
    name: 'sleeper',
    description: 'Sleeps between steps.',
    inputSchema: z.object({ ms: z.number() }),
    execution: 'task',
    handler: async ({ ms }, ctx) => {
      await ctx.step('before', async () => ++ran.before);
      await ctx.progress('slept? not yet');
      await ctx.sleep(ms);
      await ctx.step('after', async () => ++ran.after);
      return 'awake';
    },
  });
}

describe('testTool', () => {
  it('validates and completes the arguments with the tool schema', async () => {
    assert.throws(() => testTool(questions, { topic: 42 }), z.ZodError);
    const run = testTool(questions, { topic: 'x' }, { answers: { a: accept(), b: decline(), c: accept() } });
    assert.equal(textOf(await run.result()), 'accept,decline,accept', 'loud defaulted to false');
  });

  it('once() stops at the first unanswered questions, asked together, and replays answers given later', async () => {
    const run = testTool(questions, { topic: 'cats' });
    const first = await run.once();
    assert.equal(first.kind, 'input');
    assert.deepEqual(Object.keys(run.inputRequests).sort(), ['a', 'b']);
    assert.equal((run.inputRequests['a']!.params as { message: string }).message, 'A about cats?');
    run.answer('a', accept()).answer('b', accept());
    await run.once();
    assert.deepEqual(Object.keys(run.inputRequests), ['c']);
    run.answer('c', decline());
    assert.deepEqual(await run.once(), { kind: 'result', result: { content: [{ type: 'text', text: 'accept,accept,decline' }] } });
    assert.equal(run.outcomes.length, 3);
    assert.deepEqual(run.inputRequests, {});
  });

  it('finish() fails naming the keys the test gave no answer for', async () => {
    const run = testTool(questions, { topic: 'x' }, { answers: { a: accept() } });
    await assert.rejects(run.finish(), /asks for "b", which the test gave no answer for/);
  });

  it('sleeps durably on the test clock: a run before the wake-up time sleeps again, steps run once', async () => {
    const ran = { before: 0, after: 0 };
    const run = testTool(sleeper(ran), { ms: 60_000 });
    assert.deepEqual(await run.once(), { kind: 'sleep', wakeAt: DEFAULT_START + 60_000 });
    run.clock.advance(59_999);
    assert.deepEqual(await run.once(), { kind: 'sleep', wakeAt: DEFAULT_START + 60_000 });
    run.clock.advance(1);
    const woken = await run.once();
    assert.equal(woken.kind === 'result' && textOf(woken.result), 'awake');
    assert.deepEqual(ran, { before: 1, after: 1 });
    assert.deepEqual(
      [...run.checkpoints],
      [
        ['before', 1],
        ['sleep#1', DEFAULT_START + 60_000],
        ['after', 1],
      ],
    );
    assert.deepEqual(run.progress, ['slept? not yet'], 'progress is not reported again while a run replays recorded calls');
  });

  it('finish() moves the clock to each wake-up time instead of waiting', async () => {
    const ran = { before: 0, after: 0 };
    const run = testTool(sleeper(ran), { ms: 7 * 24 * 3600 * 1000 }, { startAt: 1_000 });
    const started = Date.now();
    assert.equal(textOf(await run.result()), 'awake');
    assert.ok(Date.now() - started < 5_000, 'a week of durable sleep takes no real time');
    assert.equal(run.clock.now(), 1_000 + 7 * 24 * 3600 * 1000);
    assert.deepEqual(
      run.outcomes.map((outcome) => outcome.kind),
      ['sleep', 'result'],
    );
  });

  it('hands over to continuations after stepsPerRun new steps, keeping the checkpoints', async () => {
    let runs = 0;
    const counter = defineTool({
      name: 'counter',
      description: 'Counts in steps.',
      inputSchema: z.object({ n: z.number() }),
      execution: 'task',
      handler: async ({ n }, ctx) => {
        runs++;
        let sum = 0;
        for (let i = 1; i <= n; i++) sum += await ctx.step(`add-${i}`, async () => i);
        return String(sum);
      },
    });
    const run = testTool(counter, { n: 5 }, { stepsPerRun: 2 });
    assert.equal(textOf(await run.result()), '15');
    assert.deepEqual(
      run.outcomes.map((outcome) => outcome.kind),
      ['continue', 'continue', 'result'],
    );
    assert.equal(runs, 3);
    assert.deepEqual([...run.checkpoints.keys()], ['add-1', 'add-2', 'add-3', 'add-4', 'add-5']);
  });

  it('keeps checkpoints as stored copies: a replay gets the JSON value, not the object the step returned', async () => {
    const shared = { count: 1 };
    const tool = defineTool({
      name: 'copy',
      description: 'Mutates what a step returned.',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_args, ctx) => {
        const value = await ctx.step('value', async () => shared);
        value.count++;
        await ctx.sleep(1);
        return String(value.count);
      },
    });
    const run = testTool(tool, {});
    assert.equal(textOf(await run.result()), '2');
    assert.deepEqual(run.checkpoints.get('value'), { count: 1 });
  });

  it('retries a RetryableError after its delay on the clock and ends with the mapped outcomes of the runner', async () => {
    let attempts = 0;
    const flaky = defineTool({
      name: 'flaky',
      description: 'Fails once.',
      inputSchema: z.object({ mode: z.enum(['tool-error', 'protocol-error']) }),
      execution: 'task',
      handler: async ({ mode }) => {
        if (++attempts === 1) throw new RetryableError('busy', { delayMs: 5_000 });
        if (mode === 'tool-error') throw new ToolError('bad input');
        throw new ToolProtocolError(-32000, 'upstream');
      },
    });
    const toolError = testTool(flaky, { mode: 'tool-error' });
    assert.deepEqual(await toolError.finish(), {
      kind: 'result',
      result: { content: [{ type: 'text', text: 'bad input' }], isError: true },
    });
    assert.equal(toolError.clock.now(), DEFAULT_START + 5_000);
    assert.deepEqual(await testTool(flaky, { mode: 'protocol-error' }).finish(), {
      kind: 'protocol-error',
      error: { code: -32000, message: 'upstream' },
    });
    await assert.rejects(testTool(flaky, { mode: 'protocol-error' }).result(), /ended without a result/);
  });

  it('cancel() aborts the running handler and ends later runs cancelled', async () => {
    const waiting = defineTool({
      name: 'waiting',
      description: 'Waits for cancellation.',
      inputSchema: z.object({}),
      execution: 'task',
      handler: (_args, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
    });
    const run = testTool(waiting, {});
    const pending = run.once();
    run.cancel();
    assert.deepEqual(await pending, { kind: 'cancelled' });
    assert.deepEqual(await run.finish(), { kind: 'cancelled' });
  });

  it("hands over a tool's final status message with the outcome, off the result; ctx.now() reads the kit's clock", async () => {
    const deploys = defineTool({
      name: 'deploys',
      description: 'Deploys.',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_a, ctx) => {
        const started = await ctx.now();
        await ctx.sleep(60_000);
        const took = (await ctx.now()) - started;
        return { content: [{ type: 'text', text: `took ${took} ms` }], statusMessage: 'Deployed to 3 regions' };
      },
    });
    const run = testTool(deploys, {});
    const result = await run.result();
    assert.deepEqual(result, { content: [{ type: 'text', text: 'took 60000 ms' }] });
    const last = run.outcomes.at(-1);
    assert.equal(last?.kind === 'result' && last.statusMessage, 'Deployed to 3 regions');
  });

  it('rethrows an unexpected exception, as the worker sees it', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Throws.',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async () => {
        throw new TypeError('bug');
      },
    });
    await assert.rejects(testTool(broken, {}).finish(), TypeError);
  });

  it('gives ctx.setting the values given, and fails a read the test did not provide or the tool did not declare', async () => {
    const configured = defineTool({
      name: 'configured',
      description: 'Reads settings.',
      inputSchema: z.object({ key: z.string() }),
      execution: 'task',
      needs: { settings: { token: { secretsManager: 'app/token' }, region: { ssmParameter: '/app/region' } } },
      handler: async ({ key }, ctx) => ctx.setting(key),
    });
    assert.equal(textOf(await testTool(configured, { key: 'token' }, { settings: { token: 's3cr3t' } }).result()), 's3cr3t');
    await assert.rejects(
      testTool(configured, { key: 'region' }, { settings: { token: 's3cr3t' } }).finish(),
      /reads setting "region"; give it in options.settings/,
    );
    await assert.rejects(
      testTool(configured, { key: 'other' }, { settings: { other: 'x' } }).finish(),
      /does not declare in needs.settings/,
    );
  });

  it('passes the client capabilities and task id through: a missing capability fails as the runner maps it', async () => {
    const asker = defineTool({
      name: 'asker',
      description: 'Asks.',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_args, ctx) => `${ctx.taskId}:${(await ctx.elicit('q', form('?'))).action}`,
    });
    assert.equal(textOf(await testTool(asker, {}, { taskId: 't-9', answers: { q: accept() } }).result()), 't-9:accept');
    const outcome = await testTool(asker, {}, { clientCapabilities: {} }).finish();
    assert.equal(outcome.kind === 'protocol-error' && outcome.error.code, -32021);
  });

  it('gives up after maxRuns', async () => {
    const forever = defineTool({
      name: 'forever',
      description: 'Polls forever.',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_args, ctx) => {
        for (;;) await ctx.sleep(1_000);
      },
    });
    await assert.rejects(testTool(forever, {}).finish({ maxRuns: 5 }), /did not finish within 5 runs/);
  });
});

describe('testTool: replaceCode, code that changes under a task in flight', () => {
  const version = (tag: string | undefined, steps: string[], text = 'done') =>
    defineTool({
      name: 'evolving',
      description: 'Changes between versions.',
      inputSchema: z.object({}),
      execution: 'task',
      ...(tag === undefined ? {} : { version: tag }),
      handler: async (_args, ctx) => {
        for (const name of steps) await ctx.step(name, async () => name);
        await ctx.sleep(1_000);
        return text;
      },
    });

  it('replays the recorded steps with new code that keeps their order', async () => {
    const run = testTool(version(undefined, ['a', 'b']), {});
    assert.equal((await run.once()).kind, 'sleep');
    assert.equal(textOf(await run.replaceCode(version(undefined, ['a', 'b'], 'done, new text')).result()), 'done, new text');
  });

  it('ends the task failed with replay-divergence when the new code reorders recorded steps', async () => {
    const run = testTool(version(undefined, ['a', 'b']), {});
    await run.once();
    const outcome = await run.replaceCode(version(undefined, ['b', 'a'])).finish();
    assert.equal(outcome.kind, 'protocol-error');
    assert.equal(outcome.kind === 'protocol-error' && (outcome.error.data as { reason: string }).reason, 'replay-divergence');
  });

  it('ends the task failed with tool-version-changed when the new code declares another version', async () => {
    const run = testTool(version('1', ['a', 'b']), {});
    await run.once();
    const outcome = await run.replaceCode(version('2', ['a', 'c'])).finish();
    assert.equal(outcome.kind === 'protocol-error' && (outcome.error.data as { reason: string }).reason, 'tool-version-changed');
  });
});

describe('TestClock', () => {
  it('advances and sets forward only', () => {
    const clock = new TestClock(100);
    clock.advance(50);
    assert.equal(clock.now(), 150);
    clock.set(200);
    assert.equal(clock.now(), 200);
    assert.throws(() => clock.set(199), RangeError);
    assert.throws(() => clock.advance(-1), RangeError);
  });
});

describe('answer helpers', () => {
  it('build elicitation answers and read text content', () => {
    assert.deepEqual(accept({ approve: true }), { action: 'accept', content: { approve: true } });
    assert.deepEqual(decline(), { action: 'decline' });
    assert.equal(
      textOf({
        content: [
          { type: 'text', text: 'a' },
          { type: 'image', data: '' },
          { type: 'text', text: 'b' },
        ],
      }),
      'a\nb',
    );
  });
});
