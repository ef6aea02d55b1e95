/**
 * How a completed run ends its task: a pure table from the run's
 * `conclusion`, tested as one.
 */

/** What a completed run means for its task. */
export type RunOutcome =
  | { kind: 'completed' }
  | { kind: 'failed' }
  | { kind: 'cancelled' }
  /** Not an end this server acts on (`neutral`, `skipped`, `stale`, none): logged and left. */
  | { kind: 'ignored' };

const OUTCOMES: Readonly<Record<string, RunOutcome['kind']>> = {
  success: 'completed',
  failure: 'failed',
  timed_out: 'failed',
  startup_failure: 'failed',
  action_required: 'failed',
  cancelled: 'cancelled',
};

/** The outcome of a run that ended with `conclusion`. */
export function outcomeOf(conclusion: string | null | undefined): RunOutcome {
  const kind = conclusion ? OUTCOMES[conclusion] : undefined;
  return { kind: kind ?? 'ignored' };
}

/** A job as the jobs call lists it. */
export interface JobConclusion {
  name: string;
  conclusion: string | null;
}

/** The jobs that did not succeed (nor were skipped), by name: what a failed run's tool error names. */
export function failedJobs(jobs: readonly JobConclusion[]): string[] {
  return jobs
    .filter((job) => job.conclusion !== null && !['success', 'skipped', 'neutral'].includes(job.conclusion))
    .map((job) => job.name);
}
