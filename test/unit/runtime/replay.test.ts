/**
 * Replay safety of the runner: the order of steps, sleeps and questions is
 * recorded and checked, a key stands for one question, progress from a
 * replay never moves `statusMessage` backwards, a changed tool version is
 * reported distinctly, and journals written before positions existed still
 * replay.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { runTool } from '../../../shared/runtime/run.ts';
import type { Journal, JournalEntry, RunOptions, RunOutcome } from '../../../shared/runtime/run-types.ts';
import { defineTool, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import type { QuestionRecord } from '../../../shared/tasks/model.ts';

function tool(handler: ToolDefinition['handler'], version?: string): ToolDefinition {
  return defineTool({
    name: 'replayed',
    description: 'd',
    inputSchema: z.object({}),
    execution: 'task',
    handler,
    ...(version ? { version } : {}),
  });
}

/** A journal like the worker's: steps with positions, loaded once per run. */
function memoryJournal(initial: Record<string, JournalEntry> = {}) {
  const steps = new Map<string, JournalEntry>(Object.entries(initial));
  const journal: Journal = {
    lookup: async (name) => steps.get(name),
    record: async (name, value, position) => {
      if (!steps.has(name)) steps.set(name, position === undefined ? { value } : { value, position });
      return steps.get(name)!.value;
    },
    entries: async () => new Map(steps),
  };
  return { steps, journal };
}

/** Runs the tool the way the worker does, with answers and questions carried from run to run. */
function durable(state = memoryJournal()) {
  const answers: Record<string, unknown> = {};
  const questions: Record<string, QuestionRecord> = {};
  const progress: string[] = [];
  let clock = 1000;
  let runs = 0;
  return {
    state,
    answers,
    questions,
    progress,
    advance: (ms: number) => (clock += ms),
    async run(t: ToolDefinition, extra: Partial<RunOptions> = {}): Promise<RunOutcome> {
      runs += 1;
      const outcome = await runTool(
        t,
        {},
        {
          taskId: 't',
          clientCapabilities: { elicitation: {} },
          answers: { ...answers },
          questions: { ...questions },
          cancel: new AbortController().signal,
          progress: async (message) => void progress.push(message),
          journal: state.journal,
          fresh: runs === 1,
          now: () => clock,
          ...extra,
        },
      );
      if (outcome.kind === 'input') Object.assign(questions, outcome.questions);
      return outcome;
    },
  };
}

const schema = (field: string) => ({ type: 'object', properties: { [field]: { type: 'string' } } });

function assertFailsNaming(outcome: RunOutcome, reason: string, pattern: RegExp) {
  assert.equal(outcome.kind, 'protocol-error', JSON.stringify(outcome));
  if (outcome.kind !== 'protocol-error') return;
  assert.equal(outcome.error.code, -32603);
  assert.equal((outcome.error.data as { reason?: string }).reason, reason);
  assert.match(outcome.error.message, pattern);
}

