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
import { callFallbackTool, describeTask, FALLBACK_TOOL_NAMES, type FallbackDeps, fallbackToolList, waitOnTask } from './fallback.ts';
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
  /**
   * Serve clients that do not declare the tasks extension through the
   * fallback (`fallback.ts`); default on. Off: today's strict behaviour.
   */
  clientFallback?: boolean;
}

/** A web-standard MCP endpoint: `fetch(request, principal)`. */
export interface Endpoint {
  fetch(request: Request, principal: string): Promise<Response>;
}

/**
 * Builds the MCP endpoint: the SDK serves the 2026-07-28 wire (discover,
 * envelope, headers, `resultType`) and the 2025-era stateless fallback; this
 * module adds the Tasks extension on top: the `tools/call` decision (inline,
 * task, the fallback for clients without tasks in `fallback.ts`, or `-32021`)
 * and task creation here, the task methods in
 * `task-methods.ts`, the server's result shapes and error mapping in
 * `server.ts`, the HTTP checks in `http-front.ts`.
 */
export function createEndpoint(deps: EndpointDeps): Endpoint {
  const now = deps.now ?? Date.now;
  // `auto`: a JSON body, unless a tool reports progress to a client that asked for it (see progress.ts).
  const handler = createMcpHandler((ctx) => buildServer(ctx), { responseMode: 'auto' });
  const sealer = requestStateSealer(deps.requestStateKey);
  const fallbackOn = deps.clientFallback ?? true;
  if (fallbackOn) {
    const taken = FALLBACK_TOOL_NAMES.filter((name) => deps.tools.has(name));
    if (taken.length > 0) throw new Error(`Tool names reserved by the client fallback: ${taken.join(', ')}`);
  }
  /** Whether the fallback serves this tool to a client that did not declare the extension. */
  const served = (tool: ToolDefinition) => fallbackOn && tool.fallback !== false;
  const fallbackDeps: FallbackDeps = { store: deps.store, tools: deps.tools, settings: deps.settings, now, log: deps.log, enqueue };
  // The catalogue is fixed for the life of the endpoint: describe it once.
  let toolList: ReturnType<typeof describeTool>[] | undefined;
  let fallbackToolsList: ReturnType<typeof describeTool>[] | undefined;
  let legacyToolList: ReturnType<typeof describeTool>[] | undefined;
  const modernTools = () => (toolList ??= [...deps.tools.values()].map(describeTool));
  /**
   * 2025-era: no session tells whether the caller will ask for tasks, so the
   * fallback tools are listed to all, and a tool the fallback serves is
   * `optional` (with `required`, the SDK v1 client refuses a plain call).
   */
  const legacyTools = () =>
    (legacyToolList ??= [
      ...[...deps.tools.values()].map((tool) => ({
        ...describeTool(tool),
        execution: tool.execution === 'task' && served(tool) ? { taskSupport: 'optional' as const } : legacyExecution(tool),
      })),
      ...(fallbackOn ? fallbackToolList().map((tool) => ({ ...tool, execution: { taskSupport: 'forbidden' as const } })) : []),
    ]);

  function buildServer(ctx: McpRequestContext): Server {
    const principal = ctx.authInfo?.clientId;
    if (!principal) throw new Error('Endpoint called without a principal');
    const modern = ctx.era === 'modern';
    const server = new TaskAwareServer(
      SERVER_INFO,
      { capabilities: modern ? { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } : { tools: {}, tasks: LEGACY_TASKS_CAPABILITY } },
      deps.log,
    );
    // 2026-07-28: the fallback tools only to a request that does not declare the extension.
    server.setRequestHandler('tools/list', async (_request, context) => ({
      tools: !modern
        ? legacyTools()
        : fallbackOn && !declaresTasks(clientCapabilities(context))
          ? (fallbackToolsList ??= [...modernTools(), ...fallbackToolList()])
          : modernTools(),
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
    const startedAt = now();
    // Budgets first: nothing larger than a row can hold is parsed further or written.
    checkBudget('arguments', params.arguments ?? {}, MAX_ARGUMENTS_BYTES);
    const capabilities = clientCapabilities(ctx);
    checkBudget('clientCapabilities', capabilities, MAX_CAPABILITIES_BYTES);
    if (fallbackOn && FALLBACK_TOOL_NAMES.includes(params.name)) {
      // Not listed to a request that declares the extension: it has the task methods.
      if (modern && declaresTasks(capabilities)) {
        throw invalidParams(
          `Unknown tool: ${params.name} (a request declaring ${TASKS_EXTENSION} follows tasks with tasks/get, tasks/update and tasks/cancel)`,
        );
      }
      return callFallbackTool(params.name, params.arguments ?? {}, principal, fallbackDeps, ctx.mcpReq.signal);
    }
    const tool = deps.tools.get(params.name);
    // The client's own input, echoed at most 128 characters long.
    if (!tool) throw invalidParams(`Unknown tool: ${params.name.slice(0, 128)}`);
    const key = idempotencyKey(ctx);
    const parsed = tool.inputSchema.safeParse(params.arguments ?? {});
    if (!parsed.success) return invalidArguments(parsed.error);
    const args = parsed.data;
    checkBudget('arguments', args, MAX_ARGUMENTS_BYTES);
    // A 2025-11-25 client asks per call (`params.task`); its task takes no input (see legacy-tasks.ts).
    const legacyTask = !modern && tool.execution !== 'sync' && wantsLegacyTask(params);
    const declared = (modern && declaresTasks(capabilities)) || legacyTask;

    const inline =
      tool.execution === 'sync' || (tool.execution === 'optional' && ((tool.inline?.(args) ?? false) || (!declared && !served(tool))));
    if (inline) return (await runInline(tool, args, ctx, capabilities, principal)).result;
    if (!declared) {
      if (!served(tool)) throw missingTasksCapability(modern ? 'modern' : 'legacy');
      return startFallback(tool, args, capabilities, principal, key, ctx.mcpReq.signal, startedAt + deps.settings.syncBudgetMs);
    }

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

  /**
   * A long call from a client that did not declare the extension: the task
   * is created (durable) and queued first, then the row is read once a second
   * until the budget. The request never runs the handler, so nothing runs
   * twice and nothing is dropped at the budget. The task may ask its
   * questions whatever the call declared: `task_answer` is their channel
   * (input gathered before a task, `prepare`, is asked by the task instead).
   */
  async function startFallback(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    capabilities: ClientCapabilities,
    principal: string,
    key: string | undefined,
    signal: AbortSignal,
    deadline: number,
  ) {
    const channel = { ...capabilities, elicitation: capabilities['elicitation'] ?? { form: {} }, sampling: capabilities['sampling'] ?? {} };
    const task = await createTask(tool, args, channel, principal, {}, key);
    deps.log({ event: 'fallback-started', taskId: task.taskId, tool: tool.name });
    const latest = (await waitOnTask(fallbackDeps, task, principal, deadline, signal)) ?? task;
    if (latest.status === 'failed') {
      // As the same failure inside the request would have answered.
      throw ProtocolError.fromError(latest.error.code, latest.error.message, latest.error.data);
    }
    return describeTask(latest, deps.settings, { firstAnswer: true });
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
