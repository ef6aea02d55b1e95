import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { errorName, withLogContext } from '../../shared/log.ts';
import { logTaskEnded, withMetrics } from '../../shared/metrics.ts';
import { parseTaskMessage } from '../../shared/queue/queue.ts';
import type { MessageSource } from '../../shared/queue/sqs-drain.ts';
import { EXHAUSTED_ERROR } from '../../shared/runtime/worker.ts';
import type { FunctionDeps } from '../lib/deps.ts';

/**
 * With an SQS event (an event source mapping, as the local stack runs it):
 * partial batch responses. With any other event (the sweep schedule, as
 * deployed): drains the dead-letter queue itself and reports how many
 * messages it handled; it fails, to be run again by the next schedule, when
 * any message could not be handled (that message stays in the queue, and its
 * age is what the dead-letter alarm watches).
 */
export interface DeadLetterHandler {
  (event: SQSEvent, context?: Pick<Context, 'awsRequestId'>): Promise<SQSBatchResponse>;
  (event?: unknown, context?: Pick<Context, 'awsRequestId'>): Promise<SQSBatchResponse | { drained: number }>;
}

/** Messages one scheduled run handles at most (10 per receive); the rest wait for the next run. */
const MAX_DRAINED_PER_RUN = 100;

/**
 * Dead-letter queue consumer: a task whose messages kept failing is marked
 * `failed` with a diagnostic `statusMessage` (spec item 48), so the client
 * stops polling a task that will never finish.
 *
 * Deployed, it has no event source mapping: the sweep schedule invokes it and
 * it receives from the queue itself (one request a minute when the queue is
 * empty), instead of a mapping's pollers long-polling an almost always empty
 * queue around the clock (see the cost section of docs/deploying.md).
 */
export function createDeadLetterHandler(
  deps: Pick<FunctionDeps, 'store' | 'log' | 'now'> & { deadLetters?: MessageSource },
): DeadLetterHandler {
  const { store, log } = deps;
  const now = deps.now ?? Date.now;

  /** Marks the message's task failed; false when that could not be done (the message must stay). */
  const handle = (messageId: string, body: string, requestId: string | undefined): Promise<boolean> =>
    withLogContext({ requestId, messageId }, async () => {
      const message = parseTaskMessage(body);
      if (!message) {
        log({ event: 'malformed-message' }); // nothing to mark failed
        return true;
      }
      const { taskId } = message;
      try {
        // A message dead-lettered while the task kept recording steps (runs that
        // died after useful work, each recovered by the sweeper) does not end
        // the task: the worker's attempt cap, which counts progress, decides.
        // That progress is credited once: the next message dead-lettered
        // without new steps ends the task.
        const steps = (await store.loadJournal(taskId)).size;
        const at = now();
        const changed = await store.fail(
          taskId,
          EXHAUSTED_ERROR,
          'The task failed repeatedly and was abandoned after its last attempt',
          at,
          { steps },
        );
        log(
          changed
            ? withMetrics({ event: 'dead-lettered', taskId, changed }, { TasksDeadLettered: 1 }, at)
            : { event: 'dead-lettered', taskId, changed, steps },
        );
        if (changed) logTaskEnded(log, { taskId }, 'failed', at);
        return true;
      } catch (error) {
        log({ event: 'dead-letter-error', taskId, error: errorName(error) });
        return false;
      }
    });

  return (async (event: unknown, context?: Pick<Context, 'awsRequestId'>) => {
    const records = (event as Partial<SQSEvent> | undefined)?.Records;
    if (Array.isArray(records)) {
      const failures: { itemIdentifier: string }[] = [];
      for (const record of records) {
        if (!(await handle(record.messageId, record.body, context?.awsRequestId))) failures.push({ itemIdentifier: record.messageId });
      }
      return { batchItemFailures: failures };
    }
    if (!deps.deadLetters) throw new Error('No dead-letter queue to drain');
    let drained = 0;
    let failed = 0;
    while (drained + failed < MAX_DRAINED_PER_RUN) {
      const batch = await deps.deadLetters.receive();
      if (batch.length === 0) break;
      const handled = [];
      for (const message of batch) {
        if (await handle(message.messageId, message.body, context?.awsRequestId)) handled.push(message);
        else failed += 1;
      }
      await deps.deadLetters.delete(handled);
      drained += handled.length;
      // A message that failed is received again only after its visibility timeout: stop here.
      if (handled.length < batch.length) break;
    }
    if (failed > 0) throw new Error(`${failed} dead-lettered message(s) could not be handled; they stay in the queue`);
    return { drained };
  }) as DeadLetterHandler;
}
