import { type createMcpHandler, DEFAULT_MAX_REQUEST_BODY_SIZE } from '@modelcontextprotocol/server';
import { nestsDeeperThan, topLevelId } from '../json-depth.ts';
import type { ClientCapabilities } from '../tasks/model.ts';
import { traceMcpRequest } from '../tracing/mcp.ts';
import { NO_TRACING, type Tracing } from '../tracing/tracing.ts';
import { HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, META_KEYS, PROTOCOL_VERSION } from '../wire.ts';
import { missingTasksCapability } from './errors.ts';
import { type OriginPolicy, originRefusal } from './origin.ts';
import { type HeaderParam, paramHeaderProblem } from './param-headers.ts';
import { inputResponsesProblem, TOO_DEEP_MESSAGE } from './preflight.ts';
import { declaresTasks } from './server.ts';

type McpHandler = ReturnType<typeof createMcpHandler>;

/** What the endpoint knows of a caller besides its principal. */
export interface CallerFacts {
  /** A machine's token (`TASKS_MACHINE_CLAIM`): nobody signs in as it, so its tasks' questions for a person are for approvers. */
  machine?: boolean;
  /** The caller's name or email claim, kept on the tasks it starts (personal data: `TaskBase.requester`). */
  requester?: string;
}

/** A tool's parameters mirrored into `Mcp-Param-*` headers, by the tool's name (none: `undefined`). */
export type HeaderParamsOf = (tool: string) => readonly HeaderParam[] | undefined;

/**
 * The HTTP side of the endpoint, in front of the SDK's handler: the `Origin`
 * policy, the body bound, one parse of the body (handed to the SDK parsed)
 * and the checks the SDK leaves to the extension or to us ({@link preflight}).
 */
export function httpFront(
  handler: McpHandler,
  originPolicy: OriginPolicy,
  headerParamsOf: HeaderParamsOf,
  tracing: Tracing = NO_TRACING,
): (request: Request, principal: string, caller?: CallerFacts) => Promise<Response> {
  return async (request, principal, caller) => {
    const refused = originRefusal(request, originPolicy);
    if (refused) return refused;
    // What the handlers know of the caller travels with the principal (`machine`, `requester`: see `CallerFacts`).
    const extra = {
      ...(caller?.machine ? { machine: true } : {}),
      ...(caller?.requester === undefined ? {} : { requester: caller.requester }),
    };
    const authInfo = { token: '', clientId: principal, scopes: [], ...(Object.keys(extra).length > 0 ? { extra } : {}) };
    if (request.method !== 'POST') return handler.fetch(request, { authInfo });
    // The body is read and parsed once here and handed to the SDK parsed, so
    // the checks below cost no second parse.
    const text = await request.text();
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) return jsonRpcError(413, null, INVALID_REQUEST, 'Request body too large');
    // Before the parse: nothing downstream (size measures, schema checks, sealing) may meet a value deep enough to overflow the stack.
    // Answered with the request's id where its top level names one: clients match replies by id.
    if (nestsDeeperThan(text)) return jsonRpcError(400, topLevelId(text), INVALID_REQUEST, TOO_DEEP_MESSAGE);
    const bare = new Request(request.url, { method: 'POST', headers: request.headers });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return handler.fetch(new Request(bare, { body: text }), { authInfo }); // the SDK answers -32700
    }
    // The request's server span (none with tracing off): the answer comes from inside it.
    return traceMcpRequest(
      tracing,
      request.headers,
      body,
      async () => preflight(request.headers, body, headerParamsOf) ?? handler.fetch(bare, { authInfo, parsedBody: body }),
    );
  };
}

/** The largest request body accepted (the SDK's own default bound). */
const MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE;

/**
 * Checks the SDK leaves to the extension or routes differently:
 * - a JSON-RPC batch under the 2026-07-28 header is invalid (batches do not
 *   exist in that revision); without this, envelope-less batches would be
 *   routed to the 2025-era leg and refused with a misleading version error;
 * - `subscriptions/listen` asking for `taskIds` without declaring the
 *   extension gets `-32021` (spec items 37, 44). The SDK owns listen streams;
 *   on this buffered front they are acknowledged and end at once, and no task
 *   notifications are offered (they are optional: clients poll `tasks/get`);
 * - a 2026-07-28 `tools/call` whose `Mcp-Param-*` headers do not stand for
 *   its arguments is refused `-32020`, HTTP 400, before anything runs or is
 *   written ({@link paramHeaderProblem}; the SDK checks `Mcp-Method` and
 *   `Mcp-Name`, and would check these only for its own high-level server);
 * - `inputResponses` that are not an object of objects are refused `-32602`
 *   (on `tasks/update` and on `tools/call` retries alike) before the SDK
 *   would reshape them into an empty answer ({@link inputResponsesProblem}).
 */
function preflight(headers: Headers, body: unknown, headerParamsOf: HeaderParamsOf): Response | undefined {
  if (Array.isArray(body)) {
    if (headers.get('mcp-protocol-version') === PROTOCOL_VERSION) {
      return jsonRpcError(400, null, INVALID_REQUEST, `JSON-RPC batches are not part of protocol revision ${PROTOCOL_VERSION}`);
    }
    return undefined;
  }
  const message = body as {
    id?: unknown;
    method?: unknown;
    params?: { name?: unknown; arguments?: unknown; notifications?: { taskIds?: unknown }; _meta?: Record<string, unknown> };
  } | null;
  const mismatch = paramHeaderMismatch(headers, message, headerParamsOf);
  if (mismatch) return jsonRpcError(400, echoableId(message?.id), HEADER_MISMATCH, mismatch);
  const malformed = typeof message?.method === 'string' ? inputResponsesProblem(message.method, message.params) : undefined;
  // In-band like the handlers' own -32602 (HTTP 200), with the request's id.
  if (malformed) return jsonRpcError(200, echoableId(message?.id), INVALID_PARAMS, malformed);
  if (message?.method !== 'subscriptions/listen' || message.params?.notifications?.taskIds === undefined) return undefined;
  const capabilities = (message.params._meta?.[META_KEYS.clientCapabilities] ?? {}) as ClientCapabilities;
  if (declaresTasks(capabilities)) return undefined;
  const error = missingTasksCapability();
  return jsonRpcError(400, message.id ?? null, error.code, error.message, error.data);
}

/** On the 2026-07-28 wire (by the header or the body's envelope), a `tools/call`'s `Mcp-Param-*` problem, if any. */
function paramHeaderMismatch(
  headers: Headers,
  message: { method?: unknown; params?: { name?: unknown; arguments?: unknown; _meta?: Record<string, unknown> } } | null,
  headerParamsOf: HeaderParamsOf,
): string | undefined {
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
  const modern =
    headers.get('mcp-protocol-version') === PROTOCOL_VERSION || message.params._meta?.[META_KEYS.protocolVersion] === PROTOCOL_VERSION;
  const params = modern ? headerParamsOf(message.params.name) : undefined;
  return params ? paramHeaderProblem(params, message.params.arguments, headers) : undefined;
}

/** A request id as JSON-RPC allows it (string or number), else `null`. */
function echoableId(id: unknown): string | number | null {
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function jsonRpcError(status: number, id: unknown, code: number, message: string, data?: unknown): Response {
  return Response.json({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } }, { status });
}
