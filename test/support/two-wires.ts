/**
 * The MCP endpoint reached two ways for the same assertions: over HTTP (the
 * local stack's adapter) and through the MCP Lambda handler in-process, with
 * the API Gateway event it would receive; plus a raw POST that can send any
 * `Host` header.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { LocalStack } from '../../bin/local/options.ts';
import { httpApiEvent } from './factories.ts';
import { type JsonRpcMessage, parseMessages, type RpcOptions, requestMeta, rpc, TASKS_CAPABILITIES } from './mcp-http.ts';

/** A response as both wires give it back. */
export interface Reply {
  status: number;
  body: JsonRpcMessage | undefined;
  text: string;
}

/** One way into the endpoint: `http` (the local HTTP adapter) or `lambda` (the handler, in-process). */
export interface Wire {
  name: 'http' | 'lambda';
  call(method: string, params?: Record<string, unknown>, options?: RpcOptions & { principal?: string }): Promise<Reply>;
}

let nextId = 1;

/** The HTTP API event the MCP function receives for this request (on the local stack's host). */
export function lambdaEvent(
  method: string,
  params: Record<string, unknown>,
  options: RpcOptions & { principal?: string } = {},
): APIGatewayProxyEventV2 {
  const meta = options.meta === undefined ? requestMeta(options.capabilities ?? TASKS_CAPABILITIES) : options.meta;
  const headers: Record<string, string> = {
    host: '127.0.0.1:3000',
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (method === 'tools/call' && typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
  if (method.startsWith('tasks/') && typeof params['taskId'] === 'string') headers['mcp-name'] = params['taskId'];
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) delete headers[name.toLowerCase()];
    else headers[name.toLowerCase()] = value;
  }
  const body =
    options.rawBody ??
    JSON.stringify({ jsonrpc: '2.0', id: options.id ?? nextId++, method, params: meta === null ? params : { ...params, _meta: meta } });
  return httpApiEvent({ headers, body, ...(options.principal ? { subject: options.principal } : {}) });
}

/** Both wires into `stack()` (read at each call: tests start their stack in a `before` hook): HTTP first, then Lambda. */
export function wires(stack: () => LocalStack): Wire[] {
  return [
    {
      name: 'http',
      async call(method, params = {}, options = {}) {
        assert.equal(options.principal, undefined, 'the HTTP wire has no authorizer');
        const response = await rpc(stack().url, method, params, options);
        return { status: response.status, body: response.body, text: response.text };
      },
    },
    {
      name: 'lambda',
      async call(method, params = {}, options = {}) {
        const result = (await stack().handlers.mcp(lambdaEvent(method, params, options))) as APIGatewayProxyStructuredResultV2;
        const text = result.body ?? '';
        const contentType = String(result.headers?.['content-type'] ?? '');
        const messages = parseMessages(text, contentType);
        return { status: result.statusCode ?? 200, body: messages.find((m) => 'result' in m || 'error' in m), text };
      },
    },
  ];
}

/** The JSON-RPC error of a reply (asserting there is one). */
export function errorOf(reply: Reply): { code: number; message: string; data?: unknown } {
  assert.ok(reply.body?.error, `expected a JSON-RPC error, got HTTP ${reply.status}: ${reply.text.slice(0, 500)}`);
  return reply.body.error;
}

/** The JSON-RPC result of a reply (asserting there is one). */
export function resultOf(reply: Reply): Record<string, unknown> {
  assert.ok(reply.body?.result, `expected a result, got HTTP ${reply.status}: ${reply.text.slice(0, 500)}`);
  return reply.body.result;
}

/** A `tools/list` POSTed with node:http, which (unlike fetch) sends any `Host`; resolves to the status. */
export function rawPost(url: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: requestMeta() } });
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: new URL(url).port,
        path: '/mcp',
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/list',
          ...headers,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
