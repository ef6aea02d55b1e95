import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { TABLE_KEYS } from '../../shared/tasks/dynamodb-schema.ts';

/** A running dynalite (DynamoDB API) on 127.0.0.1. */
export interface LocalDynamoDb {
  endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite in this process. With `path`, data is kept on disk (LevelDB)
 * and survives a restart; without it, data lives in memory.
 */
export async function startDynalite(options: { path?: string; port?: number } = {}): Promise<LocalDynamoDb> {
  const server: Server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.path ? { path: options.path } : {}) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Creates the task table if it does not exist. The key schema is the one the
 * CDK stack declares. dynalite has no TTL support (UpdateTimeToLive is
 * unknown to it), which is harmless: every read checks `expiresAt` itself.
 */
export async function ensureTaskTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: TABLE_KEYS.partition, AttributeType: 'S' },
          { AttributeName: TABLE_KEYS.sort, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
          { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await client.send(new DescribeTableCommand({ TableName: tableName }));
}
