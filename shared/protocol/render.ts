import type { TaskSettings } from '../config.ts';
import { isTerminal, type TaskRecord } from '../tasks/model.ts';
import { statusMessageOf } from '../tasks/status-message.ts';
import { renderedTtlMs } from '../tasks/ttl.ts';

/** What rendering needs besides the task: the clock and the timing policy. */
export interface RenderContext {
  now: number;
  config: Pick<TaskSettings, 'retentionMs' | 'pollIntervalMs' | 'maxPollIntervalMs'>;
}

/**
 * The suggested poll interval: short while a task is young, growing with its
 * age (a tenth of it) up to a ceiling. Most polling happens on long tasks,
 * so this is the biggest lever on what polling costs. A task suspended on
 * callbacks gets the ceiling at once (but one following a workflow's execution).
 */
export function pollIntervalMs(task: TaskRecord, { now, config }: RenderContext): number {
  if (isTerminal(task.status)) return config.maxPollIntervalMs;
  const floor = Math.max(task.pollIntervalMs, config.pollIntervalMs);
  // Suspended on an outside system's callback: nothing changes until it calls, so polls may be as far apart as allowed
  // (not so a workflow's execution: a question of its may come at any time, and its polls follow its age).
  if (task.callbackWait !== undefined && task.lease === undefined && task.workflow === undefined)
    return Math.max(floor, config.maxPollIntervalMs);
  return Math.min(Math.max(floor, Math.round((now - task.createdAt) / 10)), Math.max(floor, config.maxPollIntervalMs));
}

/** The `Task` fields every task-bearing message carries (spec §1.2). */
export function taskFields(task: TaskRecord, context: RenderContext) {
  const statusMessage = statusMessageOf(task);
  return {
    taskId: task.taskId,
    status: task.status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttlMs: renderedTtlMs(task, context.now, context.config.retentionMs),
    pollIntervalMs: pollIntervalMs(task, context),
  };
}

/** The flat `CreateTaskResult` (spec §1.4): no `result`, `error` or `inputRequests`. */
export function createTaskResult(task: TaskRecord, context: RenderContext) {
  return { resultType: 'task' as const, ...taskFields(task, context) };
}

/** The `DetailedTask` of a `tasks/get` result (spec §1.3, items 16–20). */
export function detailedTask(task: TaskRecord, context: RenderContext) {
  const fields = taskFields(task, context);
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
