/**
 * The task table's physical layout, shared by the DynamoDB adapter, the local
 * stack (which creates the table) and the CDK stack (which declares it).
 *
 * One table: `pk` = task id; `sk` = `task` for the task row itself (later
 * item kinds of a task use other sort keys). `expiresAt` (epoch seconds) is
 * the table's TTL attribute; DynamoDB deletes lazily, so every read also
 * checks it.
 */
export const TABLE_KEYS = { partition: 'pk', sort: 'sk' } as const;
export const TTL_ATTRIBUTE = 'expiresAt';
export const TASK_ROW_SK = 'task';

/**
 * Sparse index of non-terminal tasks, for the sweeper: only rows that carry
 * `activeShard` appear in it (the attribute is removed when a task ends), so
 * finding stuck work never scans the table. `sweepAt` (epoch ms) orders rows
 * by when they are next due for a look.
 */
export const ACTIVE_INDEX = { name: 'active-tasks', partition: 'activeShard', sort: 'sweepAt' } as const;
