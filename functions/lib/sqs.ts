import { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../../shared/config.ts';
import { SqsTaskQueue } from '../../shared/queue/sqs-queue.ts';

/**
 * The task queue. Without a client, one is created that sends requests to
 * its own endpoint rather than the queue URL's host: on AWS the two are the
 * same origin (a no-op), while `AWS_ENDPOINT_URL_SQS` does not count as a
 * custom endpoint for the SDK's queue-URL rewrite, so an emulator's queue URL
 * (e.g. fauxqs' `sqs.us-east-1.localhost`) would otherwise win.
 */
export function sqsQueue(config: Config, client: SQSClient = new SQSClient({ useQueueUrlAsEndpoint: false })): SqsTaskQueue {
  return new SqsTaskQueue({ client, queueUrl: config.queueUrl });
}
