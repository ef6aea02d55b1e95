/**
 * Why a task message was sent. The worker treats all of them the same way
 * (claim, replay, settle); the reason is for logs and metrics.
 */
export const TASK_MESSAGE_REASONS = ['start', 'resume', 'continue', 'wake', 'retry', 'sweep'] as const;
export type TaskMessageReason = (typeof TASK_MESSAGE_REASONS)[number];

/** A queue message carries only what locates the task; all state is in the store. */
export interface TaskMessage {
  taskId: string;
  reason: TaskMessageReason;
}

/** The task queue port. */
export interface TaskQueue {
  /** Enqueues one message; resolves once the queue has accepted it. */
  send(message: TaskMessage, options?: { delaySeconds?: number }): Promise<void>;
}

/** Parses a message body; throws on anything that is not a task message. */
export function parseTaskMessage(body: string): TaskMessage {
  const value: unknown = JSON.parse(body);
  if (
    typeof value === 'object' && value !== null &&
    typeof (value as TaskMessage).taskId === 'string' &&
    (TASK_MESSAGE_REASONS as readonly string[]).includes((value as TaskMessage).reason)
  ) {
    return { taskId: (value as TaskMessage).taskId, reason: (value as TaskMessage).reason };
  }
  throw new Error('Not a task message');
}
