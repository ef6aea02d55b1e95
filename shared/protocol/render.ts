import type { TaskRecord } from '../tasks/model.ts';

/** The `Task` fields every task-bearing message carries (spec §1.2). */
export function taskFields(task: TaskRecord) {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
}

/** The flat `CreateTaskResult` (spec §1.4): no `result`, `error` or `inputRequests`. */
export function createTaskResult(task: TaskRecord) {
  return { resultType: 'task' as const, ...taskFields(task) };
}

/** The `DetailedTask` of a `tasks/get` result (spec §1.3, items 16–20). */
export function detailedTask(task: TaskRecord) {
  const fields = taskFields(task);
  switch (task.status) {
    case 'input_required':
      return { ...fields, inputRequests: task.inputRequests };
    case 'completed':
      return { ...fields, result: task.result };
    case 'failed':
      return { ...fields, error: task.error };
    default:
      return fields;
  }
}
