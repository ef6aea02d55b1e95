/**
 * A task's journal on DynamoDB: one checkpoint item per step
 * (`step#<name>`), in the task's partition, kept for `stepRetentionMs` by
 * the table's TTL. A step is written once: the first run to record it wins,
 * and later runs go on with its value.
 */
import { GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { StepRecord, StepToSave } from '../store-types.ts';
import { type Item, number, readString, stepSortKey, stepValue } from './codec.ts';
import { STEP_SK_PREFIX, TABLE_KEYS, TTL_ATTRIBUTE } from './schema.ts';
import { MAX_ATTEMPTS, putItem, type StoreTable } from './update.ts';

/** Every checkpoint of the task, by step name (strongly consistent, paged). */
export async function loadJournal(table: StoreTable, taskId: string): Promise<Map<string, StepRecord>> {
  const steps = new Map<string, StepRecord>();
  let startKey: Item | undefined;
  do {
    const page = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': TABLE_KEYS.partition, '#sk': TABLE_KEYS.sort },
        ExpressionAttributeValues: { ':pk': { S: taskId }, ':prefix': { S: STEP_SK_PREFIX } },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const position = item['position']?.N;
      steps.set(readString(item, TABLE_KEYS.sort).slice(STEP_SK_PREFIX.length), {
        value: stepValue(item),
        ...(position === undefined ? {} : { position: Number(position) }),
      });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return steps;
}

/**
 * Records step `name` of the task unless a checkpoint of it exists;
 * resolves to the value to go on with: `value`, or the one recorded first.
 */
export async function saveStep(table: StoreTable, taskId: string, { name, value, now, position }: StepToSave): Promise<unknown> {
  const stepKey = { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: stepSortKey(name) } };
  const text = JSON.stringify(value);
  const item: Item = {
    ...stepKey,
    [TTL_ATTRIBUTE]: number(Math.ceil((now + table.policy.stepRetentionMs) / 1000)),
    // `undefined` (a step that returns nothing) is stored as no `value` at all.
    ...(text === undefined ? {} : { value: { S: text } }),
    // Checkpoints written before positions existed have none: they replay by name only.
    ...(position === undefined ? {} : { position: number(position) }),
  };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    if (await putItem(table, item, 'attribute_not_exists(#sk)', { '#sk': TABLE_KEYS.sort })) return stepValue(item);
    // Another run recorded it first: its value is the one to go on with.
    const { Item: stored } = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: stepKey, ConsistentRead: true }),
    );
    if (stored) return stepValue(stored);
  }
  throw new Error(`Step ${name} of task ${taskId} could be neither written nor read`);
}
