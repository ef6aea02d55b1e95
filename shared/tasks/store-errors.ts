/** The errors the task store throws (see `TaskStore`): those meant for the caller extend `ClientError`. */
import { ClientError, TasksError } from '../errors.ts';
import { IDEMPOTENCY_KEY } from '../wire.ts';

/** The task does not exist for this caller (missing, expired or foreign): all three answer alike (spec items 41, 42, 56). */
export class TaskNotFoundError extends ClientError {
  constructor(readonly taskId: string) {
    super('Task not found');
    this.name = 'TaskNotFoundError';
  }
}

/** A worker tried to write under a lease it no longer holds. */
export class LeaseLostError extends TasksError {
  constructor(readonly taskId: string) {
    super('Lease lost');
    this.name = 'LeaseLostError';
  }
}

/** An idempotency key reused by the same owner for a call with other arguments. */
export class IdempotencyConflictError extends ClientError {
  constructor() {
    super(`${IDEMPOTENCY_KEY} was already used for a call with other arguments`);
    this.name = 'IdempotencyConflictError';
  }
}

/**
 * DynamoDB refused to store a task row (too large, or otherwise invalid).
 * The stores end such a task `failed` through a minimal write rather than
 * retry a write that can never succeed.
 */
export class TaskRowRejectedError extends TasksError {
  constructor(
    readonly taskId: string,
    readonly reason: 'size' | 'validation',
    options?: ErrorOptions,
  ) {
    super(reason === 'size' ? 'Task row over the item size limit' : 'Task row rejected', options);
    this.name = 'TaskRowRejectedError';
  }
}

/** `create` with `join` found the derived id taken by a task it may not join (ended, another's, or expired). */
export class TaskIdTakenError extends TasksError {
  constructor(readonly taskId: string) {
    super('Task id taken by a task that cannot be joined');
    this.name = 'TaskIdTakenError';
  }
}

/** A page cursor or size that {@link TaskStore.list} cannot take (a caller's mistake: cursors are opaque). */
export class InvalidPageError extends ClientError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPageError';
  }
}

/**
 * The owner already has as many unfinished tasks as the configured cap
 * allows. `data.retryAfterMs` says when to try again: a slot frees when one
 * of the owner's unfinished tasks ends, which its client learns by polling,
 * so the shortest poll interval those tasks advertise
 * (`pollIntervalsMs`: theirs, as set at creation; a second when none is known).
 */
export class TooManyTasksError extends ClientError {
  constructor(
    readonly limit: number,
    pollIntervalsMs: readonly number[],
  ) {
    const retryAfterMs = pollIntervalsMs.length > 0 ? Math.min(...pollIntervalsMs) : 1000;
    super(`Too many unfinished tasks: the limit is ${limit} per principal: wait for one of your tasks to finish, or cancel one`, {
      data: { reason: 'unfinished-task-limit', limit, retryAfterMs },
    });
    this.name = 'TooManyTasksError';
  }
}
