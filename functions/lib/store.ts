/** The task store on this stack's table (DynamoDB client only). */
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb-store.ts';
import { config } from './config.ts';
import { dynamodb } from './dynamodb-client.ts';

export const store = new DynamoDbTaskStore({ client: dynamodb, tableName: config.tableName, policy: config });
