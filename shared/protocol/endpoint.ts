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
import { type RequestStateSealer, requestStateSealer, type SealedState } from './request-state.ts';
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
  const endpoint = new TasksEndpoint(deps);
  return { fetch: endpoint.fetch };
}

type ToolListing = ReturnType<typeof describeTool>;

/** A `tools/call`'s params as the SDK hands them over. */
type CallParams = { name: string; arguments?: Record<string, unknown> | undefined; task?: unknown };

/** Who makes a `tools/call`, on which wire, declaring what: what every step of the call reads. */
interface Caller {
  ctx: ServerContext;
  principal: string;
  modern: boolean;
  capabilities: ClientCapabilities;
}

/** A tool found and its arguments parsed, or the tool error a model can correct. */
type CheckedCall =
  | { ok: true; tool: ToolDefinition; args: Record<string, unknown>; key: string | undefined }
  | { ok: false; result: ToolResult };

/** The endpoint's dependencies, held once, and each step of a request as a method. */
class TasksEndpoint {
  readonly fetch: Endpoint['fetch'];
  private readonly now: () => number;
  private readonly sealer: RequestStateSealer;
  private readonly fallbackOn: boolean;
  private readonly fallbackDeps: FallbackDeps;
  // The catalogue is fixed for the life of the endpoint: describe it once.
  private toolList: ToolListing[] | undefined;
  private fallbackToolsList: ToolListing[] | undefined;
  private legacyToolList: ToolListing[] | undefined;

  constructor(private readonly deps: EndpointDeps) {
    this.now = deps.now ?? Date.now;
    // `auto`: a JSON body, unless a tool reports progress to a client that asked for it (see progress.ts).
    const handler = createMcpHandler((ctx) => this.buildServer(ctx), { responseMode: 'auto' });
    this.sealer = requestStateSealer(deps.requestStateKey);
    this.fallbackOn = deps.clientFallback ?? true;
    if (this.fallbackOn) {
      const taken = FALLBACK_TOOL_NAMES.filter((name) => deps.tools.has(name));
      if (taken.length > 0) throw new Error(`Tool names reserved by the client fallback: ${taken.join(', ')}`);
    }
    const { store, tools, settings, log } = deps;
    this.fallbackDeps = { store, tools, settings, now: this.now, log, enqueue: this.enqueue };
    this.fetch = httpFront(handler, deps.originPolicy);
  }

  private buildServer(ctx: McpRequestContext): Server {
    const principal = ctx.authInfo?.clientId;
    if (!principal) throw new Error('Endpoint called without a principal');
    const modern = ctx.era === 'modern';
    const { store, settings, log } = this.deps;
    const server = new TaskAwareServer(
      SERVER_INFO,
      { capabilities: modern ? { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } : { tools: {}, tasks: LEGACY_TASKS_CAPABILITY } },
      log,
    );
    server.setRequestHandler('tools/list', async (_request, context) => ({ tools: this.listTools(modern, context) }));
    // The result is a CallToolResult, an InputRequiredResult or a CreateTaskResult (see TaskAwareServer).
    server.setRequestHandler('tools/call', (request, context) => this.callTool(request.params, context, principal, modern) as never);
    const { now, renderContext, enqueue } = this;
    if (modern) registerTaskMethods(server, principal, { store, log, now, renderContext, enqueue });
    else registerLegacyTaskMethods(server, principal, { store, settings, now, renderContext, log });
    return server;
  }

  /** Whether the fallback serves this tool to a client that did not declare the extension. */
  private served(tool: ToolDefinition): boolean {
    return this.fallbackOn && tool.fallback !== false;
  }

  /** 2026-07-28: the fallback tools only to a request that does not declare the extension. */
  private listTools(modern: boolean, context: ServerContext): ToolListing[] {
    if (!modern) return this.legacyTools();
    if (this.fallbackOn && !declaresTasks(clientCapabilities(context))) {
      return (this.fallbackToolsList ??= [...this.modernTools(), ...fallbackToolList()]);
    }
    return this.modernTools();
  }

  private modernTools(): ToolListing[] {
    return (this.toolList ??= [...this.deps.tools.values()].map(describeTool));
  }

  /**
   * 2025-era: no session tells whether the caller will ask for tasks, so the
   * fallback tools are listed to all, and a tool the fallback serves is
   * `optional` (with `required`, the SDK v1 client refuses a plain call).
   */
  private legacyTools(): ToolListing[] {
    return (this.legacyToolList ??= [
      ...[...this.deps.tools.values()].map((tool) => ({
        ...describeTool(tool),
        execution: tool.execution === 'task' && this.served(tool) ? { taskSupport: 'optional' as const } : legacyExecution(tool),
      })),
      ...(this.fallbackOn ? fallbackToolList().map((tool) => ({ ...tool, execution: { taskSupport: 'forbidden' as const } })) : []),
    ]);
  }

