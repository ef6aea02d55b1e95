/**
 * A task table of its own on an in-memory dynalite, for the DynamoDB store's
 * integration tests: the client, the commands each action sent, and the raw
 * items the store wrote (read around the store, strongly consistent).
 */

import { randomUUID } from 'node:crypto';
import { type AttributeValue, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTaskTable, type LocalDynamoDb, startDynalite } from '../../bin/local/dynamodb.ts';
import { TABLE_KEYS, TASK_ROW_SK } from '../../shared/tasks/dynamodb/index.ts';

export type Item = Record<string, AttributeValue>;

/** A fresh in-memory dynalite with the task table under a unique name. */
export async function localTable(): Promise<{ local: LocalDynamoDb; client: DynamoDBClient; tableName: string }> {
  const local = await startDynalite();
  const client = new DynamoDBClient({
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const tableName = `tasks-${randomUUID()}`;
  await ensureTaskTable(client, tableName);
  return { local, client, tableName };
}

/** What a table's tests read around the store. */
export interface TableProbe {
  /** Every command sent since the last `commandsOf`, with its output (or its error). */
  sent: Array<{ command: string; output: unknown }>;
  /** The commands `action` sent, in order (`Command` left off their names). */
  commandsOf(action: () => Promise<unknown>): Promise<string[]>;
  rawItem(pk: string, sk: string): Promise<Item | undefined>;
  /** A task's row, which must exist. */
  rawRow(taskId: string): Promise<Item>;
}

/** Records every command `client` sends, and reads `tableName`'s items raw. */
export function probeTable(client: DynamoDBClient, tableName: string): TableProbe {
  const sent: TableProbe['sent'] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args).catch((error: unknown) => {
        sent.push({ command: String(context.commandName), output: error });
        throw error;
      });
      sent.push({ command: String(context.commandName), output: result.output });
      return result;
    },
    { step: 'initialize', name: 'countCommands' },
  );
  const rawItem = async (pk: string, sk: string) => {
    const { Item } = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { [TABLE_KEYS.partition]: { S: pk }, [TABLE_KEYS.sort]: { S: sk } },
        ConsistentRead: true,
      }),
    );
    return Item;
  };
  return {
    sent,
    async commandsOf(action) {
      sent.length = 0;
      await action();
      return sent.map((entry) => entry.command.replace(/Command$/, ''));
    },
    rawItem,
    async rawRow(taskId) {
      const row = await rawItem(taskId, TASK_ROW_SK);
      if (!row) throw new Error(`no row for task ${taskId}`);
      return row;
    },
  };
}
