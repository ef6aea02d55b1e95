import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { hasApprovers } from '../../shared/auth/approvers.ts';
import type { Config } from '../../shared/config.ts';
import { listingOf } from '../../shared/console/mode.ts';
import {
  answering,
  callbackCompletions,
  cancelling,
  creation,
  dynamoDbStoreOf,
  listing,
  reading,
  type StoreGroup,
  type StoreOf,
  steps,
  workflowReports,
} from '../../shared/tasks/dynamodb/index.ts';
import type { StorePolicy } from '../../shared/tasks/store-types.ts';

/**
 * The groups of store operations the task actions call (`ActionStore`):
 * every function that acts on tasks for a caller or an outside party
 * composes these, and the function's own.
 */
export const ACTION_GROUPS = [creation, reading, listing, steps, answering, cancelling, callbackCompletions, workflowReports] as const;

/**
 * The task store on the configured table, with the operations of `groups`
 * only (each function names the groups it calls, so its bundle carries no
 * other). Without a client, one is created whose endpoint comes from the
 * standard `AWS_ENDPOINT_URL_DYNAMODB` variable when set, so the same entry
 * runs against AWS and an emulator.
 */
export function dynamoDbStore<const G extends readonly StoreGroup[]>(
  config: Config,
  groups: G,
  client: DynamoDBClient = new DynamoDBClient({}),
): StoreOf<G> {
  return dynamoDbStoreOf({ client, tableName: config.tableName, policy: storePolicy(config) }, groups);
}

/** The store's policy from the configuration: new tasks are listed for their owners when the console lists them (`listingOf`). */
export function storePolicy(config: Config): StorePolicy {
  const listed = listingOf(config);
  // Questions for a person are listed for the approvers wherever approvers are named (their console lists them).
  const approvals = hasApprovers(config.approvers);
  return { ...config, ...(listed ? { listing: listed } : {}), ...(approvals ? { approvals } : {}) };
}
