/**
 * The tests' one wire client: a deliberately small JSON-RPC-over-HTTP client
 * that sends exactly what a 2026-07-28 client would (headers and per-request
 * `_meta`), lets a test override or remove any part of it, and hands back the
 * raw status, headers and parsed body — no SDK in between to hide mistakes.
 *
 * - {@link rpc} sends one request to a target: an endpoint URL (a real HTTP
 *   request) or a Lambda handler called in process ({@link throughHandler}:
 *   the API Gateway event it would receive, with a JWT authorizer's subject
 *   when `principal` is given). {@link mcpRequestEvent} is that event, for a
 *   handler called directly.
 * - {@link wires} are both ways into a local stack's endpoint, for tests that
 *   make the same assertions over each.
 * - {@link wireHelpers} and the `assert…` functions check the extension's
 *   wire shapes against its own schemas (`@modelcontextprotocol/ext-tasks`).
 *
 * The constants are the test's own, not the server's: a wrong constant on
 * either side shows as a failure.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { pollUntil as pollTask } from '../../bin/cli/client.ts';
import type { LocalStack } from '../../bin/local/options.ts';
import { httpApiEvent } from './factories.ts';
import { assertValid } from './schemas.ts';

export const PROTOCOL_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What a tasks-aware, elicitation-capable client declares (the default). */
export const TASKS_CAPABILITIES: Readonly<Record<string, unknown>> = { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } };
/** A client that declared nothing (in particular not the tasks extension). */
export const NO_CAPABILITIES = {};
/** Tasks declared, elicitation not. */
export const TASKS_ONLY = { extensions: { [TASKS_EXTENSION]: {} } };
/** A 2025-era client: only the legacy `tasks` capability (spec item 58). */
export const LEGACY_TASKS_ONLY = { elicitation: {}, tasks: { requests: { tools: { call: {} } } } };

/** The `clientInfo` every request carries. */
const CLIENT_INFO = { name: 'mcp-http-test-client', version: '1.0.0' } as const;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC message as received: a response (result or error) or, on a stream, a notification. */
export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: JsonRpcError;
}

export interface RpcResponse {
  status: number;
  headers: Headers;
  /** The response to this request (for SSE: the event carrying it); `undefined` if the body holds none. */
  body: JsonRpcMessage | undefined;
  /** Every JSON-RPC message in the body, in order (one for a JSON body). */
  messages: JsonRpcMessage[];
  /** The raw body text. */
  text: string;
  /** The JSON-RPC id this request was sent with (errors must echo it). */
  requestId: number | string;
}

export interface RpcOptions {
  /** `_meta` client capabilities; default {@link TASKS_CAPABILITIES}. */
  capabilities?: object;
  /** Header overrides; `undefined` removes a header the helper would send. */
  headers?: Record<string, string | undefined>;
  /** JSON-RPC id; default a process-wide counter. */
  id?: number | string;
  /** Sent verbatim as the body instead of the JSON-RPC envelope (headers still derive from `method`/`params`). */
  rawBody?: string;
  /** Both the `MCP-Protocol-Version` header and `_meta` protocol version; default {@link PROTOCOL_VERSION}. */
  protocolVersion?: string;
  /** Replaces the whole `params._meta`; `null` sends no `_meta` at all. */
  meta?: Record<string, unknown> | null;
  /** Aborts the request (and fails) after this long; default 15 s. */
  timeoutMs?: number;
  /** The JWT authorizer's subject of the event: in process only (HTTP has no authorizer in front of the local stack). */
  principal?: string;
}

/**
 * Where requests go: an endpoint URL (a real HTTP request), or a function
 * that answers a web `Request` in process ({@link throughHandler}), given the
 * caller's principal if any.
 */
export type RpcTarget = string | ((request: Request, principal?: string) => Promise<Response>);

let nextId = 1;

/** The `_meta` envelope a 2026-07-28 client puts on every request. */
export function requestMeta(capabilities: object = TASKS_CAPABILITIES, protocolVersion = PROTOCOL_VERSION): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': protocolVersion,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

