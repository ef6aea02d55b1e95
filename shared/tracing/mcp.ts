/**
 * The server span of an MCP request, by the MCP semantic conventions: named
 * `{mcp.method.name} {target}`, parented by the request's `params._meta`
 * trace context (SEP-414) and linking the HTTP request's own, with the
 * conventions' attributes and `mcp.task.id` where the request names a task.
 * Which attributes a request gets is a pure function of the request
 * ({@link requestSpanOf}), tested as a table; {@link traceMcpRequest} follows it.
 */
import { TRACE_META_KEYS } from '../wire.ts';
import { MCP_ATTRIBUTES as MCP, TASK_ATTRIBUTES as TASK, TOOL_ERROR } from './names.ts';
import { type OpenSpan, type SpanSpec, type TraceContext, type Tracing, traceContextOf } from './tracing.ts';

/**
 * The span a parsed JSON-RPC body gets, or `undefined` for none (a batch, a
 * body that is not a request, or `tasks/get` while those are sampled out).
 */
export function requestSpanOf(headers: Headers, body: unknown, settings: Pick<Tracing, 'tasksGet'>): SpanSpec | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
  if (typeof method !== 'string' || (method === 'tasks/get' && !settings.tasksGet)) return undefined;
  const meta = (typeof params?.['_meta'] === 'object' ? params['_meta'] : undefined) as Record<string, unknown> | undefined;
  const fromMeta = traceContextOf(meta?.[TRACE_META_KEYS.traceparent], meta?.[TRACE_META_KEYS.tracestate]);
  const fromHttp = httpContextOf(headers);
  const tool = method === 'tools/call' && typeof params?.['name'] === 'string' ? params['name'] : undefined;
  const target = tool ?? (method === 'prompts/get' && typeof params?.['name'] === 'string' ? params['name'] : undefined);
  const taskId = typeof params?.['taskId'] === 'string' ? params['taskId'] : undefined;
  return {
    name: target === undefined ? method : `${method} ${target}`,
    kind: 'server',
    // The `_meta` context is the parent; the HTTP request's own is linked (or, without a `_meta` one, the parent).
    parent: fromMeta ?? fromHttp ?? null,
    ...(fromMeta && fromHttp ? { links: [fromHttp] } : {}),
    attributes: {
      [MCP.method]: method,
      [MCP.requestId]: typeof id === 'string' || typeof id === 'number' ? String(id) : undefined,
      [MCP.sessionId]: headers.get('mcp-session-id') ?? undefined,
      [MCP.protocolVersion]: headers.get('mcp-protocol-version') ?? undefined,
      [MCP.toolName]: tool,
      [MCP.operation]: tool === undefined ? undefined : 'execute_tool',
      [TASK.taskId]: taskId,
    },
  };
}

/** Runs `serve` inside the request's server span (when it gets one), then notes what the answer says. */
export async function traceMcpRequest(
  tracing: Tracing,
  headers: Headers,
  body: unknown,
  serve: () => Promise<Response>,
): Promise<Response> {
  const spec = tracing.enabled ? requestSpanOf(headers, body, tracing) : undefined;
  if (!spec) return serve();
  return tracing.span(spec, async (span) => {
    const response = await serve();
    await noteAnswer(span, response);
    return response;
  });
}

/**
 * Reads a JSON answer (a copy: the client gets the original): a JSON-RPC
 * error sets `error.type` and `rpc.response.status_code` to its code, a
 * tool result with `isError` sets `error.type` to `tool_error`, a created
 * task's id becomes `mcp.task.id`. A streamed answer is left unread.
 */
async function noteAnswer(span: OpenSpan, response: Response): Promise<void> {
  if (!response.headers.get('content-type')?.includes('application/json')) {
    if (response.status >= 500) span.fail(String(response.status));
    return;
  }
  const answer = (await response.clone().json()) as { error?: { code?: unknown }; result?: Record<string, unknown> };
  if (answer.error && typeof answer.error.code === 'number') {
    span.set({ [MCP.rpcStatus]: String(answer.error.code) });
    span.fail(String(answer.error.code));
    return;
  }
  const result = answer.result;
  const task = result?.['task'] as { taskId?: unknown } | undefined;
  const taskId = typeof result?.['taskId'] === 'string' ? result['taskId'] : task?.taskId;
  if (typeof taskId === 'string') span.set({ [TASK.taskId]: taskId });
  if (result?.['isError'] === true) span.fail(TOOL_ERROR);
}

/**
 * The HTTP request's trace context: a W3C `traceparent` header, else an
 * `X-Amzn-Trace-Id` header's `Root` and `Parent` (`Root=1-<8 hex>-<24 hex>;Parent=<16 hex>;Sampled=1`).
 */
export function httpContextOf(headers: Headers): TraceContext | undefined {
  const w3c = traceContextOf(headers.get('traceparent'), headers.get('tracestate'));
  if (w3c) return w3c;
  const amzn = headers.get('x-amzn-trace-id');
  const root = amzn && /Root=1-([0-9a-f]{8})-([0-9a-f]{24})/.exec(amzn);
  const parent = amzn && /Parent=([0-9a-f]{16})/.exec(amzn);
  if (!root || !parent) return undefined;
  const sampled = amzn && /Sampled=1/.test(amzn) ? '01' : '00';
  return traceContextOf(`00-${root[1]}${root[2]}-${parent[1]}-${sampled}`);
}
