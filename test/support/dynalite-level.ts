/**
 * A local stack's table kept on disk, reached while the stack is stopped:
 * through dynalite's API ({@link withTable}), and underneath it, through the
 * LevelDB where dynalite keeps each index's entries ({@link openLevel}). The
 * tests tear an index the way a SIGKILL inside dynalite does (it writes an
 * item and its index entries as separate operations): entries deleted, and
 * orphan entries kept after the API removed their items.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynalite } from '../../bin/local/dynamodb.ts';
import { REGION } from '../../bin/local/emulators.ts';
import { LOCAL_CREDENTIALS } from '../../bin/local/sqs.ts';

const require = createRequire(import.meta.url);

type Level = {
  iterator(options: { gte: string; lt: string }): AsyncIterable<[string, Record<string, unknown>]>;
  del(key: string): Promise<void>;
  put(key: string, value: unknown): Promise<void>;
  close(): Promise<void>;
};

/** dynalite's LevelDB under a stopped stack's data directory, and the entries of one index of the `tasks` table. */
export async function openLevel(
  dataDir: string,
  indexName: string,
): Promise<{ level: Level; entries(): Promise<Array<[string, Record<string, unknown>]>> }> {
  const db = require('dynalite/db/index.js') as { create(options: { path: string }): { db: Level } };
  const level = db.create({ path: join(dataDir, 'dynamodb') }).db;
  // dynalite keeps every entry of a global index in its LevelDB under this prefix.
  const prefix = `index-global~tasks~${indexName}~`;
  return {
    level,
    async entries() {
      const entries: Array<[string, Record<string, unknown>]> = [];
      for await (const entry of level.iterator({ gte: prefix, lt: `${prefix}\uffff` })) entries.push(entry);
      return entries;
    },
  };
}

/** Runs `fn` with a client of a dynalite on a stopped stack's data directory. */
export async function withTable<T>(dataDir: string, fn: (client: DynamoDBClient) => Promise<T>): Promise<T> {
  const dynamo = await startDynalite({ path: join(dataDir, 'dynamodb') });
  const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
  try {
    return await fn(client);
  } finally {
    client.destroy();
    await dynamo.close();
  }
}
