import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { ACTIVE_INDEX, LIST_INDEX, TABLE_KEYS } from '../../shared/tasks/dynamodb/index.ts';

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
  const server: Server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(options.path ? { path: options.path } : {}),
  });
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
 * Creates the task table if it does not exist: the key schema, the sparse
 * active-task index and the list index (both keys only) that the CDK stack declares. dynalite has no
 * TTL support (UpdateTimeToLive is unknown to it), which is harmless: reads
 * decide expiry themselves (a task row from `createdAt + ttlMs`, an
 * idempotency key from its `expiresAt`). dynalite cannot add an index to an existing
 * table either, so a table kept on disk from before an index existed is
 * reported rather than silently used without it.
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
          { AttributeName: ACTIVE_INDEX.partition, AttributeType: 'S' },
          { AttributeName: ACTIVE_INDEX.sort, AttributeType: 'N' },
          { AttributeName: LIST_INDEX.partition, AttributeType: 'S' },
          { AttributeName: LIST_INDEX.sort, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
          { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: ACTIVE_INDEX.name,
            KeySchema: [
              { AttributeName: ACTIVE_INDEX.partition, KeyType: 'HASH' },
              { AttributeName: ACTIVE_INDEX.sort, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
          {
            IndexName: LIST_INDEX.name,
            KeySchema: [
              { AttributeName: LIST_INDEX.partition, KeyType: 'HASH' },
              { AttributeName: LIST_INDEX.sort, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const { Table: table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  for (const name of [ACTIVE_INDEX.name, LIST_INDEX.name]) {
    if (!table?.GlobalSecondaryIndexes?.some((index) => index.IndexName === name)) {
      throw new Error(`Table ${tableName} has no ${name} index (it predates it): delete the local data directory to recreate it`);
    }
  }
}
