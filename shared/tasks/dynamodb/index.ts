/**
 * The DynamoDB adapter of the task store, a wing of `shared/tasks/`: what the
 * functions, the local stack, the operator commands and the CDK stack use of
 * it. Nothing outside this folder imports its other files (the layout test
 * checks it): the store itself, the table's layout (keys, indexes, the TTL
 * attribute), and the readers of raw items that recovery and `ops` need.
 */
export { type ActiveIndexEntry, activeIndexEntries } from './active-index.ts';
export { activeShardOf, taskFromItem, taskRowBytes } from './codec.ts';
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
export { DynamoDbTaskStore } from './store.ts';
export { shardsOf } from './update.ts';
