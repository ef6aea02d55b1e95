/** The task queue on this stack's queue (SQS client only). */
import { SqsTaskQueue } from '../../shared/queue/sqs-queue.ts';
import { config } from './config.ts';
import { sqs } from './sqs-client.ts';

export const queue = new SqsTaskQueue({ client: sqs, queueUrl: config.queueUrl });
