/**
 * The DynamoDB store's operations of the sweeper: the due tasks from the
 * sparse active index, their rescheduling (a blind write under the
 * `isDueToRun` rule) and the end of a wait for input past its deadline.
 */
import { decideExpireWait } from '../decisions.ts';
import type { TaskStore } from '../store.ts';
import { activeIndexEntries } from './active-index.ts';
import { number } from './codec.ts';
import { rewriteRow } from './rewrite.ts';
import { activeShards } from './schema.ts';
import { type StoreTable, shardsOf, updateRow } from './update.ts';

/** `findDue`, `reschedule` and `expireWait` on `table`. */
export function sweeping(table: StoreTable): Pick<TaskStore, 'findDue' | 'reschedule' | 'expireWait'> {
  return {
    async findDue(now, limit) {
      if (limit <= 0) return [];
      // Every shard of the current count: by the names' prefix stability, also every shard a smaller earlier count wrote.
      const shards = activeShards(shardsOf(table.policy));
      const due = (await Promise.all(shards.map((shard) => activeIndexEntries(table, shard, { upTo: now, limit })))).flat();
      return due
        .sort((a, b) => a.sweepAt - b.sweepAt)
        .slice(0, limit)
        .map((entry) => entry.taskId);
    },
    async reschedule(taskId, now, nextAt) {
      // A blind write of what `decideReschedule` decides; the condition is the
      // `isDueToRun` rule (a row has `activeShard` exactly when it has `sweepAt`;
      // waiting tasks are on the index too, at their wait's deadline).
      const item = await updateRow(table, taskId, {
        set: { sweepAt: number(nextAt) },
        condition: 'attribute_exists(#activeShard) AND #sweepAt <= :now AND #status = :working',
        values: { ':now': number(now), ':working': { S: 'working' } },
      });
      return item !== undefined;
    },
    expireWait: (taskId, { error, statusMessage, now }) =>
      rewriteRow(table, taskId, (task) => decideExpireWait(task, error, statusMessage, now, table.policy)),
  };
}
