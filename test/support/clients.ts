/**
 * Real MCP clients for the end-to-end tests, wired the way an application
 * would wire them, plus a wire recorder so the tests can see (and validate)
 * the raw JSON-RPC traffic the clients exchange with the server.
 *
 * - The MCP TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4.0)
 *   over Streamable HTTP, pinned to 2026-07-28 (or left in its default
 *   2025-era mode). Its wire codec accepts only `resultType` `complete` and
 *   `input_required`: a `tools/call` answered with a `CreateTaskResult`
 *   (`resultType: "task"`) rejects with `SdkError(UNSUPPORTED_RESULT_TYPE)`
 *   whose `data` is only `{resultType, method}` (no taskId). The task handle
 *   therefore has to be read off the wire, through the transport's `fetch`
 *   hook ({@link WireRecorder}). `tasks/get|update|cancel` go through
 *   `client.request(request, resultSchema)`; the SDK lifts `resultType` off
 *   the result before the schema sees it, and sets `Mcp-Name` from
 *   `params.taskId` itself.
 * - `@modelcontextprotocol/ext-tasks` 0.2.2's requester session on top of that
 *   SDK client. Against a 2026-07-28 Tasks server it requires a host-owned
 *   `rawDispatch` (for `tools/call` and `tasks/*`, which the SDK codec
 *   rejects) and the request framing; {@link httpRawDispatch} is that
 *   coordinator: plain JSON-RPC over HTTP with the standard headers.
 */
