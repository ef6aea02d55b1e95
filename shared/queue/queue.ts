/** Why a task message was sent: the worker treats all of them the same way. */
export type TaskMessageReason = 'start' | 'resume' | 'retry';

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
    ['start', 'resume', 'retry'].includes((value as TaskMessage).reason)
  ) {
    return { taskId: (value as TaskMessage).taskId, reason: (value as TaskMessage).reason };
  }
  throw new Error('Not a task message');
}
