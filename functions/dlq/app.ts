import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { errorName, withLogContext } from '../../shared/log.ts';
import { parseTaskMessage } from '../../shared/queue/queue.ts';
import { EXHAUSTED_ERROR } from '../../shared/runtime/worker.ts';
import type { FunctionDeps } from '../lib/deps.ts';

export type DeadLetterHandler = (event: SQSEvent, context?: Pick<Context, 'awsRequestId'>) => Promise<SQSBatchResponse>;

/**
 * Dead-letter queue consumer: a task whose messages kept failing is marked
 * `failed` with a diagnostic `statusMessage` (spec item 48), so the client
 * stops polling a task that will never finish.
 */
export function createDeadLetterHandler(deps: Pick<FunctionDeps, 'store' | 'log' | 'now'>): DeadLetterHandler {
  const { store, log } = deps;
  const now = deps.now ?? Date.now;
  return async (event, context) => {
    const failures: { itemIdentifier: string }[] = [];
    for (const record of event.Records) {
      await withLogContext({ requestId: context?.awsRequestId, messageId: record.messageId }, async () => {
        const message = parseTaskMessage(record.body);
        if (!message) return log({ event: 'malformed-message' }); // nothing to mark failed
        const { taskId } = message;
        try {
          const changed = await store.fail(taskId, EXHAUSTED_ERROR, 'The task failed repeatedly and was abandoned after its last attempt', now());
          log({ event: 'dead-lettered', taskId, changed });
          if (changed) log({ event: 'task-ended', taskId, status: 'failed' });
        } catch (error) {
          log({ event: 'dead-letter-error', taskId, error: errorName(error) });
          failures.push({ itemIdentifier: record.messageId });
        }
      });
    }
    return { batchItemFailures: failures };
  };
}
