/**
 * The MCP function called in process: a web `Request` becomes the HTTP API
 * event API Gateway would deliver, the handler's result becomes a
 * `Response`. Protocol tests use it to skip the HTTP hop (see `RpcTarget`);
 * `mcpRequestEvent` builds such an event for a handler called directly.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { httpApiEvent } from './factories.ts';
import { PROTOCOL_VERSION, requestMeta, TASKS_CAPABILITIES } from './mcp-http.ts';

let nextId = 0;

/** A `fetch`-like function that hands each request to `handler` as an API Gateway event. */
export function throughHandler(
  handler: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const headers: Record<string, string> = { host: url.host };
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = await request.text();
    const result = await handler(httpApiEvent({ method: request.method, path: url.pathname, headers, ...(body ? { body } : {}) }));
    // A bare value (string or object) is the body of a 200 JSON answer (payload 2.0 rules).
    if (typeof result === 'string' || result.statusCode === undefined) {
      return new Response(typeof result === 'string' ? result : JSON.stringify(result), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    }
    const text = result.body === undefined ? null : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(result.headers ?? {})) responseHeaders.set(name, String(value));
    return new Response(text, { status: result.statusCode, headers: responseHeaders });
  };
}

export interface McpEventOptions {
  /** JSON-RPC id; default a counter. */
  id?: number;
  /** `_meta` client capabilities; default tasks and elicitation. */
  capabilities?: object;
  subject?: string;
}

/**
 * A 2026-07-28 JSON-RPC request as an HTTP API event: the body with its
 * `_meta` envelope, and the `MCP-Protocol-Version`, `Mcp-Method` and
 * `Mcp-Name` headers a client sends.
 */
export function mcpRequestEvent(method: string, params: Record<string, unknown>, options: McpEventOptions = {}): APIGatewayProxyEventV2 {
  const id = options.id ?? ++nextId;
  const name = (params['taskId'] ?? params['name']) as string | undefined;
  return httpApiEvent({
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, _meta: requestMeta(options.capabilities ?? TASKS_CAPABILITIES) },
    }),
    ...(options.subject ? { subject: options.subject } : {}),
  });
}
