import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { withLogContext } from '../../shared/log.ts';
import type { MessageSource } from '../../shared/queue/sqs-drain.ts';
import { type DeadLetterDeps, handleDeadLetter } from '../../shared/runtime/dead-letter.ts';
import type { FunctionDeps } from '../lib/deps.ts';
import { lifecycleEvents } from '../lib/events.ts';

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
 * Dead-letter queue consumer: hands each message to the dead-letter policy
 * (`handleDeadLetter` in `shared/runtime/dead-letter.ts`: a task whose
 * messages kept failing is marked `failed`), from an SQS event's records or
 * from its own receives.
 *
 * Deployed, it has no event source mapping: the sweep schedule invokes it and
 * it receives from the queue itself (one request a minute when the queue is
 * empty), instead of a mapping's pollers long-polling an almost always empty
 * queue around the clock (see the cost section of docs/deploying.md).
 */
export function createDeadLetterHandler(
  deps: Pick<FunctionDeps<DeadLetterDeps['store']>, 'store' | 'log' | 'now' | 'eventPublisher'> & { deadLetters?: MessageSource },
): DeadLetterHandler {
  const events = lifecycleEvents(deps);
  const policy = { ...deps, ...(events ? { events } : {}) };
  /** Hands one message to the policy, in its log context; false when it must stay in the queue. */
  const handle = (messageId: string, body: string, requestId: string | undefined): Promise<boolean> =>
    withLogContext({ requestId, messageId }, () => handleDeadLetter(policy, body));

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
