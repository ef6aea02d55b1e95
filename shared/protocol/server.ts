import { Server, type ServerContext } from '@modelcontextprotocol/server';
import type { Log } from '../log.ts';
import { inputJsonSchema } from '../runtime/json-schema.ts';
import type { ToolDefinition } from '../runtime/tool.ts';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import type { ClientCapabilities } from '../tasks/model.ts';
import { META_KEYS, TASKS_EXTENSION } from '../wire.ts';
import { invalidParams, toProtocolError } from './errors.ts';
import { isLegacyCreateTaskResult, LEGACY_TASKS_REVISION } from './legacy-tasks.ts';

/**
 * The MCP server built for each request: the SDK's, with the extension's
 * result shapes and one error mapper. The SDK normalises every `tools/call` result as a `CallToolResult` (adding
 * `content: []`). A `CreateTaskResult` is a different result family and must
 * stay flat and exact (spec §1.4), so it bypasses that step; every other
 * result still goes through the SDK's validation.
 */
export class TaskAwareServer extends Server {
  readonly #log: Log;

  constructor(info: ConstructorParameters<typeof Server>[0], options: ConstructorParameters<typeof Server>[1], log: Log) {
    super(info, options);
    this.#log = log;
    // A client that gives up sends this. Without a session the request it names was served by
    // another instance (request ids are not unique across clients either), so nothing is aborted
    // here, and a task never is: the client's retry joins it instead. Logged, without its reason.
    this.setNotificationHandler('notifications/cancelled', (notification) => {
      const requestId = (notification.params as { requestId?: unknown } | undefined)?.requestId;
      this.#log({ event: 'client-cancelled', requestId: String(requestId).slice(0, 64) });
    });
  }

  /**
   * Every method's handler, wrapped once: the client's mistakes in the
   * params shape are answered `-32602` before the SDK's validation (whose
   * message would quote its schema issues), and anything thrown goes through
   * the one error mapper.
   */
  protected override _wrapHandler(method: string, handler: Parameters<Server['_wrapHandler']>[1]): ReturnType<Server['_wrapHandler']> {
    const inner =
      method === 'tools/call'
        ? this.#toolsCall(handler)
        : method === 'initialize'
          ? legacyTasksOnlyOn2025(super._wrapHandler(method, handler))
          : super._wrapHandler(method, handler);
    return async (request, ctx) => {
      try {
        checkParamsShape(method, request.params);
        return await inner(request, ctx);
      } catch (error) {
        throw toProtocolError(error, this.#log, { method });
      }
    };
  }

  #toolsCall(handler: Parameters<Server['_wrapHandler']>[1]): ReturnType<Server['_wrapHandler']> {
    return async (request, ctx) => {
      const result = (await handler(request, ctx)) as Record<string, unknown>;
      if (result['resultType'] === 'task' || isLegacyCreateTaskResult(result)) return result as never;
      return super._wrapHandler('tools/call', async () => result as never)(request, ctx);
    };
  }
}

/**
 * The 2025-era tasks capability belongs to 2025-11-25 only: a client that
 * negotiates an earlier revision (2025-06-18) is not offered it.
 */
function legacyTasksOnlyOn2025(initialize: ReturnType<Server['_wrapHandler']>): ReturnType<Server['_wrapHandler']> {
  return async (request, ctx) => {
    const result = (await initialize(request, ctx)) as { protocolVersion?: string; capabilities?: Record<string, unknown> };
    if (result.protocolVersion === LEGACY_TASKS_REVISION || !result.capabilities?.['tasks']) return result as never;
    const { tasks: _tasks, ...capabilities } = result.capabilities;
    return { ...result, capabilities } as never;
  };
}

/** The params checks whose failure is the client's mistake, worded without quoting the input. */
function checkParamsShape(method: string, params: unknown): void {
  const value = (params ?? {}) as Record<string, unknown>;
  if (method === 'tools/call') {
    if (typeof value['name'] !== 'string') throw invalidParams('tools/call: name must be a string');
    const args = value['arguments'];
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      throw invalidParams('tools/call: arguments must be an object');
    }
  }
  if (method.startsWith('tasks/')) {
    const taskId = value['taskId'];
    if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > MAX_TASK_ID_LENGTH) {
      throw invalidParams(`${method}: taskId must be a non-empty string of at most ${MAX_TASK_ID_LENGTH} characters`);
    }
  }
  const responses = value['inputResponses'];
  if (responses !== undefined && (typeof responses !== 'object' || responses === null || Array.isArray(responses))) {
    throw invalidParams(`${method}: inputResponses must be an object`);
  }
}

/** A tool as `tools/list` describes it. */
export function describeTool(tool: ToolDefinition) {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description,
    // A raw JSON Schema is shown as written; a zod schema is converted.
    inputSchema: inputJsonSchema(tool.inputSchema),
  };
}

/** The client capabilities of this request's envelope (2026-07-28 `_meta`). */
export function clientCapabilities(ctx: ServerContext): ClientCapabilities {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[META_KEYS.clientCapabilities] ?? {}) as ClientCapabilities;
}

/** Whether the client declared the extension on this very request (spec items 2, 57, 58). */
export function declaresTasks(capabilities: ClientCapabilities): boolean {
  const extensions = capabilities['extensions'];
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}
