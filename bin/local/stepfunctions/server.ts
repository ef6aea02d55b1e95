/**
 * The emulator's HTTP front on 127.0.0.1: AWS JSON 1.0 as Step Functions
 * speaks it (`POST /`, `X-Amz-Target: AWSStepFunctions.<Operation>`, a JSON
 * body), errors as AWS sends them (HTTP 400 and a `__type` naming the error,
 * 500 for a failure of its own).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localhostAllowedHostnames, validateHostHeader } from '@modelcontextprotocol/server';
import { errorName, type Log } from '../../../shared/log.ts';
import { closeServer } from '../http.ts';
import { ApiError, errorBody } from './api-errors.ts';

/** One operation: the parsed request body in, the answer body out. */
export type Handler = (body: Record<string, unknown>) => Promise<object> | object;

/** Step Functions requests are small (definitions up to 1 MiB, payloads up to 256 KiB, escaped); a body over this is refused unread. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const TARGET_PREFIX = 'AWSStepFunctions.';

export interface ApiServer {
  endpoint: string;
  close(): Promise<void>;
}

/** Serves `operations` on 127.0.0.1, on port `listenOn` (default: a free one). */
export async function startApiServer(operations: ReadonlyMap<string, Handler>, log: Log, listenOn = 0): Promise<ApiServer> {
  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      log({ event: 'sfn-request-failed', error: errorName(error) });
      if (!res.headersSent) answer(res, 500, errorBody(new ApiError('InternalFailure', 'Internal failure', 500)));
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A page whose DNS name is rebound to 127.0.0.1 names another host: refused before anything runs.
    const host = validateHostHeader(req.headers.host, localhostAllowedHostnames());
    if (!host.ok && host.errorCode === 'invalid_host') {
      req.resume();
      return answer(res, 403, errorBody(new ApiError('ValidationException', 'This Host is not served')));
    }
    const target = String(req.headers['x-amz-target'] ?? '');
    const name = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
    const operation = req.method === 'POST' ? operations.get(name) : undefined;
    if (operation === undefined) {
      req.resume();
      return answer(res, 400, errorBody(new ApiError('UnknownOperationException', `Unknown operation: '${target}'`)));
    }
    try {
      const body = parseBody(await readBody(req));
      answer(res, 200, await operation(body));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500)
        log({ event: 'sfn-request-failed', operation: name, error: errorName(error) });
      const failure = error instanceof ApiError ? error : new ApiError('InternalFailure', 'Internal failure', 500);
      answer(res, failure.status, errorBody(failure));
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenOn, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => closeServer(server, 1000) };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    req.resume();
    return Promise.reject(new ApiError('ValidationException', `The request is larger than ${MAX_BODY_BYTES} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () =>
      size > MAX_BODY_BYTES
        ? reject(new ApiError('ValidationException', `The request is larger than ${MAX_BODY_BYTES} bytes`))
        : resolve(Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
}

/** The body as a JSON object (an empty body is `{}`), or `SerializationException`. */
function parseBody(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError('SerializationException', 'The request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError('SerializationException', 'The request body is not a JSON object');
  return body as Record<string, unknown>;
}

function answer(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}
