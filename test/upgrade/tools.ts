/**
 * The tools of the upgrade fixtures: the rows and queue messages under
 * `test/upgrade/<version>/` were written by that version's code running these
 * tools, and every later version's `upgrade.test.ts` serves them again and
 * finishes those tasks. Never change what they do or the order of their
 * steps, sleeps and questions (the replay checks would rightly fail the
 * recorded tasks); add a tool instead.
 */
import * as z from 'zod';
import { defineTool, defineWorkflowTool, type ToolDefinition } from '#tool';

const name = z
  .string()
  .regex(/^[A-Za-z0-9 _-]+$/)
  .max(100);

/** One step, then its result: recorded `queued` (created, its start message on the queue, never run) and `completed`. */
const upgradeWork = defineTool({
  name: 'upgrade_work',
  description: 'Does one step of work and returns.',
  inputSchema: z.object({ name }),
  execution: 'task',
  handler: async ({ name }, ctx) => {
    const done = await ctx.step('work', async () => `worked for ${name}`);
    return { content: [{ type: 'text', text: done }], structuredContent: { done } };
  },
});

/** A step, then a question: recorded `input_required`, waiting for the answer. */
const upgradeQuestion = defineTool({
  name: 'upgrade_question',
  description: 'Does one step, then asks whether to go on.',
  inputSchema: z.object({ name }),
  execution: 'task',
  handler: async ({ name }, ctx) => {
    const before = await ctx.step('before', async () => `prepared ${name}`);
    const answer = await ctx.elicit('go', {
      message: `Go on with ${name}?`,
      requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } }, required: ['go'] },
    });
    const text = answer.action === 'accept' && answer.content?.['go'] === true ? `${before}, then went on` : `${before}, then stopped`;
    return { content: [{ type: 'text', text }] };
  },
});

/** A step, a durable sleep, another step: recorded asleep, its wake-up message on the queue with its delay. */
const upgradeSleep = defineTool({
  name: 'upgrade_sleep',
  description: 'Sleeps durably between two steps.',
  inputSchema: z.object({ name, ms: z.number().int().min(0).max(60_000) }),
  execution: 'task',
  handler: async ({ name, ms }, ctx) => {
    const before = await ctx.step('before', async () => `fell asleep for ${name}`);
    await ctx.sleep(ms);
    const after = await ctx.step('after', async () => 'woke up');
    return { content: [{ type: 'text', text: `${before}, ${after}` }] };
  },
});

/** A Step Functions workflow that waits a day: recorded following its execution (`workflow.json`). */
const upgradeWorkflow = defineWorkflowTool({
  name: 'upgrade_workflow',
  description: 'Runs a workflow that holds for a day.',
  inputSchema: z.object({ name }),
  workflow: {
    name: 'upgrade-hold',
    definition: 'test/upgrade/hold.asl.json',
    text: (output) => `held for ${(output as { held: string }).held}`,
  },
});

export const upgradeTools: ToolDefinition[] = [upgradeWork, upgradeQuestion, upgradeSleep, upgradeWorkflow as ToolDefinition];
