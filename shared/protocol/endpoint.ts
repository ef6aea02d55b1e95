import { randomUUID } from 'node:crypto';
import { createMcpHandler, type McpRequestContext, ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type * as z from 'zod';
import type { TaskSettings } from '../config.ts';
import { errorName, type Log } from '../log.ts';
import { withMetrics } from '../metrics.ts';
import type { TaskQueue } from '../queue/queue.ts';
import { runTool } from '../runtime/run.ts';
import type { ToolDefinition, ToolResult } from '../runtime/tool.ts';
import { checkAnswers, checkBudget, MAX_ARGUMENTS_BYTES, MAX_CAPABILITIES_BYTES } from '../tasks/limits.ts';
import type { ClientCapabilities } from '../tasks/model.ts';
import type { TaskStore } from '../tasks/store.ts';
import { IDEMPOTENCY_KEY, INTERNAL_ERROR, TASKS_EXTENSION } from '../wire.ts';
import { invalidParams, missingTasksCapability } from './errors.ts';
import { httpFront } from './http-front.ts';
import {
  LEGACY_TASKS_CAPABILITY,
  legacyCreateTaskResult,
  legacyExecution,
  registerLegacyTaskMethods,
  wantsLegacyTask,
} from './legacy-tasks.ts';
import type { OriginPolicy } from './origin.ts';
import { inlineProgress } from './progress.ts';
import { createTaskResult, type RenderContext } from './render.ts';
import { requestStateSealer, type SealedState } from './request-state.ts';
import { clientCapabilities, declaresTasks, describeTool, TaskAwareServer } from './server.ts';
import { registerTaskMethods } from './task-methods.ts';

export const SERVER_INFO = { name: 'mcp-tasks-serverless', version: '0.1.0' } as const;

export interface EndpointDeps {
  store: TaskStore;
  queue: TaskQueue;
  tools: ReadonlyMap<string, ToolDefinition>;
  settings: Pick<TaskSettings, 'taskTtlMs' | 'pollIntervalMs' | 'maxPollIntervalMs' | 'retentionMs' | 'syncBudgetMs'>;
  now?: () => number;
  /** Structured, content-free log lines (never arguments, answers or tokens). */
  log: Log;
  /** The HMAC key sealing `requestState` (at least 32 bytes), loaded once and cached by the caller. */
  requestStateKey: () => Promise<Uint8Array>;
  /** Which `Origin` (and, locally, `Host`) values are served. */
  originPolicy: OriginPolicy;
}

/** A web-standard MCP endpoint: `fetch(request, principal)`. */
export interface Endpoint {
  fetch(request: Request, principal: string): Promise<Response>;
}

/**
 * Builds the MCP endpoint: the SDK serves the 2026-07-28 wire (discover,
 * envelope, headers, `resultType`) and the 2025-era stateless fallback; this
 * module adds the Tasks extension on top: the `tools/call` decision (inline,
 * task, or `-32021`) and task creation here, the task methods in
 * `task-methods.ts`, the server's result shapes and error mapping in
 * `server.ts`, the HTTP checks in `http-front.ts`.
 */
export function createEndpoint(deps: EndpointDeps): Endpoint {
  const now = deps.now ?? Date.now;
  // `auto`: a JSON body, unless a tool reports progress to a client that asked for it (see progress.ts).
  const handler = createMcpHandler((ctx) => buildServer(ctx), { responseMode: 'auto' });
  const sealer = requestStateSealer(deps.requestStateKey);
  // The catalogue is fixed for the life of the endpoint: describe it once.
  let toolList: ReturnType<typeof describeTool>[] | undefined;
  let legacyToolList: ReturnType<typeof describeTool>[] | undefined;

  function buildServer(ctx: McpRequestContext): Server {
    const principal = ctx.authInfo?.clientId;
    if (!principal) throw new Error('Endpoint called without a principal');
    const modern = ctx.era === 'modern';
    const server = new TaskAwareServer(
      SERVER_INFO,
      { capabilities: modern ? { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } : { tools: {}, tasks: LEGACY_TASKS_CAPABILITY } },
      deps.log,
    );
    server.setRequestHandler('tools/list', async () => ({
      tools: modern
        ? (toolList ??= [...deps.tools.values()].map(describeTool))
        : (legacyToolList ??= [...deps.tools.values()].map((tool) => ({ ...describeTool(tool), execution: legacyExecution(tool) }))),
    }));
    // The result is a CallToolResult, an InputRequiredResult or a CreateTaskResult (see TaskAwareServer).
    server.setRequestHandler('tools/call', (request, context) => callTool(request.params, context, principal, modern) as never);
    if (modern) registerTaskMethods(server, principal, { store: deps.store, log: deps.log, now, renderContext, enqueue });
    else registerLegacyTaskMethods(server, principal, { store: deps.store, settings: deps.settings, now, renderContext, log: deps.log });
    return server;
  }

  async function callTool(
    params: { name: string; arguments?: Record<string, unknown> | undefined; task?: unknown },
    ctx: ServerContext,
    principal: string,
    modern: boolean,
  ) {
    const tool = deps.tools.get(params.name);
    // The client's own input, echoed at most 128 characters long.
    if (!tool) throw invalidParams(`Unknown tool: ${params.name.slice(0, 128)}`);
    // Budgets first: nothing larger than a row can hold is parsed further or written.
    checkBudget('arguments', params.arguments ?? {}, MAX_ARGUMENTS_BYTES);
    const capabilities = clientCapabilities(ctx);
    checkBudget('clientCapabilities', capabilities, MAX_CAPABILITIES_BYTES);
    const key = idempotencyKey(ctx);
    const parsed = tool.inputSchema.safeParse(params.arguments ?? {});
    if (!parsed.success) return invalidArguments(parsed.error);
    const args = parsed.data;
    checkBudget('arguments', args, MAX_ARGUMENTS_BYTES);
    // A 2025-11-25 client asks per call (`params.task`); its task takes no input (see legacy-tasks.ts).
    const legacyTask = !modern && tool.execution !== 'sync' && wantsLegacyTask(params);
    const declared = (modern && declaresTasks(capabilities)) || legacyTask;

    const inline = tool.execution === 'sync' || (tool.execution === 'optional' && (!declared || (tool.inline?.(args) ?? false)));
    if (inline) return (await runInline(tool, args, ctx, capabilities, principal)).result;
    if (!declared) throw missingTasksCapability(modern ? 'modern' : 'legacy');

    // Input the tool wants before it becomes a task is gathered synchronously
    // (spec item 13); the answers are recorded on the task for its handler.
    let answers: Record<string, unknown> = {};
    if (tool.prepare) {
      const prepare = tool.prepare;
      const gathered = await runInline(
        {
          ...tool,
          handler: async (a, c) => {
            await prepare(a, c);
            return '';
          },
        },
        args,
        ctx,
        capabilities,
        principal,
      );
      if (gathered.result.resultType === 'input_required') return gathered.result;
      answers = gathered.answers;
    }
    const task = await createTask(tool, args, capabilities, principal, answers, key);
    return legacyTask ? legacyCreateTaskResult(task, renderContext()) : createTaskResult(task, renderContext());
  }

  async function createTask(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    capabilities: ClientCapabilities,
    principal: string,
    answers: Record<string, unknown>,
    key: string | undefined,
  ) {
    const created = await deps.store.create(
      {
        taskId: randomUUID(),
        owner: principal,
        tool: tool.name,
        arguments: args,
        clientCapabilities: capabilities,
        inputResponses: answers,
        now: now(),
        ttlMs: deps.settings.taskTtlMs,
        pollIntervalMs: tool.pollIntervalMs ?? deps.settings.pollIntervalMs,
        ...(tool.version === undefined ? {} : { toolVersion: tool.version }),
      },
      key === undefined ? {} : { idempotencyKey: key },
    );
    const { task } = created;
    if (created.created) {
      await enqueue(task.taskId, 'start');
      deps.log(withMetrics({ event: 'task-created', taskId: task.taskId, tool: tool.name }, { TasksCreated: 1 }, task.createdAt));
    }
    return task;
  }

  /**
   * Queues a task that is already durable as `working`. If the queue refuses,
   * the task is still due for the sweeper (its `sweepAt` was written with it),
   * which enqueues it again: the request succeeds rather than report an error
   * for a change that was made.
   */
  async function enqueue(taskId: string, reason: 'start' | 'resume') {
    try {
      await deps.queue.send({ taskId, reason });
    } catch (error) {
      deps.log({ event: 'enqueue-failed', taskId, reason, error: errorName(error) });
    }
  }

  function renderContext(): RenderContext {
    return { now: now(), settings: deps.settings };
  }

  /**
   * Runs a tool inside the request. Elicitation goes through multi-round-trip
   * requests: the answers of earlier rounds and the keys asked so far travel
   * in `requestState`, sealed (HMAC) and bound to the principal, the tool and
   * an expiry, so a client can neither forge answers it was never asked for
   * nor skip a question. Tampered or expired state is refused (`-32602`);
   * answers to keys that were never issued are ignored.
   */
  async function runInline(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ServerContext,
    capabilities: ClientCapabilities,
    principal: string,
  ) {
    const binding = { principal, tool: tool.name };
    const state: SealedState = await sealer.open(ctx.mcpReq.requestState<unknown>(), binding);
    const incoming = ctx.mcpReq.inputResponses ?? {};
    checkAnswers(incoming);
    const issued = new Set(state.issuedKeys);
    const fresh = Object.fromEntries(Object.entries(incoming).filter(([key]) => issued.has(key)));
    const answers = { ...state.answers, ...fresh };
    checkAnswers(answers);
    const signal = AbortSignal.any([ctx.mcpReq.signal, AbortSignal.timeout(deps.settings.syncBudgetMs)]);
    const outcome = await runTool(tool, args, {
      taskId: undefined,
      clientCapabilities: capabilities,
      answers,
      cancel: signal,
      progress: inlineProgress(ctx),
    });
    switch (outcome.kind) {
      case 'result':
        return { result: outcome.result as Record<string, unknown>, answers };
      case 'protocol-error':
        throw ProtocolError.fromError(outcome.error.code, outcome.error.message, outcome.error.data);
      case 'input': {
        const issuedKeys = [...new Set([...state.issuedKeys, ...Object.keys(outcome.inputRequests)])];
        const requestState = await sealer.seal({ answers, issuedKeys }, binding);
        return { result: { resultType: 'input_required', inputRequests: outcome.inputRequests, requestState }, answers };
      }
      case 'cancelled':
        throw new ProtocolError(INTERNAL_ERROR, 'The tool did not finish within the synchronous time budget; call it as a task');
      case 'retry':
        throw new ProtocolError(INTERNAL_ERROR, 'The tool failed transiently; try again');
      case 'sleep':
      case 'continue':
        // Without a journal steps run directly and sleeps wait in-process: neither suspends.
        throw new Error(`Inline run suspended as ${outcome.kind}`);
    }
  }

  return { fetch: httpFront(handler, deps.originPolicy) };
}

function invalidArguments(error: z.ZodError): ToolResult {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
  return { content: [{ type: 'text', text: `Invalid arguments: ${issues}` }], isError: true };
}

/**
 * The `_meta` key under which a client may pass an idempotency key on
 * `tools/call`: retrying the call with the same key (and arguments) returns
 * the task the first call created instead of starting a second job.
 */
export { IDEMPOTENCY_KEY };

function idempotencyKey(ctx: ServerContext): string | undefined {
  const value = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[IDEMPOTENCY_KEY];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 256) {
    throw invalidParams(`${IDEMPOTENCY_KEY} must be a non-empty string of at most 256 characters`);
  }
  return value;
}
