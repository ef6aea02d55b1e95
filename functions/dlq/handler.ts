import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseTaskMessage } from '../../shared/queue/queue.ts';
import { EXHAUSTED_ERROR } from '../../shared/runtime/worker.ts';
import { log } from '../lib/log.ts';
import { store } from '../lib/store.ts';

/**
 * Dead-letter queue consumer: a task whose messages kept failing is marked
 * `failed` with a diagnostic `statusMessage` (spec item 48), so the client
 * stops polling a task that will never finish.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const failures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    const message = parseTaskMessage(record.body);
    if (!message) continue; // nothing to mark failed
    const { taskId } = message;
    try {
      const changed = await store.fail(taskId, EXHAUSTED_ERROR, 'The task failed repeatedly and was abandoned after its last attempt', Date.now());
      log({ event: 'dead-lettered', taskId, changed });
      if (changed) log({ event: 'task-ended', taskId, status: 'failed' });
    } catch {
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
