import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localhostAllowedHostnames, validateHostHeader } from '@modelcontextprotocol/server';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { errorName, type Log } from '../../shared/log.ts';

/** An HTTP API (payload 2.0) Lambda handler. */
export type HttpApiHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

/** API Gateway's request payload quota; larger requests are answered 413 before the function runs. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

const CLOSE_GRACE_MS = 5000;

/**
 * A route to a function of its own, as the HTTP API's routes send paths to
 * their integrations: `path` exactly, and with `prefix` every path under it
 * (`ANY <path>/{proxy+}`).
 */
export interface HttpRoute {
  path: string;
  prefix?: boolean;
  handler: HttpApiHandler;
}

export interface HttpAdapterOptions {
  handler: HttpApiHandler;
  /** 0 picks a free port. */
  port: number;
  /** The route the function serves (every method: the endpoint itself answers 405). */
  path?: string;
  /** Further routes to the same function (the OAuth metadata documents when tokens are required). */
  extraPaths?: string[];
  /** Routes to other functions, by path or path prefix (e.g. `/console`, `/callbacks`). */
  routes?: HttpRoute[];
  maxRequestBytes?: number;
  /** Diagnostic lines (method, path, status, ids: never bodies or headers). */
  log: Log;
  /**
   * `Host` names served (port-agnostic; default: loopback only). A request
   * naming any other host gets 403 before the function runs, so a web page
   * whose DNS name is rebound to 127.0.0.1 cannot reach it (DNS rebinding).
   * A malformed `Host` is left to the function's event adapter (400).
   */
  allowedHosts?: string[];
}

export interface HttpAdapter {
  /** The endpoint URL, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A `node:http` server on 127.0.0.1 that behaves like the HTTP API in front of
 * the MCP function: each request becomes an `APIGatewayProxyEventV2`, the
 * function's result is written in one piece (the front buffers; nothing
 * streams), bodies over the payload quota get 413, other paths 404.
 */
export async function startHttpAdapter(options: HttpAdapterOptions): Promise<HttpAdapter> {
  const route = options.path ?? '/mcp';
  const routes = new Set([route, ...(options.extraPaths ?? [])]);
  const limit = options.maxRequestBytes ?? MAX_REQUEST_BYTES;
  const { log } = options;
  const others = options.routes ?? [];
  /** The function a path goes to, and the route's key (as the HTTP API names it in the event). */
  const routeOf = (pathname: string): { handler: HttpApiHandler; routeKey: string } | undefined => {
    if (routes.has(pathname)) return { handler: options.handler, routeKey: pathname };
    for (const other of others) {
      if (pathname === other.path) return { handler: other.handler, routeKey: other.path };
      if (other.prefix && pathname.startsWith(`${other.path}/`)) return { handler: other.handler, routeKey: `${other.path}/{proxy+}` };
    }
    return undefined;
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      log({ event: 'http-adapter-error', error: errorName(error) });
      if (!res.headersSent) send(res, 500, { message: 'Internal Server Error' });
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const target = routeOf(url.pathname);
    if (!target) {
      req.resume();
      return send(res, 404, { message: 'Not Found' });
    }
    const body = await readBody(req, limit);
    if (body === 'too-large') return tooLarge(req, res);

    const host = validateHostHeader(req.headers.host, options.allowedHosts ?? localhostAllowedHostnames());
    if (!host.ok && host.errorCode === 'invalid_host') {
      req.resume();
      log({ event: 'host-refused' });
      return send(res, 403, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: this Host is not served' } });
    }

    const requestId = randomUUID();
    let result: APIGatewayProxyResultV2;
    try {
      result = await target.handler(toEvent(req, url, body, target.routeKey, requestId));
    } catch (error) {
      // What API Gateway answers when the integration fails.
      log({ event: 'function-error', requestId, error: errorName(error) });
      return send(res, 500, { message: 'Internal Server Error' });
    }
    writeResult(res, result);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${route}`,
    port,
    // Requests in progress may finish for a few seconds; then connections are cut.
    close: () => closeServer(server),
  };
}

/** Closes an HTTP server: requests in progress may finish for a few seconds, then connections are cut. */
export function closeServer(server: Server, graceMs = CLOSE_GRACE_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Reads the whole body, or stops at the limit: a declared `Content-Length`
 * over it is refused before reading anything; a chunked body is refused as soon
 * as it crosses it (what was read so far is dropped, the rest is discarded).
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.resolve('too-large');
  // Listeners rather than `for await`: leaving an async iterator early destroys
  // the socket, and the client would never see the 413.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData).off('end', onEnd);
      chunks.length = 0;
      resolve('too-large');
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/**
 * Answers 413 and discards the rest of the upload (read, not kept). The
 * connection is not closed early: closing a socket with unread input resets
 * it, and the client would lose the answer.
 */
function tooLarge(req: IncomingMessage, res: ServerResponse): void {
  send(res, 413, { message: 'Request Entity Too Large' });
  req.resume();
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The request as an HTTP API payload 2.0 event, as API Gateway builds it. */
function toEvent(req: IncomingMessage, url: URL, body: Buffer, route: string, requestId: string): APIGatewayProxyEventV2 {
  // API Gateway lower-cases header names and joins repeated headers with commas;
  // cookies travel in their own field.
  const headers: Record<string, string> = {};
  let cookies: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    if (name === 'cookie')
      cookies = cookies.concat(
        value
          .split(';')
          .map((c) => c.trim())
          .filter(Boolean),
      );
    else headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;

  const method = req.method ?? 'GET';
  const now = new Date();
  return {
    version: '2.0',
    routeKey: `ANY ${route}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers['host']?.split(':')[0] ?? '127.0.0.1',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: `ANY ${route}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length ? { body: body.toString('utf8') } : {}),
    isBase64Encoded: false,
  };
}

/** Writes a function result in one piece, as the buffering front does. */
function writeResult(res: ServerResponse, result: APIGatewayProxyResultV2): void {
  // A bare value (string or object) is the body of a 200 JSON answer (payload 2.0 rules).
  if (typeof result === 'string' || result.statusCode === undefined) {
    const text = typeof result === 'string' ? result : JSON.stringify(result);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  // The body is complete, so framing is by length (drop any streaming framing the function set).
  delete headers['transfer-encoding'];
  headers['content-length'] = body.length;
  res.writeHead(result.statusCode, headers);
  res.end(body);
}
