import { createHash } from 'node:crypto';
import * as z from 'zod';
import { defineTool, delay } from '#tool';

/** How often the computation reports how far it is. */
const PROGRESS_EVERY_SECONDS = 5;

/**
 * A long computation to try the server with: it works for `seconds` (45 by
 * default, past the 20 s a call without tasks may wait), reporting its
 * progress every few seconds, then answers a digest of its work. A client
 * with tasks gets a task; one without gets a note naming the task within the
 * synchronous budget, then the result through `task_status`. Cancelling
 * stops it at the next slice.
 */
export const longComputation = defineTool({
  name: 'long_computation',
  title: 'Long computation',
  description:
    'Runs a computation that takes a while (45 seconds by default), reporting progress, and returns its result. ' +
    'It continues in the background if it outlasts the call.',
  inputSchema: z.object({
    seconds: z.number().min(0).max(3600).default(45).describe('How long the computation runs, in seconds'),
    label: z.string().max(200).optional().describe('A name for this run, repeated in the result'),
  }),
  execution: 'optional',
  inline: ({ seconds }) => seconds === 0,
  handler: async ({ seconds, label }, ctx) => {
    let digest = createHash('sha256').update(label ?? '');
    for (let done = 0; done < seconds; done += PROGRESS_EVERY_SECONDS) {
      const slice = Math.min(PROGRESS_EVERY_SECONDS, seconds - done);
      await delay(slice * 1000, ctx.signal);
      digest = createHash('sha256')
        .update(digest.digest())
        .update(String(done + slice));
      await ctx.progress(`Computed ${done + slice} of ${seconds} s`);
    }
    const result = digest.digest('hex').slice(0, 16);
    const message = `Computed ${label ?? 'the result'} in ${seconds} s: ${result}`;
    return { content: [{ type: 'text', text: message }], structuredContent: { result, seconds, ...(label ? { label } : {}), message } };
  },
});
