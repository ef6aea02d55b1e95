/**
 * How the queues drive their functions: the SQS event source mappings'
 * settings. One source of truth for the CDK stack (`constructs/task-worker.ts`)
 * and the local stack (`bin/local/poller.ts` emulates the mappings with them), so
 * batching and concurrency are the same wherever the handlers run.
 *
 * No CDK import: the local stack loads this module too.
 */

/**
 * The task queue → worker mapping. Records of a batch run concurrently in one
 * invocation; a handful shares the invocation cost of waiting tools without
 * letting one slow task hold many others behind the same timeout.
 */
export const WORKER_BATCH_SIZE = 5;

/**
 * Concurrent worker invocations (batches in flight) unless the stack is told
 * otherwise (`-c workerMaxConcurrency=…`; SQS event sources allow 2–1000).
 */
export const DEFAULT_WORKER_MAX_CONCURRENCY = 10;

// The dead-letter queue has no event source mapping: the sweep schedule
// invokes its handler, which receives from the queue itself, deployed and
// locally alike (`constructs/sweep-schedule.ts`, `bin/local/background.ts`).