  /** `tools/call`: run inline, through the fallback, as a task, or refused (`-32021`). */
  private async callTool(params: CallParams, ctx: ServerContext, principal: string, modern: boolean) {
    const startedAt = this.now();
    // Budgets first: nothing larger than a row can hold is parsed further or written.
    checkBudget('arguments', params.arguments ?? {}, MAX_ARGUMENTS_BYTES);
    const capabilities = clientCapabilities(ctx);
    checkBudget('clientCapabilities', capabilities, MAX_CAPABILITIES_BYTES);
    const caller: Caller = { ctx, principal, modern, capabilities };
    if (this.fallbackOn && FALLBACK_TOOL_NAMES.includes(params.name)) return this.callFallbackTool(params, caller);
    const checked = this.checkCall(params, ctx);
    if (!checked.ok) return checked.result;
    const { tool, args, key } = checked;
    // A 2025-11-25 client asks per call (`params.task`); its task takes no input (see legacy-tasks.ts).
    const legacyTask = !modern && tool.execution !== 'sync' && wantsLegacyTask(params);
    const declared = (modern && declaresTasks(capabilities)) || legacyTask;
    if (this.runsInline(tool, args, declared)) return (await this.runInline(tool, args, caller)).result;
    if (!declared) {
      if (!this.served(tool)) throw missingTasksCapability(modern ? 'modern' : 'legacy');
      return this.startFallback(tool, args, caller, key, startedAt + this.deps.settings.syncBudgetMs);
    }
    return this.startTask(tool, args, caller, key, legacyTask);
  }

  /** `task_status`, `task_answer` or `task_cancel`, for a caller that did not declare the extension. */
  private callFallbackTool(params: CallParams, caller: Caller) {
    // Not listed to a request that declares the extension: it has the task methods.
    if (caller.modern && declaresTasks(caller.capabilities)) {
      throw invalidParams(
        `Unknown tool: ${params.name} (a request declaring ${TASKS_EXTENSION} follows tasks with tasks/get, tasks/update and tasks/cancel)`,
      );
    }
    return callFallbackTool(params.name, params.arguments ?? {}, caller.principal, this.fallbackDeps, caller.ctx.mcpReq.signal);
  }

  /** The tool and its parsed arguments. An unknown tool or a bad idempotency key is a protocol error. */
  private checkCall(params: CallParams, ctx: ServerContext): CheckedCall {
    const tool = this.deps.tools.get(params.name);
    // The client's own input, echoed at most 128 characters long.
    if (!tool) throw invalidParams(`Unknown tool: ${params.name.slice(0, 128)}`);
    const key = idempotencyKey(ctx);
    const parsed = tool.inputSchema.safeParse(params.arguments ?? {});
    if (!parsed.success) return { ok: false, result: invalidArguments(parsed.error) };
    const args = parsed.data;
    checkBudget('arguments', args, MAX_ARGUMENTS_BYTES);
    return { ok: true, tool, args, key };
  }

  /** A sync tool; an optional one that says this call is cheap, or that nothing could follow as a task. */
  private runsInline(tool: ToolDefinition, args: Record<string, unknown>, declared: boolean): boolean {
    return (
      tool.execution === 'sync' || (tool.execution === 'optional' && ((tool.inline?.(args) ?? false) || (!declared && !this.served(tool))))
    );
  }

  /** A call that declared tasks: gather what the tool asks first, then create the task and answer it. */
  private async startTask(tool: ToolDefinition, args: Record<string, unknown>, caller: Caller, key: string | undefined, legacy: boolean) {
    let answers: Record<string, unknown> = {};
    if (tool.prepare) {
      const gathered = await this.gatherInput(tool, tool.prepare, args, caller);
      if (gathered.result.resultType === 'input_required') return gathered.result;
      answers = gathered.answers;
    }
    const task = await this.createTask(tool, args, caller.capabilities, caller.principal, answers, key);
    return legacy ? legacyCreateTaskResult(task, this.renderContext()) : createTaskResult(task, this.renderContext());
  }

