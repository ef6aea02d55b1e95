/**
 * A task-aware MCP client for the Tasks extension (`io.modelcontextprotocol/tasks`,
 * protocol 2026-07-28) over plain HTTP: one JSON-RPC request per POST, with the
 * standard headers and the per-request `_meta` envelope. It calls a tool and,
 * when the server answers with a task, follows it to its end — polling
 * `tasks/get` at the server's `pollIntervalMs`, handing each `input_required`
 * round to the caller and submitting the answers with `tasks/update` — and it
 * gets, answers and cancels tasks by id. With `retry`, a request the transport
 * fails (the endpoint restarting, a gateway's "try later") is tried again for
 * a while (`transport.ts`).
 *
 * No MCP SDK is needed: this module depends on nothing but `fetch`, so the CLI,
 * the tests and any script can use it (its wire constants come from
 * `shared/wire.ts`, its types from the task model and `shared/protocol/wire-types.ts`).
 * It is never imported by the functions.
 */

import { delay } from '../../shared/delay.ts';
import { TasksError } from '../../shared/errors.ts';
import { paramHeadersFor } from '../../shared/protocol/param-headers.ts';
import type { DetailedTask } from '../../shared/protocol/wire-types.ts';
import { type InputRequest, isTerminal, needsAnotherApprover } from '../../shared/tasks/model.ts';
import { HEADER_MISMATCH, IDEMPOTENCY_KEY, INTERNAL_ERROR, META_KEYS, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../shared/wire.ts';
import { GatewayAnswer, type RetryOptions, tryLater, withRetries } from './transport.ts';

/** The code this client gives an HTTP 401 or 403 without a JSON-RPC answer (client-side: the server never sends it). */
const UNAUTHORIZED = -32001;

/** A JSON-RPC error answered by the server. */
export class McpError extends TasksError {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'McpError';
  }
}

/** What the caller answers for one round of input: `{ [key]: result }`, e.g. `{ approval: { action: 'accept', content: { approve: true } } }`. */
export type InputResponses = Record<string, unknown>;

/** Supplies answers to an input round; returning `undefined` leaves the task waiting (the follow loop stops). */
export type InputHandler = (requests: Record<string, InputRequest>, context: { taskId?: string }) => Promise<InputResponses | undefined>;

export interface ClientOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  clientInfo?: { name: string; version: string };
  /** Capabilities declared on every request besides the Tasks extension (default: form elicitation). */
  capabilities?: Record<string, unknown>;
  /** Per-request timeout (default 30 s). */
  requestTimeoutMs?: number;
  /**
   * Retries requests the transport fails, with backoff, for `forMs` (absent:
   * none). A `tools/call` is retried only when it carries an idempotency key,
   * so that a repeat returns the task the first attempt created.
   */
  retry?: Omit<RetryOptions, 'signal'>;
  fetch?: typeof fetch;
}

/** A `tools/call` answer: a finished result, or the task that will produce it. */
export type CallOutcome = { kind: 'result'; result: Record<string, unknown> } | { kind: 'task'; task: DetailedTask };

export interface FollowOptions {
  /** Called with every task state read (the first one included). */
  onUpdate?: (task: DetailedTask) => void;
  /** Answers `input_required` rounds; without it, following stops at the first one. */
  onInput?: InputHandler;
  /** Stops following (the task itself keeps going: cancel it explicitly). */
  signal?: AbortSignal;
  /** The first wait before the first poll (default: the handle's `pollIntervalMs`). */
  firstDelayMs?: number;
}

/** What one request sends besides its params: an abort signal, `_meta` entries, extra headers. */
interface RequestOptions {
  signal?: AbortSignal;
  meta?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * The open questions of a task the caller may answer, and those only another
 * person may decide: four-eyes ones (`needsAnotherApprover`), which the
 * server refuses from the task's caller, so no client of the caller's asks
 * anyone for them.
 */
export function splitQuestions(requests: Record<string, InputRequest>): {
  yours: Record<string, InputRequest>;
  approvers: string[];
} {
  const entries = Object.entries(requests);
  return {
    yours: Object.fromEntries(entries.filter(([, request]) => !needsAnotherApprover(request))),
    approvers: entries.filter(([, request]) => needsAnotherApprover(request)).map(([key]) => key),
  };
}

/** Why following stopped: the task ended, or it waits for input nobody gave. */
export type FollowOutcome = { task: DetailedTask; reason: 'terminal' | 'input_required' };

export class TasksClient {
  readonly url: string;
  readonly #options: ClientOptions;
  #nextId = 1;

  constructor(options: ClientOptions) {
    this.url = options.url;
    this.#options = options;
  }

