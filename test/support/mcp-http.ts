/**
 * A deliberately small JSON-RPC-over-HTTP client for protocol tests: it sends
 * exactly what a 2026-07-28 client would (headers and per-request `_meta`),
 * lets a test override or remove any part of it, and hands back the raw
 * status, headers and parsed body — no SDK in between to hide mistakes.
 */
import { pollUntil as pollTask } from '../../bin/cli/client.ts';
import { assertValid } from './schemas.ts';

export const PROTOCOL_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What a tasks-aware, elicitation-capable client declares (the default). */
export const TASKS_CAPABILITIES: Readonly<Record<string, unknown>> = { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } };

/** The `clientInfo` every request carries. */
export const CLIENT_INFO = { name: 'mcp-http-test-client', version: '1.0.0' } as const;

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
}

/**
 * Where requests go: an endpoint URL (a real HTTP request), or a function
 * that answers a web `Request` in process (see `test/support/in-process.ts`).
 */
export type RpcTarget = string | ((request: Request) => Promise<Response>);

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

/** POSTs one JSON-RPC request to `target` and returns what came back, unjudged. */
export async function rpc(
  target: RpcTarget,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<RpcResponse> {
  const protocolVersion = options.protocolVersion ?? PROTOCOL_VERSION;
  const id = options.id ?? nextId++;
  const meta = options.meta === undefined ? requestMeta(options.capabilities ?? TASKS_CAPABILITIES, protocolVersion) : options.meta;
  const fullParams = meta === null ? { ...params } : { ...params, _meta: meta };

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

  const body = options.rawBody ?? JSON.stringify({ jsonrpc: '2.0', id, method, params: fullParams });
  const init = { method: 'POST', headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? 15_000) };
  const response = typeof target === 'string' ? await fetch(target, init) : await target(new Request('http://127.0.0.1/mcp', init));
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
