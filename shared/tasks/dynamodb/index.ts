/**
 * The DynamoDB adapter of the task store, a wing of `shared/tasks/`: what the
 * functions, the local stack, the operator commands and the CDK stack use of
 * it. Nothing outside this folder imports its other files (the layout test
 * checks it): the store itself, the table's layout (keys, indexes, the TTL
 * attribute), and the readers of raw items that recovery and `ops` need.
 * A function composes the groups of operations it calls (`dynamoDbStoreOf`),
 * so that its bundle carries those only.
 */
export { type ActiveIndexEntry, activeIndexEntries } from './active-index.ts';
export { callbackCompletions, callbackWaits } from './callbacks.ts';
export { activeShardOf, taskFromItem, taskRowBytes } from './codec.ts';
export { creation } from './creation.ts';
export { failing, leases } from './leases.ts';
export { answering, cancelling } from './people.ts';
export { listing, reading, steps } from './reads.ts';
export {
  ACTIVE_INDEX,
  activeShards,
  DEFAULT_ACTIVE_INDEX_SHARDS,
  IDEMPOTENCY_GRACE_MS,
  IDEMPOTENCY_PK_PREFIX,
  IDEMPOTENCY_SK,
  LIST_INDEX,
  MAX_ACTIVE_INDEX_SHARDS,
  RESULT_CHUNK_BYTES,
  RESULT_SK_PREFIX,
  STEP_SK_PREFIX,
  TABLE_KEYS,
  TASK_ROW_SK,
  TTL_ATTRIBUTE,
} from './schema.ts';
export { dynamoDbSignInNames as signInNames } from './sign-in-names.ts';
export { dynamoDbSignOuts as signOuts } from './sign-outs.ts';
export { type DynamoDbStoreOptions, DynamoDbTaskStore, dynamoDbStoreOf, type StoreGroup, type StoreOf } from './store.ts';
export { sweeping } from './sweeps.ts';
export { shardsOf } from './update.ts';
export { workflowReports, workflowRuns } from './workflows.ts';
