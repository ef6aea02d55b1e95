/**
 * End-to-end helpers for tool authors: the whole local stack (the deployed
 * handlers on dynalite and fauxqs, as `npm start` runs them) inside the test
 * process, and a client that calls a tool as a task and drives it to its end
 * over HTTP, answering its questions.
 *
 * ```ts
 * const stack = await startTestStack({ tools });
 * try {
 *   const task = await callTool(stack.url, 'approval_gate', { action: 'deploy' }, { answers: { approval: accept({ approve: true }) } });
 *   assert.equal(task.status, 'completed');
 * } finally {
 *   await stack.close();
 * }
 * ```
 *
 * For a tool's logic alone, `kit.ts` is faster: no HTTP, no emulators.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from '../bin/local/stack.ts';
import type { Log } from '../shared/log.ts';
import { paramHeadersFor } from '../shared/protocol/param-headers.ts';
import type { ToolDefinition } from '../shared/runtime/tool.ts';
import { META_KEYS, PROTOCOL_VERSION, TASKS_EXTENSION } from '../shared/wire.ts';

export interface TestStack {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The temporary directory the stack keeps its table in. */
  dataDir: string;
  /** Stops the stack and removes its data. */
  close(): Promise<void>;
}

export interface TestStackOptions {
  /** The tools to serve: your project's (in this repository, the catalogue `TASKS_TOOLSET` names when left out). */
  tools?: readonly ToolDefinition[];
  /**
   * The functions' settings (`TASKS_*`; `TASKS_TOOLSET` defaults to `product`)
   * and tools' settings as `<TOOL>_<KEY>` variables. Nothing is read from
   * this process's environment. Workflow tools' Task states run by the local
   * handlers in `src/local-states.ts` (`TASKS_LOCAL_STATES` names another file).
   */
  env?: Record<string, string>;
  /** A `settings.local.json` to read tools' settings from (default: none). */
  settingsFile?: string;
  /** Receives the stack's log lines (default: dropped). */
  log?: Log;
}

/** Starts the local stack on a free port of 127.0.0.1 with a fresh, temporary table. */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-test-stack-'));
  try {
    const stack = await startLocalStack({
      port: 0,
      dataDir,
      ...(options.tools ? { tools: options.tools } : {}),
      env: options.env ?? {},
      settingsFile: options.settingsFile ?? join(dataDir, 'no-settings.json'),
      log: options.log ?? (() => {}),
      // A test's tasks are done (or abandoned) when it closes the stack.
      drainMs: 1000,
    });
    return {
      url: stack.url,
      dataDir,
      close: async () => {
        await stack.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** A task as {@link callTool} saw it last. */
export interface CalledTask {
  /** `undefined` when the tool answered inside the request (not as a task). */
  taskId: string | undefined;
  status: 'completed' | 'failed' | 'cancelled';
  /** The `CallToolResult` of a completed task. */
  result?: { content: Array<Record<string, unknown>>; structuredContent?: Record<string, unknown>; isError?: boolean };
  /** The JSON-RPC error of a failed task. */
  error?: { code: number; message: string; data?: unknown };
  /** Every distinct `statusMessage` seen while polling, in order. */
  statusMessages: string[];
}

/**
 * Calls a tool as a tasks-aware client would (its `tools/list` entry read
 * first, for the `Mcp-Param-*` headers its `x-mcp-header` parameters need)
 * and polls `tasks/get` until the task ends. Questions (`input_required`) are answered from `answers` by key
 * through `tasks/update`; a question without an answer fails the call, as
 * does a task still running after `timeoutMs` (default 30 s).
 */
export async function callTool(
  url: string,
  name: string,
  args: Record<string, unknown>,
  options: { answers?: Record<string, unknown>; timeoutMs?: number } = {},
): Promise<CalledTask> {
  const listed = (await rpc(url, 'tools/list', {}))['tools'] as Array<{ name: string; inputSchema: Record<string, unknown> }>;
  const schema = listed.find((tool) => tool.name === name)?.inputSchema;
  const created = await rpc(url, 'tools/call', { name, arguments: args }, schema ? paramHeadersFor(schema, args) : {});
  if (created['resultType'] !== 'task') {
    return { taskId: undefined, status: 'completed', result: created as CalledTask['result'] & object, statusMessages: [] };
  }
  const taskId = created['taskId'] as string;
  const answers = options.answers ?? {};
  const answered = new Set<string>();
  const statusMessages: string[] = [];
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const task = await rpc(url, 'tasks/get', { taskId });
    const message = task['statusMessage'];
    if (typeof message === 'string' && statusMessages.at(-1) !== message) statusMessages.push(message);
    const status = task['status'] as string;
    if (status === 'completed' || status === 'failed' || status === 'cancelled') {
      return {
        taskId,
        status,
        ...(task['result'] ? { result: task['result'] as NonNullable<CalledTask['result']> } : {}),
        ...(task['error'] ? { error: task['error'] as NonNullable<CalledTask['error']> } : {}),
        statusMessages,
      };
    }
    if (status === 'input_required') {
      const keys = Object.keys((task['inputRequests'] ?? {}) as Record<string, unknown>).filter((key) => !answered.has(key));
      const missing = keys.filter((key) => !Object.hasOwn(answers, key));
      if (missing.length > 0) throw new Error(`callTool: ${name} asks for ${missing.join(', ')}, which were given no answer`);
      if (keys.length > 0) {
        await rpc(url, 'tasks/update', { taskId, inputResponses: Object.fromEntries(keys.map((key) => [key, answers[key]])) });
        for (const key of keys) answered.add(key);
      }
    }
    if (Date.now() > deadline)
      throw new Error(`callTool: task ${taskId} of ${name} still ${status} after ${options.timeoutMs ?? 30_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One JSON-RPC request as a 2026-07-28 client sends it, declaring the tasks extension and elicitation. */
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const target = typeof params['name'] === 'string' ? params['name'] : typeof params['taskId'] === 'string' ? params['taskId'] : undefined;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL_VERSION,
      'Mcp-Method': method,
      ...(target === undefined ? {} : { 'Mcp-Name': target }),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          [META_KEYS.protocolVersion]: PROTOCOL_VERSION,
          [META_KEYS.clientInfo]: { name: 'mcp-tasks-test-kit', version: '1.0.0' },
          [META_KEYS.clientCapabilities]: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
        },
      },
    }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  let body: { result?: Record<string, unknown>; error?: { code: number; message: string } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch (error) {
    throw new Error(`${method}: HTTP ${response.status}, not a JSON body (${(error as Error).message}): ${text.slice(0, 200)}`);
  }
  if (!body.result)
    throw new Error(
      `${method}: ${body.error ? `error ${body.error.code} ${body.error.message}` : `HTTP ${response.status} without a result`}`,
    );
  return body.result;
}
