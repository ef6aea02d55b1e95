/**
 * The approvers' list on DynamoDB: one item per question for a person
 * waiting for a decision (`pk` = task id, `sk` = `person#<key>`), in the
 * list index ({@link LIST_INDEX}) under one list, `person-questions`,
 * ordered by when it was asked. The item is written after the write that
 * asks the question and deleted after the one that records its decision;
 * a task that ends otherwise (cancelled, failed, its wait expired) leaves
 * its items to their TTL (the wait's backstop), and a page shows only the
 * questions its rows still hold open, so a stale item is never listed.
 *
 * What it costs: per question for a person, one `PutItem` and one
 * `UpdateItem` of about 200 bytes (one write unit each) and their two index
 * writes. A page: one keys-only `Query` of at most `limit + 1` entries and
 * one eventually consistent `BatchGetItem` of their rows.
 */
import { ConditionalCheckFailedException, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { checkWaitingPage, openPersonQuestions, waitingForPerson, waitingSortKey } from '../approvals-decisions.ts';
import type { WaitingPage } from '../approvals-model.ts';
import type { TaskRecord } from '../model.ts';
import type { ListOptions } from '../store-types.ts';
import { fromItem, type Item, number, readString } from './codec.ts';
import { batchGet } from './results.ts';
import { LIST_INDEX, TABLE_KEYS, TASK_ROW_SK, TTL_ATTRIBUTE } from './schema.ts';
import type { StoreTable } from './update.ts';

/** The list of questions for a person waiting for a decision, in the list index. */
const WAITING_LIST = 'person-questions';

/** Sort-key prefix of a waiting question's item. */
const WAITING_SK_PREFIX = 'person#';

function waitingKey(taskId: string, key: string): Item {
  return { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: `${WAITING_SK_PREFIX}${key}` } };
}

/** Lists the open questions for a person of `task`, just written as asked at `now` (with `StorePolicy.approvals`). */
export async function listWaiting(table: StoreTable, task: TaskRecord, now: number): Promise<void> {
  if (!table.policy.approvals) return;
  for (const key of openPersonQuestions(task)) {
    await table.client.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: {
          ...waitingKey(task.taskId, key),
          [LIST_INDEX.partition]: { S: WAITING_LIST },
          [LIST_INDEX.sort]: { S: waitingSortKey(now, task.taskId, key) },
          ...(task.keptUntil === undefined ? {} : { [TTL_ATTRIBUTE]: number(Math.ceil(task.keptUntil / 1000)) }),
        },
      }),
    );
  }
}

/**
 * Takes the decided questions `keys` of `taskId` out of the list: one
 * `UpdateItem` each, removing the entry's list keys (so it leaves the index;
 * the small item itself goes with its TTL). An update, not a delete: the
 * console, which decides, may update the table but never delete from it. An
 * entry that is not there (never listed, or already taken out) is nothing
 * to remove.
 */
export async function unlistWaiting(table: StoreTable, taskId: string, keys: readonly string[] | undefined): Promise<void> {
  if (!table.policy.approvals || !keys?.length) return;
  for (const key of keys) {
    try {
      await table.client.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: waitingKey(taskId, key),
          UpdateExpression: 'REMOVE #list, #sort',
          ConditionExpression: 'attribute_exists(#list)',
          ExpressionAttributeNames: { '#list': LIST_INDEX.partition, '#sort': LIST_INDEX.sort },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/** `TaskStore.listWaitingForPeople` on `table`. */
export async function listWaitingPage(table: StoreTable, now: number, options: ListOptions): Promise<WaitingPage> {
  const { limit, after } = checkWaitingPage(options);
  const { Items = [] } = await table.client.send(
    new QueryCommand({
      TableName: table.tableName,
      IndexName: LIST_INDEX.name,
      KeyConditionExpression: after === undefined ? '#list = :list' : '#list = :list AND #sort > :after',
      ExpressionAttributeNames: { '#list': LIST_INDEX.partition, ...(after === undefined ? {} : { '#sort': LIST_INDEX.sort }) },
      ExpressionAttributeValues: { ':list': { S: WAITING_LIST }, ...(after === undefined ? {} : { ':after': { S: after } }) },
      ScanIndexForward: true,
      Limit: limit + 1,
    }),
  );
  const entries = Items.map((item) => ({
    taskId: readString(item, TABLE_KEYS.partition),
    key: readString(item, TABLE_KEYS.sort).slice(WAITING_SK_PREFIX.length),
    sort: readString(item, LIST_INDEX.sort),
  }));
  const page = entries.slice(0, limit);
  const ids = [...new Set(page.map((entry) => entry.taskId))];
  const rows = new Map<string, TaskRecord>();
  const keys = ids.map((taskId) => ({ [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } }));
  for (const item of await batchGet(table, keys, false)) rows.set(readString(item, TABLE_KEYS.partition), fromItem(item));
  const questions = page.flatMap(({ taskId, key }) => {
    const task = waitingForPerson(rows.get(taskId), now);
    return task && openPersonQuestions(task).includes(key) ? [{ task, key }] : [];
  });
  return { questions, ...(entries.length > limit ? { next: page.at(-1)!.sort } : {}) };
}