import { AssertionError } from 'node:assert';
import {
  type CallToolResult,
  Client,
  type FetchLike,
  type OAuthClientProvider,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import {
  type ApplicationElicitResult,
  type ApplicationInputRequest,
  createApplicationInputHandler,
  createTaskSessionEndpointId,
  createTaskSessionFromClient,
  DispatchError,
  type RawClientDispatch,
  type ResolvedInputExchangeContext,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { type DetailedTaskV2, DetailedTaskV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import * as z from 'zod';
import { pollUntil as pollTask } from '../../bin/cli/client.ts';
import { assertValid } from './schemas.ts';
import { sleep } from './wait.ts';
import { type JsonRpcMessage, PROTOCOL_VERSION, parseMessages, TASKS_EXTENSION } from './wire.ts';

export const LEGACY_PROTOCOL_VERSION = '2025-11-25';

const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

// ---------------------------------------------------------------------------
// Wire recording
// ---------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One HTTP exchange as it crossed the wire. */
export interface Exchange {
  /** Order of the request (0-based). */
  seq: number;
  /** When the request was sent (`Date.now()`). */
  sentAt: number;
  httpMethod: string;
  /** The request headers as sent (names lower-cased by `Headers`). */
  headers: Headers;
  /** The parsed request body, when it was one JSON-RPC message. */
  request: JsonRpcMessage | undefined;
  status: number;
  contentType: string;
  /** Every JSON-RPC message in the response body (SSE events included). */
  messages: JsonRpcMessage[];
  /** The response to `request` (matched by id), if any. */
  response: JsonRpcMessage | undefined;
}

/**
 * A `fetch` that records every exchange. The local stack's front buffers
 * every response (nothing streams), so reading a copy of each body before
 * handing the response back never blocks.
 */
export class WireRecorder {
  readonly exchanges: Exchange[] = [];

  readonly fetch: FetchLike = async (url, init) => {
    const seq = this.exchanges.length;
    const sentAt = Date.now();
    const headers = new Headers(init?.headers);
    const request = typeof init?.body === 'string' ? parseOne(init.body) : undefined;
    const response = await fetch(url, init);
    const contentType = response.headers.get('content-type') ?? '';
    const messages = parseMessages(await response.clone().text(), contentType);
    const reply =
      request?.id === undefined
        ? undefined
        : messages.find((message) => message.id === request.id && ('result' in message || 'error' in message));
    this.exchanges.push({
      seq,
      sentAt,
      httpMethod: init?.method ?? 'GET',
      headers,
      request,
      status: response.status,
      contentType,
      messages,
      response: reply,
    });
    return response;
  };

  /** Every JSON-RPC request exchange for `method` (optionally with `params.taskId`), in order. */
  requests(method: string, taskId?: string): Exchange[] {
    return this.exchanges.filter(
      (exchange) => exchange.request?.method === method && (taskId === undefined || exchange.request.params?.['taskId'] === taskId),
    );
  }

  /** The latest exchange for `method` matching `predicate`; fails if there is none. */
  last(method: string, predicate: (exchange: Exchange) => boolean = () => true): Exchange {
    const found = this.exchanges.filter((exchange) => exchange.request?.method === method && predicate(exchange)).at(-1);
    if (!found) throw new AssertionError({ message: `No ${method} request was recorded on the wire` });
    return found;
  }
}

/** The `result` of a recorded exchange; fails with the raw exchange when there is none. */
export function rawResult(exchange: Exchange): Record<string, unknown> {
  const result = exchange.response?.result;
  if (result === undefined) {
    throw new AssertionError({
      message:
        `Expected a JSON-RPC result for ${exchange.request?.method}, got HTTP ${exchange.status}: ` +
        `${JSON.stringify(exchange.messages)}`,
    });
  }
  return result;
}

function parseOne(text: string): JsonRpcMessage | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? (value as JsonRpcMessage) : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// The SDK v2 client
// ---------------------------------------------------------------------------

export interface SdkConnection {
  client: Client;
  wire: WireRecorder;
  close(): Promise<void>;
}

/**
 * Connects an SDK v2 client over Streamable HTTP.
 *
 * - `modern`: pinned to 2026-07-28 (connect probes `server/discover`), and
 *   declares `elicitation` plus the Tasks extension; the SDK then puts the
 *   `_meta` envelope (protocol version, client info, these capabilities) on
 *   every request.
 * - `legacy`: the SDK's default posture, the plain 2025 `initialize`
 *   handshake (protocol 2025-11-25), no envelope, no 2026 headers.
 */
export async function connectSdkClient(
  url: string,
  era: 'modern' | 'legacy',
  name = `e2e-sdk-${era}`,
  options: { authProvider?: OAuthClientProvider } = {},
): Promise<SdkConnection> {
  const wire = new WireRecorder();
  const client =
    era === 'modern'
      ? new Client(
          { name, version: '1.0.0' },
          {
            capabilities: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
            versionNegotiation: { mode: { pin: PROTOCOL_VERSION } },
          },
        )
      : new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: {} } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: wire.fetch,
      ...(options.authProvider ? { authProvider: options.authProvider } : {}),
    }),
  );
  return { client, wire, close: () => client.close() };
}

/** A `tools/call` outcome through the SDK client: a task handle or a plain result. */
export type SdkToolOutcome =
  | { kind: 'task'; created: Record<string, unknown>; sdkError: SdkError }
  | { kind: 'result'; result: CallToolResult };

/** An empty-ack result as the SDK hands it back (`resultType` lifted off). */
const LiftedAck = z.looseObject({});

/**
 * The Tasks requester side on top of the SDK v2 client. Every task-method
 * response is also read off the wire and validated against the
 * `@modelcontextprotocol/ext-tasks/core/v2` schemas, and every `tasks/*`
 * request is checked for `Mcp-Name: <taskId>` (which the SDK sets).
 */
export class SdkTasks {
  /** `diagnostics` adds context (e.g. the server's log) to a poll that times out. */
  constructor(
    readonly connection: SdkConnection,
    private readonly diagnostics: () => string = () => '',
  ) {}

  get wire(): WireRecorder {
    return this.connection.wire;
  }

