import { MissingRequiredClientCapabilityError, ProtocolError } from '@modelcontextprotocol/server';
import { errorName, type Log } from '../log.ts';
import { LimitExceededError } from '../tasks/limits.ts';
import { IdempotencyConflictError, TaskNotFoundError, TooManyTasksError } from '../tasks/store.ts';
import { BARE_INTERNAL_ERROR, IDEMPOTENCY_KEY, INVALID_PARAMS, PROTOCOL_VERSION, TASKS_EXTENSION } from '../wire.ts';

/** `-32021` naming the tasks extension (spec items 3 and 45). */
export function missingTasksCapability(era: 'modern' | 'legacy' = 'modern'): ProtocolError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    era === 'modern'
      ? `Missing required client capability: declare the ${TASKS_EXTENSION} extension on this request`
      : `This tool runs only as a task: call it with protocol ${PROTOCOL_VERSION} and the ${TASKS_EXTENSION} extension`,
  );
}

/** A client mistake with a message meant for the client (`-32602`). */
export function invalidParams(message: string, data?: unknown): ProtocolError {
  return new ProtocolError(INVALID_PARAMS, message, data);
}

/**
 * The one place where anything thrown inside a protocol handler becomes a
 * JSON-RPC error. Protocol errors (ours and the SDK's) and domain errors keep
 * their meaning; anything unexpected is logged (its name, never its message)
 * and becomes a bare `-32603 Internal error`, with no stack or text of the
 * exception, which may quote arguments, answers or other principals' ids.
 */
export function toProtocolError(error: unknown, log?: Log, fields: Record<string, unknown> = {}): ProtocolError {
  // Protocol errors are worded for the client where they are thrown (ours, the SDK's, a tool's).
  if (error instanceof ProtocolError) return error;
  // Unknown, expired and foreign tasks answer alike (spec items 41, 42, 56).
  if (error instanceof TaskNotFoundError) return invalidParams('Task not found');
  if (error instanceof LimitExceededError) {
    return invalidParams(error.message, {
      reason: 'limit-exceeded',
      subject: error.subject,
      bytes: error.bytes,
      limitBytes: error.limitBytes,
    });
  }
  if (error instanceof IdempotencyConflictError)
    return invalidParams(`${IDEMPOTENCY_KEY} was already used for a call with other arguments`);
  if (error instanceof TooManyTasksError) {
    return invalidParams(`${error.message}: wait for one of your tasks to finish, or cancel one`, {
      reason: 'unfinished-task-limit',
      limit: error.limit,
    });
  }
  log?.({ event: 'request-error', ...fields, error: errorName(error) });
  return bareInternalError();
}

function bareInternalError(): ProtocolError {
  return new ProtocolError(BARE_INTERNAL_ERROR.code, BARE_INTERNAL_ERROR.message);
}
