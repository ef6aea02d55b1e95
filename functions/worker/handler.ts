import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseTaskMessage } from '../../shared/queue/queue.ts';
import { processTaskMessage } from '../../shared/runtime/worker.ts';
import { config } from '../lib/config.ts';
import { log } from '../lib/log.ts';
import { queue } from '../lib/queue.ts';
import { store } from '../lib/store.ts';
import { tools } from '../lib/tools.ts';

/**
 * SQS event source with partial batch responses: a record whose task should
 * run again is reported as failed and redelivered after the visibility
 * timeout; after `maxReceiveCount` it reaches the dead-letter queue.
 */
export async function handler(event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> {
  const remainingMs = context ? () => context.getRemainingTimeInMillis() : undefined;
  const results = await Promise.all(
    event.Records.map(async (record) => {
      const message = parseTaskMessage(record.body);
      if (!message) {
        log({ event: 'malformed-message', messageId: record.messageId });
        return 'done';
      }
      return processTaskMessage(message, { store, queue, tools, settings: config, log, remainingMs }).catch(() => 'retry' as const);
    }),
  );
  return {
    batchItemFailures: event.Records.filter((_, i) => results[i] === 'retry').map((record) => ({ itemIdentifier: record.messageId })),
  };
}