/** The `Mcp-Name` a client sends for this request (spec item 79), if any. */
function mcpName(method: string, params: Record<string, unknown>): string | undefined {
  const value =
    method === 'tools/call' || method === 'prompts/get'
      ? params['name']
      : method === 'resources/read'
        ? params['uri']
        : method === 'tasks/get' || method === 'tasks/update' || method === 'tasks/cancel'
          ? params['taskId']
          : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The request a client sends: its id, headers and body, with `options`' overrides applied. */
function outgoing(method: string, params: Record<string, unknown>, options: RpcOptions) {
  const protocolVersion = options.protocolVersion ?? PROTOCOL_VERSION;
  const id = options.id ?? nextId++;
  const meta = options.meta === undefined ? requestMeta(options.capabilities ?? TASKS_CAPABILITIES, protocolVersion) : options.meta;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': protocolVersion,
    'Mcp-Method': method,
  };
  const name = mcpName(method, params);
  if (name !== undefined) headers['Mcp-Name'] = name;
  for (const [header, value] of Object.entries(options.headers ?? {})) {
    for (const existing of Object.keys(headers)) if (existing.toLowerCase() === header.toLowerCase()) delete headers[existing];
    if (value !== undefined) headers[header] = value;
  }
  const body =
    options.rawBody ?? JSON.stringify({ jsonrpc: '2.0', id, method, params: meta === null ? params : { ...params, _meta: meta } });
  return { id, headers, body };
}

/** POSTs one JSON-RPC request to `target` and returns what came back, unjudged. */
export async function rpc(
  target: RpcTarget,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<RpcResponse> {
  const { id, headers, body } = outgoing(method, params, options);
  const init = { method: 'POST', headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? 15_000) };
  if (typeof target === 'string')
    assert.equal(options.principal, undefined, 'a principal needs an in-process target: HTTP has no authorizer');
  const response =
    typeof target === 'string' ? await fetch(target, init) : await target(new Request('http://127.0.0.1/mcp', init), options.principal);
  const text = await response.text();
  const messages = parseMessages(text, response.headers.get('content-type') ?? '');
  const reply =
    messages.find((message) => message.id === id && ('result' in message || 'error' in message)) ??
    messages.find((message) => 'result' in message || 'error' in message);
  return { status: response.status, headers: response.headers, body: reply, messages, text, requestId: id };
}

/** Parses a JSON body, or every `data:` event of an SSE body; unparsable parts are skipped. */
export function parseMessages(text: string, contentType: string): JsonRpcMessage[] {
  const parse = (raw: string): JsonRpcMessage[] => {
    try {
      const value: unknown = JSON.parse(raw);
      if (Array.isArray(value)) return value.filter(isObject) as JsonRpcMessage[];
      return isObject(value) ? [value as JsonRpcMessage] : [];
    } catch {
      return [];
    }
  };
  if (!contentType.includes('text/event-stream')) return text.trim() === '' ? [] : parse(text);
  const messages: JsonRpcMessage[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data !== '') messages.push(...parse(data));
  }
  return messages;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `result` of a response, failing with the error (or body) if there is none. */
export function resultOf(response: RpcResponse): Record<string, unknown> {
  if (response.body?.result === undefined) {
    throw new Error(`Expected a JSON-RPC result, got HTTP ${response.status}: ${response.text}`);
  }
  return response.body.result;
}

/** The `error` of a response, failing with the body if there is none. */
export function errorOf(response: RpcResponse): JsonRpcError {
  if (response.body?.error === undefined) {
    throw new Error(`Expected a JSON-RPC error, got HTTP ${response.status}: ${response.text}`);
  }
  return response.body.error;
}

// --- in process ----------------------------------------------------------------

type LambdaHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

/** A target that hands each request to `handler` as the API Gateway event it would receive, and its result back as a `Response`. */
export function throughHandler(handler: LambdaHandler): (request: Request, principal?: string) => Promise<Response> {
  return async (request, principal) => {
    const url = new URL(request.url);
    const headers: Record<string, string> = { host: url.host };
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = await request.text();
    const event = httpApiEvent({
      method: request.method,
      path: url.pathname,
      headers,
      ...(body ? { body } : {}),
      ...(principal ? { subject: principal } : {}),
    });
    return responseOf(await handler(event));
  };
}

