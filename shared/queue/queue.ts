/**
 * Why a task message was sent. The worker treats all of them the same way
 * (claim, replay, settle); the reason is for logs and metrics.
 */
const TASK_MESSAGE_REASONS = ['start', 'resume', 'continue', 'wake', 'retry', 'sweep'] as const;
export type TaskMessageReason = (typeof TASK_MESSAGE_REASONS)[number];

/** A queue message carries only what locates the task; all state is in the store. */
export interface TaskMessage {
  taskId: string;
  reason: TaskMessageReason;
  /** The trace context (`traceparent`) of what queued a resume, when traced: the run's span links it. */
  link?: string;
}

/** The longest delay SQS accepts on a message (15 minutes); longer waits are chained. */
export const MAX_DELAY_SECONDS = 900;

/** The task queue port. */
export interface TaskQueue {
  /** Enqueues one message; resolves once the queue has accepted it. */
  send(message: TaskMessage, options?: { delaySeconds?: number }): Promise<void>;
}

/**
 * Parses a message body; `undefined` for anything that is not a task message
 * (such a message can never succeed, so consumers drop it rather than retry).
 */
export function parseTaskMessage(body: string): TaskMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const { taskId, reason, link } = (typeof value === 'object' && value !== null ? value : {}) as Partial<
    Record<keyof TaskMessage, unknown>
  >;
  if (typeof taskId !== 'string' || !(TASK_MESSAGE_REASONS as readonly unknown[]).includes(reason)) return undefined;
  return { taskId, reason: reason as TaskMessageReason, ...(typeof link === 'string' ? { link } : {}) };
}
