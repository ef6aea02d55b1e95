import { MissingRequiredClientCapabilityError, ProtocolError } from '@modelcontextprotocol/server';
import { TaskNotFoundError } from '../tasks/store.ts';

/** The extension's identifier (spec §1.10, item 53). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The protocol revision that carries the extension. */
export const PROTOCOL_VERSION = '2026-07-28';

export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** `-32021` naming the tasks extension (spec items 3 and 45). */
export function missingTasksCapability(era: 'modern' | 'legacy' = 'modern'): ProtocolError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    era === 'modern'
      ? `Missing required client capability: declare the ${TASKS_EXTENSION} extension on this request`
      : `This tool runs only as a task: call it with protocol ${PROTOCOL_VERSION} and the ${TASKS_EXTENSION} extension`,
  );
}

/**
 * The one place where anything thrown inside a protocol handler becomes a
 * JSON-RPC error. Domain errors keep their meaning; anything unexpected
 * becomes a bare `-32603` with no stack or message text from the exception.
 */
export function toProtocolError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  // Unknown, expired and foreign tasks answer alike (spec items 41, 42, 56).
  if (error instanceof TaskNotFoundError) return new ProtocolError(INVALID_PARAMS, 'Task not found');
  return new ProtocolError(INTERNAL_ERROR, 'Internal error');
}
