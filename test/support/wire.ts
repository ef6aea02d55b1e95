/**
 * Assertions on the wire shapes of the Tasks extension, for protocol tests:
 * each asserts one shape and validates it against the extension's own
 * schemas (`@modelcontextprotocol/ext-tasks/core/v2`).
 */
import assert from 'node:assert/strict';
import {
  errorOf,
  isTerminalStatus,
  type RpcOptions,
  type RpcResponse,
  type RpcTarget,
  resultOf,
  rpc,
  TASKS_EXTENSION,
  type TaskView,
} from './mcp-http.ts';
import { assertValid } from './schemas.ts';

/** A client that declared nothing (in particular not the tasks extension). */
export const NO_CAPABILITIES = {};
/** Tasks declared, elicitation not. */
export const TASKS_ONLY = { extensions: { [TASKS_EXTENSION]: {} } };
/** A 2025-era client: only the legacy `tasks` capability (spec item 58). */
export const LEGACY_TASKS_ONLY = { elicitation: {}, tasks: { requests: { tools: { call: {} } } } };

/** Keys an ack must never carry (spec §1.4, §1.6, §1.7; legacy names from §10). */
const NOT_ON_ACK = ['taskId', 'status', 'result', 'error', 'inputRequests', 'requestState'];

/** The helpers, sending to `target()` (read at each call: tests start their endpoint in a `before` hook). */
export function wireHelpers(target: () => RpcTarget) {
  function callTool(name: string, args: Record<string, unknown>, options: RpcOptions = {}, extra: Record<string, unknown> = {}) {
    return rpc(target(), 'tools/call', { name, arguments: args, ...extra }, options);
  }

  /** Calls a tool that must answer a `CreateTaskResult`; returns it. */
  async function createTask(
    name: string,
    args: Record<string, unknown> = {},
    options: RpcOptions = {},
  ): Promise<Record<string, unknown> & { taskId: string }> {
    const response = await callTool(name, args, options);
    assert.equal(response.status, 200);
    const result = resultOf(response);
    assert.equal(result['resultType'], 'task', `expected a task, got ${response.text}`);
    assertValid('CreateTaskResult', result);
    return result as Record<string, unknown> & { taskId: string };
  }

  /** A synchronous `tools/call` result with `resultType: "complete"` (never a task). */
  async function callSync(name: string, args: Record<string, unknown>, options: RpcOptions = {}, extra: Record<string, unknown> = {}) {
    const response = await callTool(name, args, options, extra);
    assert.equal(response.status, 200, response.text);
    const result = resultOf(response);
    assertValid('CallToolResult', result);
    assert.equal(result['resultType'], 'complete');
    assert.ok(!('taskId' in result), 'a synchronous result carries no taskId');
    return result as { content: Array<{ type: string; text?: string }>; isError?: boolean; [key: string]: unknown };
  }

  /** Asserts an empty acknowledgement (spec items 26, 31, 32, 35). */
  function assertAck(response: RpcResponse, schema: 'UpdateTaskResult' | 'CancelTaskResult'): void {
    assert.equal(response.status, 200, response.text);
    const result = resultOf(response);
    assertValid(schema, result);
    assert.equal(result['resultType'], 'complete');
    for (const key of NOT_ON_ACK) assert.ok(!(key in result), `the ack must not carry ${key}`);
    assert.deepEqual(
      Object.keys(result).filter((key) => key !== 'resultType' && key !== '_meta'),
      [],
    );
  }

  async function updateTask(taskId: string, inputResponses: Record<string, unknown>): Promise<void> {
    assertAck(await rpc(target(), 'tasks/update', { taskId, inputResponses }), 'UpdateTaskResult');
  }

  async function cancelTask(taskId: string): Promise<void> {
    assertAck(await rpc(target(), 'tasks/cancel', { taskId }), 'CancelTaskResult');
  }

  /** Asserts a JSON-RPC error with this code (and HTTP status), echoing the request id. */
  function assertError(response: RpcResponse, code: number, httpStatus?: number) {
    const error = errorOf(response);
    assertValid('Error', error);
    assert.equal(error.code, code, `expected ${code}, got ${response.text}`);
    if (httpStatus !== undefined) assert.equal(response.status, httpStatus, `HTTP status for ${response.text}`);
    if (code !== -32700) assert.equal(response.body?.id, response.requestId, 'the error echoes the request id');
    assert.ok(error.message.length > 0, 'errors carry a message (item 46)');
    return error;
  }

  /** `-32021` naming the tasks extension in `data.requiredCapabilities`, HTTP 400 (items 3, 45, 84). */
  function assertMissingTasksCapability(response: RpcResponse): void {
    const error = assertError(response, -32021, 400);
    const data = error.data as { requiredCapabilities?: { extensions?: Record<string, unknown> } } | undefined;
    assert.deepEqual(
      data?.requiredCapabilities?.extensions?.[TASKS_EXTENSION],
      {},
      `requiredCapabilities names the extension: ${response.text}`,
    );
  }

  const terminal = (task: TaskView) => isTerminalStatus(task.status);
  const inputRequired = (task: TaskView) => task.status === 'input_required' || terminal(task);

  function textOf(result: Record<string, unknown> | undefined): string {
    const content = result?.['content'] as Array<{ type: string; text?: string }> | undefined;
    assert.ok(Array.isArray(content) && content.length > 0, `non-empty content: ${JSON.stringify(result)}`);
    return content.map((block) => block.text ?? '').join('\n');
  }

  /** ≥122 random bits: a v4 UUID, or base64url/hex of at least that many bits (item 55). */
  function assertUnguessableId(taskId: string): void {
    const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
    const base64url = /^[A-Za-z0-9_-]{21,}$/;
    assert.ok(uuidV4.test(taskId) || base64url.test(taskId), `task id ${taskId} is not a ≥122-bit random id`);
  }

  return {
    callTool,
    createTask,
    callSync,
    assertAck,
    updateTask,
    cancelTask,
    assertError,
    assertMissingTasksCapability,
    terminal,
    inputRequired,
    textOf,
    assertUnguessableId,
  };
}
