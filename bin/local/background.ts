/**
 * What runs without a request: the worker's event source (a poller standing
 * in for the SQS event source mapping) and the sweep timer, which runs the
 * sweeper and drains the dead-letter queue as the deployed sweep schedule does.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DeadLetterHandler } from '../../functions/dlq/app.ts';
import type { SweeperHandler } from '../../functions/sweeper/app.ts';
import type { WorkerHandler } from '../../functions/worker/app.ts';
import { WORKER_BATCH_SIZE } from '../../infra/event-sources.ts';
import { errorName, type Log } from '../../shared/log.ts';
import { REGION } from './emulators.ts';
import type { TrackedLeases } from './leases.ts';
import { type Poller, startPoller } from './poller.ts';
import type { LocalSqs } from './sqs.ts';

/** The worker's event source: its poller, and the stop that drains it. */
export interface WorkerSource {
  poller: Poller;
  /** Gives the batches still running `drainMs` to finish, then hands back the tasks still running. */
  stop(): Promise<void>;
}

/**
 * Starts polling the task queue for the worker: up to `maxConcurrency`
 * batches of {@link WORKER_BATCH_SIZE} records at once, as the deployed
 * event source runs it.
 */
export function startWorkerSource(options: {
  client: SQSClient;
  sqs: LocalSqs;
  handler: WorkerHandler;
  maxConcurrency: number;
  leases: TrackedLeases;
  drainMs: number;
  log: Log;
}): WorkerSource {
  const { log } = options;
  const poller = startPoller({
    client: options.client,
    queueUrl: options.sqs.queueUrl,
    queueArn: options.sqs.queueArn,
    region: REGION,
    handler: options.handler,
    batchSize: WORKER_BATCH_SIZE,
    maxConcurrency: options.maxConcurrency,
    log,
  });
  return {
    poller,
    // Batches still running at shutdown get `drainMs` to finish; the tasks
    // still running then are handed back (lease released, due at once), so
    // the next start finds them free. Their runs go on until the process
    // ends, and every write they make after that fails on the lease.
    async stop() {
      await withTimeout(poller.stop(), options.drainMs);
      await options.leases.handBack(Date.now(), log);
    },
  };
}

/**
 * The scheduled sweeper and dead-letter drain: once now (the sweeper finds
 * nothing the start-up recovery did not take), then every `intervalMs`.
 * Resolves after the first run to the timer's stop; a run's failures are
 * logged, never thrown.
 */
export async function startSweeps(options: {
  sweeper: SweeperHandler;
  deadLetter: DeadLetterHandler;
  intervalMs: number;
  log: Log;
}): Promise<() => Promise<void>> {
  const { sweeper, deadLetter, log } = options;
  const runSweeper = () =>
    Promise.all([
      sweeper().then(
        ({ requeued, expired }) => (requeued > 0 || expired > 0) && log({ event: 'sweep', requeued, expired }),
        (error: unknown) => log({ event: 'sweep-error', error: errorName(error) }),
      ),
      deadLetter({}).catch((error: unknown) => log({ event: 'dead-letter-drain-error', error: errorName(error) })),
    ]);
  await runSweeper();
  const sweepTimer = setInterval(runSweeper, options.intervalMs);
  return async () => clearInterval(sweepTimer);
}

async function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
