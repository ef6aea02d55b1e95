/**
 * Following a run once it is started: what its end makes of the task, its
 * cancel (one cancel call, then `force-cancel` after a grace period), and,
 * where no webhook reaches (`npm start` on a laptop), a look at the run at
 * an interval.
 */
import type { GitHubApi, WorkflowRun } from './api.ts';
import { failedJobs, outcomeOf } from './conclusions.ts';

/** What a completed run's task ends with. */
export type RunEnd =
  | {
      kind: 'completed';
      result: { conclusion: string; url: string; durationSeconds: number; jobs: { name: string; conclusion: string | null }[] };
    }
  | { kind: 'failed'; message: string }
  | { kind: 'cancelled' }
  | { kind: 'ignored'; conclusion: string | null };

/**
 * The end of completed run `run`: the jobs call is made only for an end that
 * names them (a success's jobs, a failure's failed jobs).
 */
export async function endOfRun(api: GitHubApi, repository: string, run: WorkflowRun): Promise<RunEnd> {
  const outcome = outcomeOf(run.conclusion);
  if (outcome.kind === 'cancelled') return { kind: 'cancelled' };
  if (outcome.kind === 'ignored') return { kind: 'ignored', conclusion: run.conclusion };
  const jobs = (await api.jobs(repository, run.id)).map((job) => ({ name: job.name, conclusion: job.conclusion }));
  if (outcome.kind === 'failed') {
    const failed = failedJobs(jobs);
    const named = failed.length > 0 ? `: ${failed.join(', ')} failed` : '';
    return { kind: 'failed', message: `The run ended ${run.conclusion}${named} (${run.html_url})` };
  }
  const started = Date.parse(run.run_started_at ?? run.created_at);
  const durationSeconds = Math.max(0, Math.round((Date.parse(run.updated_at) - started) / 1000));
  return { kind: 'completed', result: { conclusion: 'success', url: run.html_url, durationSeconds, jobs } };
}

export interface CancelOptions {
  /** How long a cancelled run is given to stop before `force-cancel` (default 60 s). */
  graceMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Stops run `runId`: one cancel call, then, if it has not completed after the
 * grace period, `force-cancel`. Says whether it forced it. A run that has
 * ended already is left as it is (the API's 409).
 */
export async function cancelRun(
  api: GitHubApi,
  repository: string,
  runId: number,
  options: CancelOptions = {},
): Promise<{ forced: boolean }> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  await api.cancel(repository, runId);
  await sleep(options.graceMs ?? 60_000);
  const run = await api.run(repository, runId);
  if (run.status === 'completed') return { forced: false };
  await api.cancel(repository, runId, true);
  return { forced: true };
}

export interface PollOptions {
  /** The wait between two looks (`GITHUB_POLL_INTERVAL_SECONDS`). */
  intervalMs: number;
  sleep?: (ms: number) => Promise<void>;
  signal?: AbortSignal;
}

/** Looks at run `runId` every interval (one `GET` each) until it has completed; the local stack's follower. */
export async function pollUntilCompleted(api: GitHubApi, repository: string, runId: number, options: PollOptions): Promise<WorkflowRun> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (;;) {
    options.signal?.throwIfAborted();
    const run = await api.run(repository, runId);
    if (run.status === 'completed') return run;
    await sleep(options.intervalMs);
  }
}