function responseOf(result: APIGatewayProxyResultV2): Response {
  // A bare value (string or object) is the body of a 200 JSON answer (payload 2.0 rules).
  if (typeof result === 'string' || result.statusCode === undefined) {
    return new Response(typeof result === 'string' ? result : JSON.stringify(result), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }
  const text = result.body === undefined ? null : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
  const headers = new Headers();
  for (const [name, value] of Object.entries(result.headers ?? {})) headers.set(name, String(value));
  return new Response(text, { status: result.statusCode, headers });
}

/** The API Gateway event of a 2026-07-28 request, as {@link rpc} would send it, for a handler called directly. */
export function mcpRequestEvent(method: string, params: Record<string, unknown> = {}, options: RpcOptions = {}): APIGatewayProxyEventV2 {
  const { headers, body } = outgoing(method, params, options);
  return httpApiEvent({ headers, body, ...(options.principal ? { subject: options.principal } : {}) });
}

/** One way into a stack's endpoint: `http` (the local HTTP adapter) or `lambda` (the MCP handler, in process). */
export interface Wire {
  name: 'http' | 'lambda';
  call(method: string, params?: Record<string, unknown>, options?: RpcOptions): Promise<RpcResponse>;
}

/** Both wires into `stack()` (read at each call: tests start their stack in a `before` hook): HTTP first, then Lambda. */
export function wires(stack: () => LocalStack): Wire[] {
  return [
    { name: 'http', call: (method, params = {}, options = {}) => rpc(stack().url, method, params, options) },
    { name: 'lambda', call: (method, params = {}, options = {}) => rpc(throughHandler(stack().handlers.mcp), method, params, options) },
  ];
}

/** A `tools/list` POSTed with node:http, which (unlike fetch) sends any `Host`; resolves to the status. */
export function rawPost(url: string, headers: Record<string, string>): Promise<number> {
  const { headers: standard, body } = outgoing('tools/list', {}, { id: 1 });
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: new URL(url).port, path: '/mcp', method: 'POST', headers: { ...standard, ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// --- tasks -------------------------------------------------------------------

/** A `tasks/get` result as the tests read it (validated against the ext-tasks schema first). */
export interface TaskView {
  resultType: string;
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  result?: Record<string, unknown>;
  error?: JsonRpcError;
  [key: string]: unknown;
}

/** `tasks/get`, asserting a result that validates as `GetTaskResult`. */
export async function getTask(target: RpcTarget, taskId: string, options: RpcOptions = {}): Promise<TaskView> {
  const result = resultOf(await rpc(target, 'tasks/get', { taskId }, options));
  assertValid('GetTaskResult', result);
  return result as TaskView;
}

/**
 * Polls `tasks/get` until `predicate` holds and returns that task; fails with
 * the last status seen after `timeoutMs`. Every response is validated as a
 * `GetTaskResult`.
 */
export async function pollUntil(
  target: RpcTarget,
  taskId: string,
  predicate: (task: TaskView) => boolean,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<TaskView> {
  try {
    return await pollTask(() => getTask(target, taskId), predicate, { timeoutMs, interval: () => intervalMs });
  } catch (error) {
    throw new Error(`Task ${taskId} did not reach the expected state: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Whether a status is terminal (spec §2). */
export function isTerminalStatus(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

// --- the extension's wire shapes -------------------------------------------------

/** Keys an ack must never carry (spec §1.4, §1.6, §1.7; legacy names from §10). */
const NOT_ON_ACK = ['taskId', 'status', 'result', 'error', 'inputRequests', 'requestState'];

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

/** Asserts a JSON-RPC error with this code (and HTTP status), echoing the request id. */
function assertError(response: RpcResponse, code: number, httpStatus?: number): JsonRpcError {
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

/** The text blocks of a tool result, joined (asserting there are some). */
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

/** Whether a task has ended; whether it asks for input or has ended. */
const terminal = (task: TaskView) => isTerminalStatus(task.status);
const inputRequired = (task: TaskView) => task.status === 'input_required' || terminal(task);

/**
 * The calls whose answers are checked against the extension's schemas, sending
 * to `target()` (read at each call: tests start their endpoint in a `before`
 * hook), and the assertions on the extension's wire shapes.
 */
export function wireHelpers(target: () => RpcTarget) {
  function callTool(name: string, args: Record<string, unknown>, options: RpcOptions = {}, extra: Record<string, unknown> = {}) {
    return rpc(target(), 'tools/call', { name, arguments: args, ...extra }, options);
  }

  /** Calls a tool that must answer a `CreateTaskResult`; returns it. */
  async function createTask(name: string, args: Record<string, unknown> = {}, options: RpcOptions = {}) {
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

  const updateTask = async (taskId: string, inputResponses: Record<string, unknown>) =>
    assertAck(await rpc(target(), 'tasks/update', { taskId, inputResponses }), 'UpdateTaskResult');
  const cancelTask = async (taskId: string) => assertAck(await rpc(target(), 'tasks/cancel', { taskId }), 'CancelTaskResult');

  return {
    callTool,
    createTask,
    callSync,
    updateTask,
    cancelTask,
    assertAck,
    assertError,
    assertMissingTasksCapability,
    terminal,
    inputRequired,
    textOf,
    assertUnguessableId,
  };
}