describe('runTool: replay checks', () => {
  it('fails a replay whose step names come from chance, naming the step', async () => {
    let fetches = 0;
    const random = tool(async (_a, ctx) => {
      await ctx.step(`fetch-${Math.random().toString(36).slice(2)}`, async () => ++fetches);
      await ctx.sleep(100);
      return 'done';
    });
    const task = durable();
    assert.equal((await task.run(random)).kind, 'sleep');
    task.advance(100);
    const outcome = await task.run(random);
    assertFailsNaming(
      outcome,
      'replay-divergence',
      /Replay diverged at step "fetch-[a-z0-9]+" \(call #1\): the journal has step "fetch-[a-z0-9]+" there/,
    );
    assert.equal(fetches, 1, 'the diverging step did not run again');
  });

  it('fails a replay that reaches a recorded step at another position', async () => {
    let first = true;
    const reordered = tool(async (_a, ctx) => {
      const names = first ? ['a', 'b'] : ['b', 'a'];
      for (const name of names) await ctx.step(name, async () => name);
      await ctx.sleep(10);
      return 'done';
    });
    const task = durable();
    assert.equal((await task.run(reordered)).kind, 'sleep');
    first = false;
    task.advance(10);
    assertFailsNaming(await task.run(reordered), 'replay-divergence', /step "b" \(call #1\)/);
  });

  it('fails a step inserted where a sleep was recorded', async () => {
    let inserted = false;
    const changed = tool(async (_a, ctx) => {
      if (inserted) await ctx.step('new', async () => 1);
      await ctx.sleep(10);
      return 'done';
    });
    const task = durable();
    assert.equal((await task.run(changed)).kind, 'sleep');
    inserted = true;
    task.advance(10);
    assertFailsNaming(await task.run(changed), 'replay-divergence', /step "new" \(call #1\): the journal has a sleep \("sleep#1"\) there/);
  });

  it('fails a key reused for a different question in one run, naming the key', async () => {
    const reused = tool(async (_a, ctx) => {
      const first = await ctx.elicit('confirm', { message: 'Name?', requestedSchema: schema('name') });
      const second = await ctx.elicit('confirm', { message: 'Colour?', requestedSchema: schema('colour') });
      return JSON.stringify([first, second]);
    });
    const task = durable();
    assert.equal((await task.run(reused)).kind, 'input');
    task.answers['confirm'] = { action: 'accept', content: { name: 'x' } };
    assertFailsNaming(await task.run(reused), 'input-key-reused', /Input key "confirm" was used for a different question/);
  });

  it('fails a key whose recorded question was another one (method or schema changed between runs)', async () => {
    let field = 'name';
    const changing = tool(async (_a, ctx) => JSON.stringify(await ctx.elicit('ask', { message: 'Q', requestedSchema: schema(field) })));
    const task = durable();
    assert.equal((await task.run(changing)).kind, 'input');
    task.answers['ask'] = { action: 'accept', content: { name: 'x' } };
    field = 'other';
    assertFailsNaming(await task.run(changing), 'input-key-reused', /"ask"/);
  });

  it('accepts the same question asked again under its key, and a changed message text', async () => {
    let message = 'Proceed?';
    const asksTwice = tool(async (_a, ctx) => {
      const answer = await ctx.elicit('go', { message, requestedSchema: schema('ok') });
      await ctx.elicit('go', { message, requestedSchema: schema('ok') });
      return answer.action;
    });
    const task = durable();
    assert.equal((await task.run(asksTwice)).kind, 'input');
    task.answers['go'] = { action: 'accept', content: { ok: 'y' } };
    message = 'Proceed now?';
    assert.deepEqual(await task.run(asksTwice), { kind: 'result', result: { content: [{ type: 'text', text: 'accept' }] } });
  });

  it('records where each question was asked', async () => {
    const asks = tool(async (_a, ctx) => {
      await ctx.step('prepare', async () => 1);
      await Promise.all([
        ctx.elicit('a', { message: 'A', requestedSchema: schema('a') }),
        ctx.elicit('b', { message: 'B', requestedSchema: schema('b') }),
      ]);
      return 'done';
    });
    const task = durable();
    const outcome = await task.run(asks);
    assert.equal(outcome.kind, 'input');
    assert.deepEqual(Object.fromEntries(Object.entries(task.questions).map(([key, q]) => [key, q.position])), { a: 2, b: 3 });
  });

  it('reports a changed tool version distinctly once recorded work would be replayed', async () => {
    const v1 = tool(async (_a, ctx) => {
      await ctx.step('one', async () => 1);
      await ctx.sleep(10);
      return 'v1';
    }, '1');
    const v2 = tool(v1.handler, '2');
    const task = durable();
    assert.equal((await task.run(v1, { recordedVersion: '1' })).kind, 'sleep');
    task.advance(10);
    assertFailsNaming(await task.run(v2, { recordedVersion: '1' }), 'tool-version-changed', /Tool "replayed" changed from version 1 to 2/);
    // The same version replays normally.
    assert.equal((await task.run(v1, { recordedVersion: '1' })).kind, 'result');
  });

  it('runs a task with nothing recorded yet under a new version', async () => {
    const v2 = tool(async (_a, ctx) => String(await ctx.step('one', async () => 1)), '2');
    assert.equal((await durable().run(v2, { recordedVersion: '1' })).kind, 'result');
  });

  it('replays a journal written before positions existed (steps matched by name)', async () => {
    // Checkpoints as older versions stored them: values, no positions.
    const task = durable(memoryJournal({ a: { value: 1 }, 'sleep#1': { value: 0 } }));
    let ran = 0;
    const legacy = tool(async (_a, ctx) => {
      const a = await ctx.step('a', async () => ++ran);
      await ctx.sleep(10);
      const b = await ctx.step('b', async () => ++ran + 10);
      return String(a + b);
    });
    assert.deepEqual(await task.run(legacy, { fresh: false }), { kind: 'result', result: { content: [{ type: 'text', text: '12' }] } });
    assert.equal(ran, 1, 'only the new step ran');
    assert.deepEqual(task.state.steps.get('b'), { value: 11, position: 3 });
  });
});

describe('runTool: ctx.now()', () => {
  it('outside a step is recorded like one (now#n), so a replay reads the same instant; inside a step it reads the clock', async () => {
    const seen: number[] = [];
    const timed = tool(async (_a, ctx) => {
      const started = await ctx.now();
      seen.push(started);
      const stamped = await ctx.step('stamp', async () => ({ at: await ctx.now() }));
      await ctx.sleep(500);
      return `started ${started}, stamped ${stamped.at}, woke ${await ctx.now()}`;
    });
    const task = durable();
    assert.equal((await task.run(timed)).kind, 'sleep');
    task.advance(700);
    const outcome = await task.run(timed);
    assert.equal(outcome.kind === 'result' && outcome.result.content[0]?.['text'], 'started 1000, stamped 1000, woke 1700');
    assert.deepEqual(seen, [1000, 1000], 'the replay read the recorded instant, not the clock');
    assert.deepEqual(
      [...task.state.steps].map(([name, entry]) => [name, entry.value, entry.position]),
      [
        ['now#1', 1000, 1],
        ['stamp', { at: 1000 }, 2],
        ['sleep#1', 1500, 3],
        ['now#2', 1700, 4],
      ],
      'a read inside a step is no step of its own',
    );
  });

  it('inline (no journal) reads the clock each time', async () => {
    let clock = 5;
    const timed = tool(
      async (_a, ctx) => `${await ctx.now()} ${await ctx.step('s', async () => ctx.now())} ${(clock += 1) && (await ctx.now())}`,
    );
    const options = {
      taskId: undefined,
      clientCapabilities: {},
      answers: {},
      cancel: new AbortController().signal,
      progress: async () => {},
    };
    const outcome = await runTool(timed, {}, { ...options, now: () => clock });
    assert.equal(outcome.kind === 'result' && outcome.result.content[0]?.['text'], '5 5 6');
  });
});

describe('runTool: progress on replay', () => {
  it('drops progress reported while replaying recorded calls, so statusMessage never moves backwards', async () => {
    const job = tool(async (_a, ctx) => {
      const id = await ctx.step('submit', async () => 'job-1');
      await ctx.progress(`Submitted ${id}`);
      for (let check = 1; ; check++) {
        const done = await ctx.step(`status#${check}`, async () => check >= 3);
        if (done) return 'finished';
        await ctx.progress(`Running (check ${check})`);
        await ctx.sleep(10);
      }
    });
    const task = durable();
    assert.equal((await task.run(job)).kind, 'sleep');
    assert.deepEqual(task.progress, ['Submitted job-1', 'Running (check 1)']);
    task.advance(10);
    assert.equal((await task.run(job)).kind, 'sleep');
    assert.deepEqual(task.progress.slice(2), ['Running (check 2)'], 'the replayed "Submitted" and "check 1" are not written again');
    task.advance(10);
    assert.equal((await task.run(job)).kind, 'result');
    assert.deepEqual(task.progress.slice(3), []);
  });

  it('drops progress while replaying a legacy journal (no positions) until its steps are passed', async () => {
    const task = durable(memoryJournal({ one: { value: 1 }, two: { value: 2 } }));
    const job = tool(async (_a, ctx) => {
      await ctx.step('one', async () => 1);
      await ctx.progress('after one');
      await ctx.step('two', async () => 2);
      await ctx.progress('after two');
      await ctx.step('three', async () => 3);
      await ctx.progress('after three');
      return 'ok';
    });
    await task.run(job, { fresh: false });
    // Past the last recorded step the run is new work again (the message there is at least as recent as any written).
    assert.deepEqual(task.progress, ['after two', 'after three']);
  });
});

describe('runTool: inline sleep', () => {
  it('stops waiting when the call is cancelled or its budget runs out', async () => {
    const cancel = new AbortController();
    const started = Date.now();
    const run = runTool(
      tool(async (_a, ctx) => {
        await ctx.sleep(60_000);
        return 'late';
      }),
      {},
      {
        taskId: undefined,
        clientCapabilities: {},
        answers: {},
        cancel: cancel.signal,
        progress: async () => {},
      },
    );
    setTimeout(() => cancel.abort(new Error('budget')), 20);
    assert.deepEqual(await run, { kind: 'cancelled' });
    assert.ok(Date.now() - started < 30_000, 'did not wait out the sleep');
  });

  it('uses the sync budget signal as the endpoint passes it', async () => {
    const outcome = await runTool(
      tool(async (_a, ctx) => {
        await ctx.sleep(60_000);
        return 'late';
      }),
      {},
      {
        taskId: undefined,
        clientCapabilities: {},
        answers: {},
        cancel: AbortSignal.timeout(20),
        progress: async () => {},
      },
    );
    assert.deepEqual(outcome, { kind: 'cancelled' });
  });
});
