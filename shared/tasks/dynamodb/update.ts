/**
 * The DynamoDB adapter's requests on single items: conditional puts and
 * updates (a failed condition is a `false`/`undefined`, a refused row a
 * {@link TaskRowRejectedError}), the update builder that turns a
 * {@link RowWrite} into an update expression, the guards and diffs the
 * port methods write with, and the minimal write that ends a task whose row
 * DynamoDB refused.
 */
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  type ReturnValue,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { BARE_INTERNAL_ERROR } from '../../wire.ts';
import { applyOutcome } from '../decisions.ts';
import type { JsonRpcErrorObject, TaskRecord } from '../model.ts';
import { withMoment } from '../moments.ts';
import type { Moment } from '../phases.ts';
import { TaskRowRejectedError } from '../store-errors.ts';
import type { StorePolicy } from '../store-types.ts';
import { type Item, listKeys, momentsValue, number, rowKey, toItem } from './codec.ts';
import { ACTIVE_INDEX, CLEARABLE, DEFAULT_ACTIVE_INDEX_SHARDS, EXPIRES_AT_MS, RESULT_REF, TABLE_KEYS, TTL_ATTRIBUTE } from './schema.ts';

/** The table a store works on, and the policy it was built with. */
export interface StoreTable {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly policy: StorePolicy;
}

/** The index shards a store's rows go to: the policy's, else the default. */
export function shardsOf(policy: Pick<StorePolicy, 'activeIndexShards'>): number {
  return policy.activeIndexShards ?? DEFAULT_ACTIVE_INDEX_SHARDS;
}

/** How often `answer`, `cancel`, `fail` and idempotent `create` re-read and retry after losing a race. */
export const MAX_ATTEMPTS = 5;

/**
 * The row, if absent: false when a row with this task id exists. The one
 * write of a row's list index keys (no later write changes them, so none
 * touches that index again).
 */
export function putRow(table: StoreTable, record: TaskRecord): Promise<boolean> {
  const item = { ...toItem(record, shardsOf(table.policy)), ...listKeys(record, table.policy) };
  return putItem(table, item, 'attribute_not_exists(#pk)', { '#pk': TABLE_KEYS.partition });
}

/** One conditional `PutItem`; false when the condition failed. */
export async function putItem(
  table: StoreTable,
  item: Item,
  condition: string,
  names: Record<string, string>,
  values?: Item,
): Promise<boolean> {
  try {
    await table.client.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: item,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw rejection(error, item[TABLE_KEYS.partition]?.S ?? '');
  }
}

/** One conditional `UpdateItem` of any item; false when the condition failed. */
export async function updateItem(
  table: StoreTable,
  key: Item,
  update: {
    UpdateExpression: string;
    ConditionExpression?: string;
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues: Item;
  },
): Promise<boolean> {
  try {
    await table.client.send(new UpdateItemCommand({ TableName: table.tableName, Key: key, ...update }));
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * One conditional `UpdateItem` of the task row that also increments
 * `version`. Resolves to the returned attributes (`{}` without
 * `returnValues`), or `undefined` when the condition failed.
 */
export async function updateRow(table: StoreTable, taskId: string, write: RowWrite): Promise<Item | undefined> {
  const set = Object.entries(write.set ?? {});
  const assignments = [...set.map(([name]) => `#${name} = :${name}`), ...(write.setExpressions ?? [])];
  const clauses = [
    assignments.length > 0 ? `SET ${assignments.join(', ')}` : '',
    write.remove?.length ? `REMOVE ${write.remove.map((name) => `#${name}`).join(', ')}` : '',
    `ADD ${['version', ...(write.increment ?? [])].map((name) => `#${name} :one`).join(', ')}`,
  ];
  const updateExpression = clauses.filter(Boolean).join(' ');
  const values: Item = { ':one': number(1), ...write.values };
  for (const [name, value] of set) {
    if (`:${name}` in values) throw new Error(`Value placeholder clash: :${name}`);
    values[`:${name}`] = value;
  }
  try {
    const { Attributes } = await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: rowKey(taskId),
        UpdateExpression: updateExpression,
        ConditionExpression: write.condition,
        ExpressionAttributeNames: attributeNames(updateExpression, write.condition),
        ExpressionAttributeValues: values,
        ReturnValues: write.returnValues ?? 'NONE',
      }),
    );
    return Attributes ?? {};
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw rejection(error, taskId);
  }
}

/** A conditional update of the task row, by attribute name (placeholders are derived from the names). */
export interface RowWrite {
  /** `SET #name = :name` for each entry. */
  set?: Item;
  /** Further `SET` assignments, written out (their values go in `values`). */
  setExpressions?: readonly string[];
  remove?: readonly string[];
  /** Counters incremented by one besides `version`, which every write increments. */
  increment?: readonly string[];
  /** Attribute names are written `#name`; values are passed in `values`. */
  condition: string;
  values?: Item;
  returnValues?: ReturnValue;
}

/** The condition of every write made under a lease: the `leaseHeld` rule of `predicates.ts` (still ours, and the task not terminal). */
export function leaseHeldBy(leaseOwner: string, extraValues: Item = {}): Pick<RowWrite, 'condition' | 'values'> {
  return {
    condition: '#leaseOwner = :leaseOwner AND #status IN (:working, :input_required)',
    values: { ':leaseOwner': { S: leaseOwner }, ':working': { S: 'working' }, ':input_required': { S: 'input_required' }, ...extraValues },
  };
}

