/**
 * Task metrics as CloudWatch embedded metric format (EMF): a log line of the
 * one sink (`shared/log.ts`) that also carries an `_aws` block naming some of
 * its fields as metrics. CloudWatch Logs extracts them from the function's
 * log group; nothing else is called, so a metric costs no request and no
 * latency, and the line stays readable as an ordinary event.
 *
 * A few lines of EMF rather than a library: the format is one JSON object,
 * and the bundles stay as they are (`npm run bench` prints their ratios).
 *
 * Every metric is in {@link METRICS_NAMESPACE} without dimensions, except
 * `TasksEnded`, which is split by `status`. Custom metrics are billed per
 * metric for each hour in which they receive data, so a stack at rest pays
 * nothing for them (see the cost section of docs/deploying.md).
 */
import type { Log, LogEvent } from './log.ts';
import type { TaskStatus } from './tasks/model.ts';

export const METRICS_NAMESPACE = 'McpTasks';

/** The metrics the functions emit, with their units. */
export const TASK_METRICS = {
  /** A task was created (MCP function). */
  TasksCreated: 'Count',
  /** A task reached a terminal status; dimension `status` (completed, failed, cancelled). */
  TasksEnded: 'Count',
  /**
   * 1 for a task that ended `failed`, 0 for one that ended otherwise: its
   * Average is the failure rate, its SampleCount the number of tasks ended.
   * What the failed-task alarm watches (one metric, one alarm charge).
   */
  TaskFailed: 'None',
  /** From creation to the terminal status. */
  TaskDuration: 'Milliseconds',
  /** From creation to the first run (the first lease taken). */
  TimeQueued: 'Milliseconds',
  /** A run handed the task over for a retry, or failed unexpectedly and is left to redelivery. */
  TaskRetries: 'Count',
  /** A task whose messages were dead-lettered was marked failed. */
  TasksDeadLettered: 'Count',
  /** Lifecycle events not delivered to EventBridge after the last attempt (the task's outcome is unaffected). */
  EventsFailed: 'Count',
} as const;

export type TaskMetric = keyof typeof TASK_METRICS;

/** Dimension sets by metric: only `TasksEnded` has one. */
const DIMENSIONS: Partial<Record<TaskMetric, string[]>> = { TasksEnded: ['status'] };

/**
 * `event` with `values` embedded as metrics: each metric's value is a
 * top-level field of the line, and the `_aws` block names them (grouped by
 * dimension set), with `time` as the metrics' timestamp.
 */
export function withMetrics(event: LogEvent, values: Partial<Record<TaskMetric, number>>, time = Date.now()): LogEvent {
  const names = (Object.keys(values) as TaskMetric[]).filter((name) => values[name] !== undefined);
  if (names.length === 0) return event;
  const groups = new Map<string, TaskMetric[]>();
  for (const name of names) {
    const key = (DIMENSIONS[name] ?? []).join(',');
    groups.set(key, [...(groups.get(key) ?? []), name]);
  }
  return {
    ...event,
    ...values,
    _aws: {
      Timestamp: time,
      CloudWatchMetrics: [...groups].map(([key, metrics]) => ({
        Namespace: METRICS_NAMESPACE,
        Dimensions: [key === '' ? [] : key.split(',')],
        Metrics: metrics.map((name) => ({ Name: name, Unit: TASK_METRICS[name] })),
      })),
    },
  };
}

/** What is known about a task when it ends: its creation time gives its duration. */
export interface EndedTask {
  taskId: string;
  tool?: string;
  createdAt?: number;
}

/**
 * The one `task-ended` line per task that reaches a terminal status, with its
 * metrics: `TasksEnded` by status, `TaskFailed` (0 or 1) and, when the
 * creation time is known, `TaskDuration`. `fields` adds context (a reason).
 */
export function logTaskEnded(
  log: Log,
  task: EndedTask,
  status: Exclude<TaskStatus, 'working' | 'input_required'>,
  now: number,
  fields: Record<string, unknown> = {},
): void {
  log(
    withMetrics(
      { event: 'task-ended', taskId: task.taskId, ...(task.tool ? { tool: task.tool } : {}), status, ...fields },
      {
        TasksEnded: 1,
        TaskFailed: status === 'failed' ? 1 : 0,
        ...(task.createdAt === undefined ? {} : { TaskDuration: Math.max(0, now - task.createdAt) }),
      },
      now,
    ),
  );
}
