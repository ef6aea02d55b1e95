/**
 * Fixtures for the durability tests: each records its side effects (see
 * `effects.ts`) so a test can tell a step that ran once from one that ran
 * twice. Served only with `TASKS_TOOLSET=test`.
 */
import * as z from 'zod';
import { defineTool, RetryableError, ToolError, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { sleep } from '../../../shared/runtime/sleep.ts';
import { reportDigest } from './configured.ts';
import { readEffects, recordEffect } from './effects.ts';

const label = z.string().regex(/^[A-Za-z0-9_-]+$/).max(100);

/** `steps` checkpointed steps of `stepMs` each; step i's effect is recorded once it has run. */
const stepSequence = defineTool({
  name: 'step_sequence',
  description: 'Runs a number of checkpointed steps, each taking a while.',
  inputSchema: z.object({ label, steps: z.number().int().min(1).max(1000), stepMs: z.number().int().min(0).max(60_000).default(0) }),
  execution: 'task',
  handler: async ({ label, steps, stepMs }, ctx) => {
    let total = 0;
    for (let i = 1; i <= steps; i++) {
      total += await ctx.step(`step-${i}`, async () => {
        await sleep(stepMs, ctx.signal);
        recordEffect(label, `step-${i}`);
        return i;
      });
      await ctx.progress(`Finished step ${i} of ${steps}`);
    }
    return { content: [{ type: 'text', text: `sum=${total}` }], structuredContent: { sum: total } };
  },
});

/** A step, a durable sleep, another step. */
const durableSleep = defineTool({
  name: 'durable_sleep',
  description: 'Sleeps durably between two steps.',
  inputSchema: z.object({ label, ms: z.number().int().min(0).max(24 * 3600 * 1000) }),
  execution: 'task',
  handler: async ({ label, ms }, ctx) => {
    const startedAt = await ctx.step('before', async () => {
      recordEffect(label, 'before');
      return Date.now();
    });
    await ctx.sleep(ms);
    const wokeAt = await ctx.step('after', async () => {
      recordEffect(label, 'after');
      return Date.now();
    });
    return { content: [{ type: 'text', text: `slept ${wokeAt - startedAt} ms` }], structuredContent: { sleptMs: wokeAt - startedAt } };
  },
});

/** Fails with an unexpected error on every attempt: ends in the dead-letter queue. */
const poison = defineTool({
  name: 'poison',
  description: 'Always throws an unexpected error.',
  inputSchema: z.object({ label }),
  execution: 'task',
  handler: async ({ label }) => {
    recordEffect(label, 'attempt');
    throw new Error('poisoned');
  },
});

/** Records one new step per run and then throws an unexpected error, until all `steps` are done. */
const stepThenCrash = defineTool({
  name: 'step_then_crash',
  description: 'Makes progress, then fails unexpectedly, on every run but the last.',
  inputSchema: z.object({ label, steps: z.number().int().min(1).max(100) }),
  execution: 'task',
  handler: async ({ label, steps }, ctx) => {
    for (let i = 1; i <= steps; i++) {
      let ran = false;
      await ctx.step(`step-${i}`, async () => {
        recordEffect(label, `step-${i}`);
        ran = true;
        return i;
      });
      if (ran && i < steps) throw new Error(`crashed after step ${i}`);
    }
    return `${steps} steps`;
  },
});

/** Fails transiently `failures` times, then succeeds. */
const flaky = defineTool({
  name: 'flaky',
  description: 'Fails transiently a given number of times, then succeeds.',
  inputSchema: z.object({ label, failures: z.number().int().min(0).max(100) }),
  execution: 'task',
  handler: async ({ label, failures }) => {
    const attempt = readEffects(label).length + 1;
    recordEffect(label, `attempt-${attempt}`);
    if (attempt <= failures) throw new RetryableError(`transient failure ${attempt}`, { delayMs: 0 });
    return `succeeded on attempt ${attempt}`;
  },
});

/** Counts its executions: for duplicate-delivery tests. */
const counter = defineTool({
  name: 'counter',
  description: 'Records one side effect per execution and takes a moment.',
  inputSchema: z.object({ label, ms: z.number().int().min(0).max(60_000).default(200) }),
  execution: 'task',
  handler: async ({ label, ms }, ctx) => {
    recordEffect(label, 'ran');
    await sleep(ms, ctx.signal);
    return 'counted';
  },
});

/** The scope {@link privileged} needs on top of the endpoint's. */
export const PRIVILEGED_SCOPE = 'tasks:admin';

/** A tool with a scope of its own: for step-up (`403 insufficient_scope`) tests. */
const privileged = defineTool({
  name: 'privileged_echo',
  description: 'Echoes its text as a task; callers need the tasks:admin scope when the endpoint requires tokens.',
  inputSchema: z.object({ text: z.string().max(200) }),
  execution: 'task',
  scopes: [PRIVILEGED_SCOPE],
  handler: async ({ text }) => text,
});


/**
 * Waits until `parties` tasks of the same label have arrived: it finishes only
 * when that many run at once (structural evidence of concurrency, whatever the
 * machine's speed). Gives up after `timeoutMs` with a tool error saying how
 * many arrived.
 */
const rendezvous = defineTool({
  name: 'rendezvous',
  description: 'Finishes once a number of tasks with the same label are running at the same time.',
  inputSchema: z.object({ label, parties: z.number().int().min(1).max(100), timeoutMs: z.number().int().min(0).max(300_000).default(120_000) }),
  execution: 'task',
  handler: async ({ label, parties, timeoutMs }, ctx) => {
    recordEffect(label, 'arrived');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const arrived = readEffects(label).length;
      if (arrived >= parties) return { content: [{ type: 'text', text: `met ${arrived}` }], structuredContent: { arrived } };
      if (Date.now() >= deadline) throw new ToolError(`only ${arrived} of ${parties} arrived`);
      await sleep(50, ctx.signal);
    }
  },
});

/** A replay mistake: step names derived from chance (every replay diverges). */
const randomStep = defineTool({
  name: 'random_step',
  description: 'Names a step after a random number, then sleeps durably (a replay mistake).',
  inputSchema: z.object({ label }),
  execution: 'task',
  handler: async ({ label }, ctx) => {
    await ctx.step(`fetch-${Math.random().toString(36).slice(2, 10)}`, async () => recordEffect(label, 'fetch'));
    await ctx.sleep(100);
    return 'unreachable on a correct runner';
  },
});

/** A replay mistake: one input key for two different questions. */
const reusedKey = defineTool({
  name: 'reused_key',
  description: 'Asks two different questions under one key (a replay mistake).',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_args, ctx) => {
    const name = await ctx.elicit('details', { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } });
    const colour = await ctx.elicit('details', { message: 'Favourite colour?', requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } } });
    return JSON.stringify([name, colour]);
  },
});

export const testingTools: ToolDefinition[] = [stepSequence, durableSleep, poison, stepThenCrash, flaky, counter, rendezvous, randomStep, reusedKey, privileged, reportDigest];
