import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { hasApprovers } from '../../shared/auth/approvers.ts';
import type { Config } from '../../shared/config.ts';
import { listingOf } from '../../shared/console/mode.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb/index.ts';

/**
 * The task store on the configured table. Without a client, one is created
 * whose endpoint comes from the standard `AWS_ENDPOINT_URL_DYNAMODB` variable
 * when set, so the same entry runs against AWS and an emulator. New tasks are
 * listed for their owners when the console lists them (`listingOf`).
 */
export function dynamoDbStore(config: Config, client: DynamoDBClient = new DynamoDBClient({})): DynamoDbTaskStore {
  const listing = listingOf(config);
  // Questions for a person are listed for the approvers wherever approvers are named (their console lists them).
  const approvals = hasApprovers(config.approvers);
  return new DynamoDbTaskStore({
    client,
    tableName: config.tableName,
    policy: { ...config, ...(listing ? { listing } : {}), ...(approvals ? { approvals } : {}) },
  });
}