  /**
   * `client.callTool(...)`. A `CreateTaskResult` makes the SDK reject with
   * `UNSUPPORTED_RESULT_TYPE`; the handle is then taken from the recorded
   * response and validated as a `CreateTaskResult`.
   */
  async callTool(name: string, args: Record<string, unknown>): Promise<SdkToolOutcome> {
    try {
      return { kind: 'result', result: await this.connection.client.callTool({ name, arguments: args }) };
    } catch (error) {
      if (!(error instanceof SdkError) || error.code !== SdkErrorCode.UnsupportedResultType) throw error;
      const data = error.data as { resultType?: unknown } | undefined;
      if (data?.resultType !== 'task') throw error;
      const created = rawResult(this.wire.last('tools/call', (exchange) => exchange.request?.params?.['name'] === name));
      assertValid('CreateTaskResult', created);
      return { kind: 'task', created, sdkError: error };
    }
  }

  /** `tasks/get` through `client.request`; returns the SDK's (lifted) value and the raw result. */
  async get(taskId: string): Promise<{ task: DetailedTaskV2; raw: Record<string, unknown> }> {
    const task = await this.connection.client.request({ method: 'tasks/get', params: { taskId } }, DetailedTaskV2Schema);
    const raw = this.#checked('tasks/get', taskId);
    assertValid('GetTaskResult', raw);
    return { task, raw };
  }

  /** `tasks/update` through `client.request`; returns the raw ack (validated). */
  async update(taskId: string, inputResponses: Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.connection.client.request({ method: 'tasks/update', params: { taskId, inputResponses } }, LiftedAck);
    const raw = this.#checked('tasks/update', taskId);
    assertValid('UpdateTaskResult', raw);
    return raw;
  }

  /** `tasks/cancel` through `client.request`; returns the raw ack (validated). */
  async cancel(taskId: string): Promise<Record<string, unknown>> {
    await this.connection.client.request({ method: 'tasks/cancel', params: { taskId } }, LiftedAck);
    const raw = this.#checked('tasks/cancel', taskId);
    assertValid('CancelTaskResult', raw);
    return raw;
  }

  /**
   * Polls `tasks/get` until `done` holds, sleeping the `pollIntervalMs` of
   * the latest answer between polls. Returns the final task and every
   * status seen, in order.
   */
  async pollUntil(
    taskId: string,
    done: (task: DetailedTaskV2) => boolean,
    options: { timeoutMs: number; firstDelayMs?: number },
  ): Promise<{ task: DetailedTaskV2; raw: Record<string, unknown>; statuses: string[] }> {
    const statuses: string[] = [];
    let raw: Record<string, unknown> = {};
    if (options.firstDelayMs) await sleep(options.firstDelayMs);
    try {
      const task = await pollTask(
        async () => {
          const latest = await this.get(taskId);
          statuses.push(latest.task.status);
          raw = latest.raw;
          return latest.task;
        },
        done,
        { timeoutMs: options.timeoutMs, interval: (task) => task.pollIntervalMs ?? 1000, explain: () => JSON.stringify(raw) },
      );
      return { task, raw, statuses };
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      throw new AssertionError({
        message:
          `Task ${taskId} did not reach the expected state: ${error instanceof Error ? error.message : String(error)}; statuses ` +
          `seen: ${statuses.join(' → ')}\n${this.diagnostics()}`,
      });
    }
  }

  /** The raw result of the latest `method` for `taskId`, after checking its `Mcp-Name` header. */
  #checked(method: string, taskId: string): Record<string, unknown> {
    const exchange = this.wire.last(method, (candidate) => candidate.request?.params?.['taskId'] === taskId);
    assertMcpName(exchange, taskId);
    return rawResult(exchange);
  }
}

/** Fails unless the recorded request carried `Mcp-Name: <taskId>` (spec item 79). */
export function assertMcpName(exchange: Exchange, taskId: string): void {
  const header = exchange.headers.get('mcp-name');
  if (header !== taskId) {
    throw new AssertionError({
      message: `${exchange.request?.method} must carry Mcp-Name = params.taskId`,
      actual: header,
      expected: taskId,
      operator: 'strictEqual',
    });
  }
}

// ---------------------------------------------------------------------------
// The ext-tasks client
// ---------------------------------------------------------------------------