  /**
   * Sends one JSON-RPC request with the 2026-07-28 headers and `_meta`
   * envelope; returns its `result`. Transport failures are retried as
   * {@link ClientOptions.retry} says; past that, {@link Unreachable}.
   */
  async request(method: string, params: Record<string, unknown> = {}, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const retry = this.#options.retry;
    const safe = method !== 'tools/call' || options.meta?.[IDEMPOTENCY_KEY] !== undefined;
    return withRetries(this.url, () => this.#send(id, method, params, options), {
      forMs: retry && safe ? retry.forMs : 0,
      ...(retry?.onRetry ? { onRetry: retry.onRetry } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** One attempt of {@link request}. */
  async #send(id: number, method: string, params: Record<string, unknown>, options: RequestOptions): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL_VERSION,
      'Mcp-Method': method,
    };
    const name = method === 'tools/call' ? params['name'] : method.startsWith('tasks/') ? params['taskId'] : undefined;
    if (typeof name === 'string') headers['Mcp-Name'] = name;
    Object.assign(headers, options.headers);
    if (this.#options.token) headers['Authorization'] = `Bearer ${this.#options.token}`;
    const meta = {
      [META_KEYS.protocolVersion]: PROTOCOL_VERSION,
      [META_KEYS.clientInfo]: this.#options.clientInfo ?? { name: 'mcp-tasks-client', version: '0.1.0' },
      [META_KEYS.clientCapabilities]: {
        ...(this.#options.capabilities ?? { elicitation: { form: {} } }),
        extensions: { [TASKS_EXTENSION]: {} },
      },
      ...options.meta,
    };
    const signals = [AbortSignal.timeout(this.#options.requestTimeoutMs ?? 30_000), ...(options.signal ? [options.signal] : [])];
    const response = await (this.#options.fetch ?? fetch)(this.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }),
      signal: AbortSignal.any(signals),
    });
    const text = await response.text();
    const reply = parseMessages(text, response.headers.get('content-type') ?? '').find((message) => message['id'] === id);
    const error = reply?.['error'] as { code: number; message: string; data?: unknown } | undefined;
    if (error) throw new McpError(error.code, error.message, error.data);
    const result = reply?.['result'];
    if (!isRecord(result)) throw withoutAnswer(response, method);
    return result;
  }

  /** `tools/list`. */
  async listTools(): Promise<Array<Record<string, unknown>>> {
    return (await this.request('tools/list'))['tools'] as Array<Record<string, unknown>>;
  }

  /**
   * `tools/call`. A synchronous tool's input rounds (`resultType: "input_required"`)
   * are answered through `onInput` and retried with the `requestState`; without
   * an answer the call fails.
   */
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
    options: { idempotencyKey?: string; onInput?: InputHandler; signal?: AbortSignal } = {},
  ): Promise<CallOutcome> {
    let extra: Record<string, unknown> = {};
    let paramHeaders: Record<string, string> | undefined;
    for (;;) {
      const send = () =>
        this.request(
          'tools/call',
          { name, arguments: args, ...extra },
          {
            ...(options.signal ? { signal: options.signal } : {}),
            ...(options.idempotencyKey ? { meta: { [IDEMPOTENCY_KEY]: options.idempotencyKey } } : {}),
            ...(paramHeaders ? { headers: paramHeaders } : {}),
          },
        );
      const result = await send().catch(async (error: unknown) => {
        // Refused before it ran for want of Mcp-Param-* headers: read the tool's schema, send them, once.
        if (!(error instanceof McpError && error.code === HEADER_MISMATCH) || paramHeaders !== undefined) throw error;
        const schema = (await this.listTools()).find((tool) => tool['name'] === name)?.['inputSchema'];
        paramHeaders = isRecord(schema) ? paramHeadersFor(schema, args) : {};
        if (Object.keys(paramHeaders).length === 0) throw error;
        return send();
      });
      if (result['resultType'] === 'task') return { kind: 'task', task: result as unknown as DetailedTask };
      if (result['resultType'] !== 'input_required') return { kind: 'result', result };
      const requests = result['inputRequests'] as Record<string, InputRequest>;
      const answers = await options.onInput?.(requests, {});
      if (!answers) throw new McpError(INTERNAL_ERROR, `${name} needs input before it can start, and none was given`);
      extra = { inputResponses: answers, ...(result['requestState'] === undefined ? {} : { requestState: result['requestState'] }) };
    }
  }

  /** `tasks/get`. */
  async getTask(taskId: string, signal?: AbortSignal): Promise<DetailedTask> {
    return (await this.request('tasks/get', { taskId }, signal ? { signal } : {})) as unknown as DetailedTask;
  }

  /** `tasks/update`: answers (some of) the task's outstanding input requests. */
  async answer(taskId: string, inputResponses: InputResponses): Promise<void> {
    await this.request('tasks/update', { taskId, inputResponses });
  }

  /** `tasks/cancel`; acknowledged for a finished task too (it stays as it ended). */
  async cancel(taskId: string): Promise<void> {
    await this.request('tasks/cancel', { taskId });
  }

  /**
   * Follows a task until it ends, or until it waits for input that `onInput`
   * does not give. Sleeps the latest `pollIntervalMs` between polls. A round
   * is answered once: while the server has not yet applied the answers, the
   * same keys are not asked again. Questions only another approver may decide
   * (four eyes, see {@link splitQuestions}) are never handed to `onInput`:
   * while they are all that is open, following goes on until someone decides
   * them or the task ends.
   */
  async follow(handle: Pick<DetailedTask, 'taskId'> & Partial<DetailedTask>, options: FollowOptions = {}): Promise<FollowOutcome> {
    const answered = new Set<string>();
    let interval = options.firstDelayMs ?? handle.pollIntervalMs ?? 1000;
    if (handle.status !== undefined) options.onUpdate?.(handle as DetailedTask);
    for (;;) {
      await delay(interval, options.signal);
      const task = await this.getTask(handle.taskId, options.signal);
      options.onUpdate?.(task);
      interval = task.pollIntervalMs ?? interval;
      if (isTerminal(task.status)) return { task, reason: 'terminal' };
      if (task.status !== 'input_required') continue;
      const { yours } = splitQuestions(task.inputRequests ?? {});
      const pending = Object.fromEntries(Object.entries(yours).filter(([key]) => !answered.has(key)));
      if (Object.keys(pending).length === 0) continue;
      const answers = await options.onInput?.(pending, { taskId: task.taskId });
      if (!answers) return { task, reason: 'input_required' };
      await this.answer(task.taskId, answers);
      for (const key of Object.keys(answers)) answered.add(key);
      interval = Math.min(interval, 250);
    }
  }

  /** Calls a tool and, if it became a task, follows it: the final `CallToolResult`-bearing state. */
  async run(
    name: string,
    args: Record<string, unknown> = {},
    options: FollowOptions & { idempotencyKey?: string } = {},
  ): Promise<CallOutcome | FollowOutcome> {
    const outcome = await this.callTool(name, args, options);
    if (outcome.kind === 'result') return outcome;
    return this.follow(outcome.task, options);
  }
}

/** What a response without a JSON-RPC answer means: not authorized, a gateway's "try later" (retried), or a failure. */
function withoutAnswer(response: Response, method: string): Error {
  if (response.status === 401)
    return new McpError(UNAUTHORIZED, 'HTTP 401: not authorized (sign in with `mcp-tasks login`, or check the token)');
  if (response.status === 403) {
    const scope = /scope="([^"]*)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
    return new McpError(
      UNAUTHORIZED,
      `HTTP 403: the token lacks a scope${scope ? ` (needs: ${scope}; sign in again with \`mcp-tasks login --scope '${scope}'\`)` : ''}`,
    );
  }
  if (tryLater(response.status)) return new GatewayAnswer(response.status);
  return new McpError(INTERNAL_ERROR, `HTTP ${response.status} without a JSON-RPC answer to ${method}`);
}

/**
 * Polls `get` until `done` holds, waiting `interval(latest)` between polls;
 * fails after `timeoutMs` with the last value seen (and `explain()` if given).
 */
export async function pollUntil<T>(
  get: () => Promise<T>,
  done: (value: T) => boolean,
  options: { timeoutMs: number; interval: (value: T) => number; explain?: (last: T) => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await get();
    if (done(value)) return value;
    if (Date.now() >= deadline) {
      throw new Error(
        `Not reached within ${options.timeoutMs} ms; last seen: ${options.explain ? options.explain(value) : JSON.stringify(value)}`,
      );
    }
    await delay(options.interval(value));
  }
}

/** The text blocks of a `CallToolResult`, joined. */
export function resultText(result: Record<string, unknown> | undefined): string {
  const content = Array.isArray(result?.['content']) ? (result['content'] as Array<{ type?: string; text?: string }>) : [];
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
}

/** Parses a JSON body, or every `data:` event of an SSE body (2025-era answers are SSE-framed). */
function parseMessages(text: string, contentType: string): Array<Record<string, unknown>> {
  const parse = (raw: string): Array<Record<string, unknown>> => {
    try {
      const value: unknown = JSON.parse(raw);
      if (Array.isArray(value)) return value.filter(isRecord);
      return isRecord(value) ? [value] : [];
    } catch {
      return []; // not JSON (e.g. an HTML error page): no message in it
    }
  };
  if (!contentType.includes('text/event-stream')) return text.trim() === '' ? [] : parse(text);
  return text.split(/\r?\n\r?\n/).flatMap((event) =>
    parse(
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n'),
    ),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
