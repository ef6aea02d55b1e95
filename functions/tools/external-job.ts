import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { defineTool, RetryableError, type TaskContext, ToolError, type ToolResult } from '#tool';

/**
 * Wraps an external job system, in one of two modes:
 *
 * - `poll`: submit a job, then check its status every `pollEverySeconds`
 *   until it is done. Submitting and each status check are steps, the waits
 *   between checks durable sleeps: the pattern for systems without webhooks.
 *   Each check is a wake-up through the queue, an invocation and a few
 *   writes, and the answer comes up to one interval after the job is done.
 * - `callback`: hand the job system a callback URL (`ctx.callback`) and
 *   suspend; the system posts the job's output there when it is done, which
 *   resumes the task at once. No compute and no writes while the job runs.
 *
 * The job system is simulated. In poll mode, a job finishes
 * `durationSeconds` after it was submitted (swap `submit` and `status` for
 * real calls). In callback mode the job goes to the HTTP job system the
 * `jobSystemUrl` setting names (`POST <url>/jobs` with the job and its
 * callback URL; `DELETE <url>/jobs/<id>` on cancel): `npm start` runs a
 * simulated one and sets it; a deployment names a real one in the SSM
 * parameter, and without it callback mode ends at once with a tool error
 * rather than wait for a callback nobody would make.
 */
export const externalJob = defineTool({
  name: 'external_job',
  title: 'External job',
  description:
    'Submits a job to an external system and waits for it to finish: by checking its status periodically (mode "poll"), or by ' +
    'having the system call back when it is done (mode "callback").',
  inputSchema: z.object({
    input: z.string().max(10_000).describe('What the job should work on'),
    durationSeconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .default(30)
      .describe('How long the simulated job runs'),
    mode: z
      .enum(['poll', 'callback'])
      .default('poll')
      .describe('"poll": check its status periodically; "callback": the job system calls back'),
    pollEverySeconds: z
      .number()
      .int()
      .min(1)
      .max(24 * 3600)
      .default(10)
      .describe('How often to check its status (mode "poll")'),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(8 * 24 * 3600)
      .optional()
      .describe('How long to wait for the callback (mode "callback"; default: the duration plus ten minutes)'),
  }),
  execution: 'task',
  needs: { settings: { jobSystemUrl: { ssmParameter: '/mcp-tasks/external-job/job-system-url' } } },
  handler: async ({ input, durationSeconds, mode, pollEverySeconds, timeoutSeconds }, ctx) => {
    if (mode === 'callback') return byCallback(input, durationSeconds, timeoutSeconds ?? durationSeconds + 600, ctx);
    // The simulated job keeps time by the run's clock (`ctx.now()`): the kit's clock in tests, where sleeps move it.
    const job = await ctx.step('submit', async () => submit(input, durationSeconds, await ctx.now()));
    await ctx.progress(`Submitted job ${job.jobId}`);
    for (let check = 1; ; check++) {
      const status = await ctx.step(`status#${check}`, async () => checkStatus(job, await ctx.now()));
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

/** Callback mode: the job system is handed the callback's URL (the callback's id is the job's, so a re-sent job is the same job). */
async function byCallback(input: string, durationSeconds: number, timeoutSeconds: number, ctx: TaskContext): Promise<ToolResult> {
  let jobSystem: string;
  try {
    jobSystem = (await ctx.setting('jobSystemUrl')).replace(/\/+$/, '');
  } catch (error) {
    throw new ToolError('Callback mode needs a job system that calls back: set the jobSystemUrl setting, or use mode "poll"', {
      cause: error,
    });
  }
  const posted = await ctx.callback('job', {
    timeoutMs: timeoutSeconds * 1000,
    waitingMessage: 'Waiting for the job system to call back',
    submit: async ({ id, url }) => {
      const body = JSON.stringify({ jobId: id, input, durationSeconds, callbackUrl: url });
      const response = await fetch(`${jobSystem}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (!response.ok) throw new RetryableError(`The job system answered ${response.status}`);
    },
    onCancel: async ({ id }) => {
      const response = await fetch(`${jobSystem}/jobs/${encodeURIComponent(id)}`, { method: 'DELETE' });
      if (!response.ok && response.status !== 404) throw new RetryableError(`The job system answered ${response.status} to the cancel`);
    },
  });
  const done = Completion.safeParse(posted);
  if (!done.success) {
    const problems = done.error.issues
      .map(
        (issue) =>
          `${['result', ...issue.path].join('.')}: ${issue.code === 'invalid_type' ? `expected a ${issue.expected}` : issue.message}`,
      )
      .join('; ');
    throw new ToolError(
      `The job system called back with a completion of another shape (${problems}): it must post ` +
        `{"result": {"jobId": "<the job's id>", "output": "<text>"}} to the callback URL`,
    );
  }
  const message = `Job ${done.data.jobId} succeeded (called back): ${done.data.output}`;
  return { content: [{ type: 'text', text: message }], structuredContent: { jobId: done.data.jobId, output: done.data.output, message } };
}

/** What the job system posts as the callback's `result` when the job is done (an `error` instead fails the job). */
const Completion = z.object({ jobId: z.string().min(1), output: z.string() });

interface SubmittedJob {
  jobId: string;
  finishesAt: number;
  input: string;
}

async function submit(input: string, durationSeconds: number, now: number): Promise<SubmittedJob> {
  return { jobId: randomUUID(), finishesAt: now + durationSeconds * 1000, input };
}

async function checkStatus(job: SubmittedJob, now: number): Promise<{ state: 'running' | 'succeeded'; output?: string }> {
  if (now < job.finishesAt) return { state: 'running' };
  return { state: 'succeeded', output: `processed ${job.input.length} characters` };
}
