import { MissingRequiredClientCapabilityError, ProtocolError } from '@modelcontextprotocol/server';
import { ClientError } from '../errors.ts';
import { errorName, type Log } from '../log.ts';
import { BARE_INTERNAL_ERROR, INVALID_PARAMS, PROTOCOL_VERSION, TASKS_EXTENSION } from '../wire.ts';
import type { Era } from './router.ts';

/** `-32021` naming the tasks extension (spec items 3 and 45), worded for the client's era. */
export function missingTasksCapability(era: Era = 'modern'): ProtocolError {
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
 * JSON-RPC error, in three cases:
 * - a protocol error (ours, the SDK's, a tool's) is worded for the client
 *   where it is thrown: as it is;
 * - a {@link ClientError} (not found, a size limit, an idempotency conflict,
 *   the cap on unfinished tasks, …) carries its own code and data;
 * - anything else is logged (its name, never its message) and becomes a bare
 *   `-32603 Internal error`, with no stack or text of the exception, which
 *   may quote arguments, answers or other principals' ids.
 */
export function toProtocolError(error: unknown, log?: Log, fields: Record<string, unknown> = {}): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof ClientError) return new ProtocolError(error.code, error.message, error.data);
  log?.({ event: 'request-error', ...fields, error: errorName(error) });
  return new ProtocolError(BARE_INTERNAL_ERROR.code, BARE_INTERNAL_ERROR.message);
}
