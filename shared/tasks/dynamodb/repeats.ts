/**
 * Runs of a repeated call: when a later run ends, its window's first run
 * (the head) counts it, so the call's next run goes under the next id
 * without probing the ended ones (`TaskActions.createOrJoin`).
 */
import type { TaskRecord } from '../model.ts';
import { number, rowKey } from './codec.ts';
import { TABLE_KEYS } from './schema.ts';
import { type StoreTable, updateItem } from './update.ts';

/**
 * Counts `task`'s end on its head's row, if it is a later run of a repeated
 * call: `runsEnded` becomes at least its number plus one (one write; a head
 * gone, or already counting it, is left alone). Idempotent, so a retried end
 * counts once. Nothing else on the head changes: its `version` stays.
 */
export async function countRunEnded(table: StoreTable, task: Pick<TaskRecord, 'repeat'>): Promise<void> {
  if (task.repeat === undefined) return;
  await updateItem(table, rowKey(task.repeat.head), {
    UpdateExpression: 'SET #runsEnded = :ended',
    ConditionExpression: 'attribute_exists(#pk) AND (attribute_not_exists(#runsEnded) OR #runsEnded < :ended)',
    ExpressionAttributeNames: { '#runsEnded': 'runsEnded', '#pk': TABLE_KEYS.partition },
    ExpressionAttributeValues: { ':ended': number(task.repeat.run + 1) },
  });
}
