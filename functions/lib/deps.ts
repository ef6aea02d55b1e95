/**
 * The composition root shared by the Lambda entry points: configuration read
 * once, AWS clients created once per execution environment, adapters wired.
 * Endpoints come from the standard `AWS_ENDPOINT_URL_DYNAMODB` /
 * `AWS_ENDPOINT_URL_SQS` variables when set (the local stack does), so the
 * same code runs against AWS and against the emulators.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadConfig } from '../../shared/config.ts';
import { SqsTaskQueue } from '../../shared/queue/sqs-queue.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb-store.ts';
import { toolCatalogue } from '../tools/index.ts';

export const config = loadConfig();
export const dynamodb = new DynamoDBClient({});
// Requests go to the client's endpoint, not to the QueueUrl's host: on AWS the
// two are the same origin (this is a no-op), while `AWS_ENDPOINT_URL_SQS` does
// not count as a custom endpoint for the SDK's QueueUrl rewrite, so emulator
// queue URLs (e.g. fauxqs' `sqs.us-east-1.localhost`) would otherwise win.
export const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
export const store = new DynamoDbTaskStore({ client: dynamodb, tableName: config.tableName, policy: config });
export const queue = new SqsTaskQueue({ client: sqs, queueUrl: config.queueUrl });
export const tools = toolCatalogue(config.toolset);

/** One JSON log line. Callers pass ids and outcomes only, never arguments, answers or tokens. */
export function log(event: Record<string, unknown>): void {
  console.log(JSON.stringify(event));
}