  /**
   * Input the tool wants before it becomes a task is gathered synchronously
   * (spec item 13); the answers are recorded on the task for its handler.
   */
  private gatherInput(
    tool: ToolDefinition,
    prepare: NonNullable<ToolDefinition['prepare']>,
    args: Record<string, unknown>,
    caller: Caller,
  ) {
    const handler: ToolDefinition['handler'] = async (a, c) => {
      await prepare(a, c);
      return '';
    };
    return this.runInline({ ...tool, handler }, args, caller);
  }

  /**
   * A long call from a client that did not declare the extension: the task
   * is created (durable) and queued first, then the row is read once a second
   * until the budget. The request never runs the handler, so nothing runs
   * twice and nothing is dropped at the budget. The task may ask its
   * questions whatever the call declared: `task_answer` is their channel
   * (input gathered before a task, `prepare`, is asked by the task instead).
   */
  private async startFallback(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    caller: Caller,
    key: string | undefined,
    deadline: number,
  ) {
    const { capabilities, principal } = caller;
    const channel = { ...capabilities, elicitation: capabilities['elicitation'] ?? { form: {} }, sampling: capabilities['sampling'] ?? {} };
    const task = await this.createTask(tool, args, channel, principal, {}, key);
    this.deps.log({ event: 'fallback-started', taskId: task.taskId, tool: tool.name });
    const latest = (await waitOnTask(this.fallbackDeps, task, principal, deadline, caller.ctx.mcpReq.signal)) ?? task;
    if (latest.status === 'failed') {
      // As the same failure inside the request would have answered.
      throw ProtocolError.fromError(latest.error.code, latest.error.message, latest.error.data);
    }
    return describeTask(latest, this.deps.settings, { firstAnswer: true });
  }

  private async createTask(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    capabilities: ClientCapabilities,
    principal: string,
    answers: Record<string, unknown>,
    key: string | undefined,
  ) {
    const { store, settings, log } = this.deps;
    const created = await store.create(
      {
        taskId: randomUUID(),
        owner: principal,
        tool: tool.name,
        arguments: args,
        clientCapabilities: capabilities,
        inputResponses: answers,
        now: this.now(),
        ttlMs: settings.taskTtlMs,
        pollIntervalMs: tool.pollIntervalMs ?? settings.pollIntervalMs,
        ...(tool.version === undefined ? {} : { toolVersion: tool.version }),
      },
      key === undefined ? {} : { idempotencyKey: key },
    );
    const { task } = created;
    if (created.created) {
      await this.enqueue(task.taskId, 'start');
      log(withMetrics({ event: 'task-created', taskId: task.taskId, tool: tool.name }, { TasksCreated: 1 }, task.createdAt));
    }
    return task;
  }

  /**
   * Queues a task that is already durable as `working`. If the queue refuses,
   * the task is still due for the sweeper (its `sweepAt` was written with it),
   * which enqueues it again: the request succeeds rather than report an error
   * for a change that was made. Bound: the task methods and the fallback call it.
   */
  private readonly enqueue = async (taskId: string, reason: 'start' | 'resume'): Promise<void> => {
    try {
      await this.deps.queue.send({ taskId, reason });
    } catch (error) {
      this.deps.log({ event: 'enqueue-failed', taskId, reason, error: errorName(error) });
    }
  };

  /** The clock and settings a task is rendered with. Bound: the task methods call it. */
  private readonly renderContext = (): RenderContext => ({ now: this.now(), settings: this.deps.settings });

  /**
   * Runs a tool inside the request. Elicitation goes through multi-round-trip
   * requests: the answers of earlier rounds and the keys asked so far travel
   * in `requestState`, sealed (HMAC) and bound to the principal, the tool and
   * an expiry, so a client can neither forge answers it was never asked for
   * nor skip a question. Tampered or expired state is refused (`-32602`);
   * answers to keys that were never issued are ignored.
   */
  private async runInline(tool: ToolDefinition, args: Record<string, unknown>, { ctx, capabilities, principal }: Caller) {
    const binding = { principal, tool: tool.name };
    const state: SealedState = await this.sealer.open(ctx.mcpReq.requestState<unknown>(), binding);
    const incoming = ctx.mcpReq.inputResponses ?? {};
    checkAnswers(incoming);
    const issued = new Set(state.issuedKeys);
    const fresh = Object.fromEntries(Object.entries(incoming).filter(([key]) => issued.has(key)));
    const answers = { ...state.answers, ...fresh };
    checkAnswers(answers);
    const signal = AbortSignal.any([ctx.mcpReq.signal, AbortSignal.timeout(this.deps.settings.syncBudgetMs)]);
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
        const requestState = await this.sealer.seal({ answers, issuedKeys }, binding);
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
