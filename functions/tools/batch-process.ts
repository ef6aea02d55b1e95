import { createHash } from 'node:crypto';
import * as z from 'zod';
import { defineTool, delay } from '#tool';

/**
 * A batch job: processes items one by one and reports progress item by item
 * (`statusMessage`), stopping promptly when the task is cancelled.
 *
 * Each item is a step: its result is checkpointed once it is done, so a run
 * that crashes (or hands over at the end of an invocation) resumes at the
 * first unfinished item and never redoes a finished one. That costs one
 * checkpoint write per item (one WCU for an item's small result), plus the
 * journal's one query per run. An item interrupted between its work and its
 * checkpoint is done again (steps are at-least-once).
 *
 * "Processing" an item fingerprints it; `delayMs` stands in for real work.
 */
export const batchProcess = defineTool({
  name: 'batch_process',
  title: 'Batch process',
  description: 'Processes a list of items one at a time, reporting progress after each item, and returns a per-item summary.',
  inputSchema: z.object({
    items: z.array(z.string().max(10_000)).min(1).max(1000).describe('The items to process'),
    delayMs: z.number().int().min(0).max(60_000).default(500).describe('Simulated work per item, in milliseconds'),
  }),
  execution: 'optional',
  handler: async ({ items, delayMs }, ctx) => {
    const processed: Array<{ item: number; fingerprint: string; processedAt: string }> = [];
    for (const [index, item] of items.entries()) {
      // When it was processed is part of what is recorded: a replay says the first time, not a second.
      const done = await ctx.step(`item#${index}`, async () => {
        await delay(delayMs, ctx.signal);
        return { fingerprint: createHash('sha256').update(item).digest('hex').slice(0, 16), processedAt: new Date().toISOString() };
      });
      processed.push({ item: index, ...done });
      await ctx.progress(`Processed ${index + 1} of ${items.length} items`);
    }
    const message = `Processed ${items.length} items`;
    return { content: [{ type: 'text', text: message }], structuredContent: { count: items.length, processed, message } };
  },
});