/**
 * The host-owned request coordinator ext-tasks needs for 2026-07-28 task
 * traffic: one JSON-RPC request per POST with the standard headers derived
 * from the body (`MCP-Protocol-Version` from `_meta`, `Mcp-Method`, and
 * `Mcp-Name` for `tools/call`), then the headers ext-tasks passes in the
 * dispatch context (for `tasks/*` it sets `Mcp-Name` itself; this
 * coordinator deliberately does not derive it, so the tests see the
 * library's own header). JSON and SSE-framed answers are both understood.
 */
export function httpRawDispatch(url: string, fetchImpl: FetchLike = fetch): RawClientDispatch {
  let nextId = 1;
  return async (request, options) => {
    if (!isRecord(request) || typeof request['method'] !== 'string')
      throw new DispatchError('MCP request must be a JSON object with a method');
    const method = request['method'];
    const params = isRecord(request['params']) ? request['params'] : {};
    const meta = isRecord(params['_meta']) ? params['_meta'] : {};
    const version = typeof meta[PROTOCOL_VERSION_META] === 'string' ? meta[PROTOCOL_VERSION_META] : PROTOCOL_VERSION;
    const id = `ext-tasks-${nextId++}`;

    const headers = new Headers({
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': version,
      'Mcp-Method': method,
    });
    if (method === 'tools/call' && typeof params['name'] === 'string') headers.set('Mcp-Name', params['name']);
    for (const [name, value] of Object.entries(options?.context?.headers ?? {})) headers.set(name, value);

    const timeoutMs = options?.context?.requestTimeoutMs;
    const signals = [options?.signal, timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs)].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, ...request }),
        ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      });
    } catch (error) {
      throw new DispatchError(`POST ${method} failed`, true, { cause: error });
    }
    const messages = parseMessages(await response.text(), response.headers.get('content-type') ?? '');
    const reply = messages.find((message) => message.id === id && ('result' in message || 'error' in message));
    if (reply?.error !== undefined) return { kind: 'error', error: reply.error as never };
    if (reply?.result !== undefined) return { kind: 'result', result: reply.result as never };
    throw new DispatchError(`HTTP ${response.status} without a JSON-RPC response to ${method}`, response.status >= 500);
  };
}

export interface ExtTasksConnection extends SdkConnection {
  session: TaskEnabledSession;
  /** Every input request the session handed to the application, with its context. */
  inputs: Array<{ request: ApplicationInputRequest; context: ResolvedInputExchangeContext }>;
  /** Background errors the session reported. */
  errors: Error[];
}

/**
 * An ext-tasks requester session over a modern SDK client. `answer` plays
 * the user: it gets each elicitation (with its `inputId`) and returns the
 * `ElicitResult`; the session submits it with `tasks/update`.
 */
export async function connectExtTasksSession(
  url: string,
  answer: (request: ApplicationInputRequest, context: ResolvedInputExchangeContext) => ApplicationElicitResult,
): Promise<ExtTasksConnection> {
  const sdk = await connectSdkClient(url, 'modern', 'e2e-ext-tasks');
  const inputs: ExtTasksConnection['inputs'] = [];
  const errors: Error[] = [];
  const onInputRequest = createApplicationInputHandler({
    elicitation: (request, context) => {
      inputs.push({ request, context });
      return answer(request, context);
    },
    sampling: () => {
      throw new Error('This client does not sample');
    },
    roots: () => ({ roots: [] }),
  });
  const session = createTaskSessionFromClient(sdk.client, {
    endpointId: await createTaskSessionEndpointId('mcp-tasks-e2e', { url }),
    rawDispatch: httpRawDispatch(url, sdk.wire.fetch),
    // ext-tasks adds the Tasks extension to these capabilities itself.
    v2RequestFraming: {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: 'e2e-ext-tasks', version: '1.0.0' },
      clientCapabilities: { elicitation: {} },
    },
    onInputRequest,
    onError: (error) => errors.push(error),
  });
  return {
    ...sdk,
    session,
    inputs,
    errors,
    close: async () => {
      await session.close();
      await sdk.client.close();
    },
  };
}
