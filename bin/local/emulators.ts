/**
 * The emulators the local stack runs on, and their clients: dynalite (on disk)
 * for DynamoDB with the task table, fauxqs (in memory) for the task queue and
 * its dead-letter queue.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Cleanup } from './cleanup.ts';
import { ensureTaskTable, startDynalite } from './dynamodb.ts';
import { LOCAL_CREDENTIALS, type LocalSqs, localSqsClient, startLocalSqs } from './sqs.ts';

/** The region the emulators and their clients use. */
export const REGION = 'us-east-1';

/** What {@link startEmulators} needs: where the table lives and how the task queue redelivers. */
export interface EmulatorOptions {
  /** The directory dynalite keeps the table in. */
  dbPath: string;
  tableName: string;
  maxReceiveCount: number;
  visibilityTimeoutSeconds: number;
  /** dynalite's and fauxqs' ports (default: free ones). */
  ports?: { dynamodb?: number; sqs?: number };
}

/** The running emulators and the clients the stack talks to them with. */
export interface Emulators {
  /** The functions' DynamoDB client. */
  dynamodb: DynamoDBClient;
  /** The task queue and its dead-letter queue. */
  sqs: LocalSqs;
  /** The functions' SQS client. */
  functionsSqs: SQSClient;
  /** The event source mappings' own SQS client, not the functions'. */
  pollerSqs: SQSClient;
  endpoints: { dynamodb: string; sqs: string };
}

/**
 * Starts dynalite with the task table (created if missing) and fauxqs with
 * the queues, and makes their clients; registers each one's stop with
 * `cleanup` as soon as it is started.
 */
export async function startEmulators(options: EmulatorOptions, cleanup: Cleanup): Promise<Emulators> {
  const dynamo = await startDynalite({
    path: options.dbPath,
    ...(options.ports?.dynamodb !== undefined ? { port: options.ports.dynamodb } : {}),
  });
  cleanup.push(dynamo.close);
  // The emulators ignore credentials, but the SDK's signing needs some.
  const dynamodb = new DynamoDBClient({ endpoint: dynamo.endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
  cleanup.push(async () => dynamodb.destroy());
  await ensureTaskTable(dynamodb, options.tableName);

  const sqs = await startLocalSqs({
    region: REGION,
    maxReceiveCount: options.maxReceiveCount,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    ...(options.ports?.sqs !== undefined ? { port: options.ports.sqs } : {}),
  });
  cleanup.push(sqs.close);
  const functionsSqs = localSqsClient(sqs.endpoint, REGION);
  const pollerSqs = localSqsClient(sqs.endpoint, REGION);
  cleanup.push(async () => {
    functionsSqs.destroy();
    pollerSqs.destroy();
  });
  return { dynamodb, sqs, functionsSqs, pollerSqs, endpoints: { dynamodb: dynamo.endpoint, sqs: sqs.endpoint } };
}