/**
 * The attribute writes that turn row `before` into row `after`: attributes
 * that differ (or are `forced`) are set, optional ones `after` lacks are
 * removed. `version` is left to the write, which increments it.
 */
export function changes(
  before: TaskRecord,
  after: TaskRecord,
  shards: number,
  forced: readonly string[] = [],
): { set: Item; remove: string[] } {
  const old = toItem(before, shards);
  const next = toItem(after, shards);
  const set: Item = {};
  for (const [name, value] of Object.entries(next)) {
    if (name === 'version' || name === TABLE_KEYS.partition || name === TABLE_KEYS.sort) continue;
    if (forced.includes(name) || JSON.stringify(old[name]) !== JSON.stringify(value)) set[name] = value;
  }
  const remove = CLEARABLE.filter((name) => !(name in next));
  return { set, remove };
}

/** `ExpressionAttributeNames` for every `#name` the expressions use (DynamoDB rejects unused ones). */
function attributeNames(...expressions: string[]): Record<string, string> {
  const names: Record<string, string> = {};
  for (const [placeholder, name] of expressions.join(' ').matchAll(/#(\w+)/g)) names[placeholder] = name!;
  return names;
}

export function backoff(round: number, jitter = false): Promise<void> {
  const ceiling = Math.min(1000, 25 * 2 ** round);
  return new Promise((resolve) => setTimeout(resolve, jitter ? Math.random() * ceiling : ceiling));
}

/** The error a task ends with when DynamoDB refuses its row. */
export const ROW_REJECTED_ERROR = BARE_INTERNAL_ERROR;

/**
 * DynamoDB's refusal of a write as a domain error: `ValidationException`
 * (item too large, or an invalid value) can never succeed on a retry.
 */
function rejection(error: unknown, taskId: string): unknown {
  if (!(error instanceof Error) || error.name !== 'ValidationException') return error;
  return new TaskRowRejectedError(taskId, /item size/i.test(error.message) ? 'size' : 'validation', { cause: error });
}

/** The `statusMessage` of a task ended through the minimal write. */
export function rejectedMessage(error: TaskRowRejectedError, when: string): string {
  return error.reason === 'size'
    ? `The task row reached DynamoDB's item size limit when ${when}: its arguments and answers were removed to record this ending`
    : `DynamoDB rejected the task row when ${when}: its arguments and answers were removed to record this ending`;
}

/** How a task ends through the minimal write: `failed` with an error, or `cancelled`. */
export type MinimalOutcome = { status: 'failed'; error: JsonRpcErrorObject } | { status: 'cancelled' };

/**
 * The smallest write that ends `task` with `outcome`: status, error and
 * message, the TTL attributes, and the client's bulky attributes
 * (arguments, answers, capabilities, outstanding requests, any result)
 * replaced by empty values, which only ever shrinks the row; the lease and
 * the index keys are removed. For when DynamoDB refused the regular write;
 * the caller adds the guard.
 */
export function minimalEnd(
  task: TaskRecord,
  outcome: MinimalOutcome,
  statusMessage: string,
  now: number,
  policy: StorePolicy,
): Pick<RowWrite, 'set' | 'remove'> {
  const slim = { ...task, arguments: {}, inputResponses: {}, clientCapabilities: {} } as TaskRecord;
  const next = applyOutcome(slim, { ...outcome, statusMessage }, now, policy.retentionMs);
  const item = toItem(next, shardsOf(policy));
  const set: Item = {};
  for (const name of [
    'status',
    'statusMessage',
    'finalMessage',
    'error',
    'arguments',
    'inputResponses',
    'clientCapabilities',
    // Without its tokens (`applyOutcome` drops them at the end).
    'workflow',
    'moments',
    'lastUpdatedAt',
    'ttlMs',
    TTL_ATTRIBUTE,
    EXPIRES_AT_MS,
  ]) {
    if (item[name]) set[name] = item[name];
  }
  return {
    set,
    remove: ['leaseOwner', 'leaseUntil', 'inputRequests', 'result', RESULT_REF, ACTIVE_INDEX.sort, ACTIVE_INDEX.partition],
  };
}

/**
 * The `SET` of a moment written without a read: appended to the row's list
 * as it is, or, given the moments the run claimed (only the lease holder adds
 * moments while it holds the lease), the list that follows them, folded past
 * the budget (`withMoment`).
 */
export function momentWrite(
  moment: Moment,
  claimed: { createdAt: number; moments?: readonly Moment[] } | undefined,
): Pick<RowWrite, 'set' | 'setExpressions' | 'values'> {
  if (claimed) return { set: { moments: momentsValue(withMoment(claimed, moment)) } };
  return appendMoment(moment);
}

/** The `SET` that appends `moment` to the row's list as it is (rows without one start it). */
export function appendMoment(moment: Moment): Required<Pick<RowWrite, 'setExpressions' | 'values'>> {
  return {
    setExpressions: ['#moments = list_append(if_not_exists(#moments, :noMoments), :moment)'],
    values: { ':noMoments': { L: [] }, ':moment': momentsValue([moment]) },
  };
}

/** Guard of a write on the version read (as `#rewrite`'s own writes). */
export function versionOf(task: TaskRecord): Pick<RowWrite, 'condition' | 'values'> {
  return {
    condition: '#version = :readVersion AND #status = :readStatus',
    values: { ':readVersion': number(task.version), ':readStatus': { S: task.status } },
  };
}
