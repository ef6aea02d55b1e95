import { defineTool } from 'mcp-tasks-serverless';
import * as z from 'zod';

/**
 * A sample tool: it asks how formal to be (the task waits, with no compute,
 * until the client answers), composes the greeting in a step (once per task,
 * even when the handler is replayed) and returns it.
 */
export const hello = defineTool({
  name: 'hello',
  description: 'Greets someone, after asking how formal the greeting should be.',
  inputSchema: z.object({ name: z.string().min(1).max(100).describe('Who to greet') }),
  execution: 'task',
  handler: async ({ name }, ctx) => {
    const answer = await ctx.elicit('style', {
      message: `How formal should the greeting for ${name} be?`,
      requestedSchema: {
        type: 'object',
        properties: { formal: { type: 'boolean', title: 'Formal', description: 'A formal greeting' } },
        required: ['formal'],
      },
    });
    if (answer.action !== 'accept') return `No greeting for ${name}.`;
    const formal = answer.content?.['formal'] === true;
    return await ctx.step('compose', async () => (formal ? `Good day, ${name}.` : `Hi ${name}!`));
  },
});
