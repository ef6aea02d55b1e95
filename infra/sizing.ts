/**
 * How the defaults are sized together: the API stage's throttle follows the
 * worker's concurrency, so that the load the workers can carry is also let
 * through the API with the polling it brings, and no client of a default
 * deployment meets a 429 before the workers are full.
 *
 * No CDK import: the capacity model (`capacity.ts`) and the CLI read it too.
 */
import { WORKER_BATCH_SIZE } from './event-sources.ts';

/**
 * The workload the defaults are sized for, and the one `docs/capacity.md`
 * states the default deployment serves: short tasks (about a second of
 * work each) that the client polls ten times, no input rounds, no steps.
 */
export const REFERENCE_WORKLOAD = { taskSeconds: 1, pollsPerTask: 10 } as const;

/** The API requests one task of {@link REFERENCE_WORKLOAD} makes: its `tools/call` and its polls. */
const REQUESTS_PER_TASK = 1 + REFERENCE_WORKLOAD.pollsPerTask;

/**
 * The stage throttle for a worker concurrency, unless set explicitly
 * (`-c throttleRateLimit=…`): the tasks a second the workers finish at that
 * concurrency with full batches (`workerMaxConcurrency × WORKER_BATCH_SIZE`
 * tasks of {@link REFERENCE_WORKLOAD} at once), times the requests each
 * makes, rounded up to 50; the burst is twice the rate. 10 → 550 a second,
 * burst 1,100.
 */
export function throttleFor(workerMaxConcurrency: number): { rateLimit: number; burstLimit: number } {
  const tasksPerSecond = (workerMaxConcurrency * WORKER_BATCH_SIZE) / REFERENCE_WORKLOAD.taskSeconds;
  const rateLimit = Math.ceil((tasksPerSecond * REQUESTS_PER_TASK) / 50) * 50;
  return { rateLimit, burstLimit: 2 * rateLimit };
}
