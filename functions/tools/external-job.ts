import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { defineTool } from '#tool';

/**
 * Wraps an external job system: submit a job, then check its status every
 * `pollEverySeconds` until it is done, and return its output.
 *
 * Submitting and each status check are steps, so a restart never submits
 * twice and never repeats a check it already recorded; the waits between
 * checks are durable sleeps, so no compute runs while the job does.
 *
 * The external system is simulated: a job finishes `durationSeconds` after it
 * was submitted. Swap `submit` and `status` for real calls to use it.
 */
export const externalJob = defineTool({
  name: 'external_job',
  title: 'External job',
  description: 'Submits a job to an external system and waits for it to finish, checking its status periodically.',
  inputSchema: z.object({
    input: z.string().max(10_000).describe('What the job should work on'),
    durationSeconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .default(30)
      .describe('How long the simulated job runs'),
    pollEverySeconds: z
      .number()
      .int()
      .min(1)
      .max(24 * 3600)
      .default(10)
      .describe('How often to check its status'),
  }),
  execution: 'task',
  handler: async ({ input, durationSeconds, pollEverySeconds }, ctx) => {
    const job = await ctx.step('submit', async () => submit(input, durationSeconds));
    await ctx.progress(`Submitted job ${job.jobId}`);
    for (let check = 1; ; check++) {
      const status = await ctx.step(`status#${check}`, async () => checkStatus(job));
      if (status.state === 'succeeded') {
        const message = `Job ${job.jobId} succeeded after ${check} status checks: ${status.output}`;
        return {
          content: [{ type: 'text', text: message }],
          structuredContent: { jobId: job.jobId, checks: check, output: status.output, message },
        };
      }
      await ctx.progress(`Job ${job.jobId} is ${status.state} (check ${check})`);
      await ctx.sleep(pollEverySeconds * 1000);
    }
  },
});

interface SubmittedJob {
  jobId: string;
  finishesAt: number;
  input: string;
}

async function submit(input: string, durationSeconds: number): Promise<SubmittedJob> {
  return { jobId: randomUUID(), finishesAt: Date.now() + durationSeconds * 1000, input };
}

async function checkStatus(job: SubmittedJob): Promise<{ state: 'running' | 'succeeded'; output?: string }> {
  if (Date.now() < job.finishesAt) return { state: 'running' };
  return { state: 'succeeded', output: `processed ${job.input.length} characters` };
}
