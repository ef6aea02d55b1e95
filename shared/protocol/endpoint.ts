import { createMcpHandler, type McpRequestContext, ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type * as z from 'zod';
import { repeatWindows } from '../actions/repeat-calls.ts';
import { type ActionStore, TaskActions, type TaskToStart } from '../actions/task-actions.ts';
import type { TaskSettings } from '../config.ts';
import type { LifecycleEvents } from '../events/publisher.ts';
import { purposeKeys } from '../keys.ts';
import { DeploymentLinks } from '../links.ts';
import type { Log } from '../log.ts';
import type { TaskQueue } from '../queue/queue.ts';
import type { ToolDefinition, ToolResult } from '../runtime/tool.ts';
import { checkBudget, MAX_ARGUMENTS_BYTES, MAX_CAPABILITIES_BYTES } from '../tasks/limits.ts';
import type { ClientCapabilities } from '../tasks/model.ts';
import { type Tracing, tracingOf } from '../tracing/tracing.ts';
import { PACKAGE_VERSION } from '../version.ts';
import { IDEMPOTENCY_KEY, TASKS_EXTENSION } from '../wire.ts';
import { invalidParams, missingTasksCapability } from './errors.ts';
import { callFallbackTool, type FallbackDeps } from './fallback.ts';
import { describeTask, SERVER_INSTRUCTIONS } from './fallback-texts.ts';
import { FALLBACK_TOOL_NAMES, fallbackToolList } from './fallback-tools.ts';
import { type CallerFacts, httpFront } from './http-front.ts';
import { InlineRunner } from './inline.ts';
import {
  LEGACY_TASKS_CAPABILITY,
  legacyCreateTaskResult,
  legacyExecution,
  registerLegacyTaskMethods,
  wantsLegacyTask,
} from './legacy-tasks.ts';
import type { OriginPolicy } from './origin.ts';
import type { PersonPage } from './person-questions.ts';
import { createTaskResult, type RenderContext } from './render.ts';
import { requestStateSealer } from './request-state.ts';
import { type CallFacts, type CallRoute, type Era, routeCall } from './router.ts';
import { clientCapabilities, declaresTasks, describeTool, TaskAwareServer } from './server.ts';
import { registerTaskMethods } from './task-methods.ts';
import { catalogueHeaderParams } from './tool-headers.ts';

/** The server's `serverInfo`: its name and the package's version. */
const SERVER_INFO = { name: 'mcp-tasks-serverless', version: PACKAGE_VERSION } as const;

export interface EndpointDeps {
  store: ActionStore;
  queue: TaskQueue;
  tools: ReadonlyMap<string, ToolDefinition>;
  config: Pick<TaskSettings, 'taskTtlMs' | 'pollIntervalMs' | 'maxPollIntervalMs' | 'retentionMs' | 'syncBudgetMs'>;
  now?: () => number;
  /** Structured, content-free log lines (never arguments, answers or tokens). */
  log: Log;
  /** The stack's secret (at least 32 bytes), loaded once and cached by the caller: it seals `requestState`, and the purpose keys derive from it. */
  stackSecret: () => Promise<Uint8Array>;
  /** Which `Origin` (and, locally, `Host`) values are served. */
  originPolicy: OriginPolicy;
  /**
   * Serve clients that do not declare the tasks extension through the
   * fallback (`fallback.ts`); default on. Off: today's strict behaviour.
   */
  clientFallback?: boolean;
  /** Links to this deployment (its endpoint), for the texts the fallback writes for models and people. */
  links?: DeploymentLinks;
  /** The endpoint requires tokens: a person answering a question signs in as the task's owner, and the texts say so. */
  signIn?: boolean;
  /** Lifecycle events of what the task actions end here (a cancel); absent: none. */
  events?: LifecycleEvents;
  /** Where questions for a person are decided, when URL-mode elicitation may send people there (`personPageOf`). */
  personPage?: PersonPage;
  /** Spans of each request (absent: the installed tracing, off by default). */
  tracing?: Tracing | undefined;
}

/** A web-standard MCP endpoint: `fetch(request, principal, caller?)`, with what the endpoint knows of the caller besides its principal. */
export interface Endpoint {
  fetch(request: Request, principal: string, caller?: CallerFacts): Promise<Response>;
}

/**
 * Builds the MCP endpoint: the SDK serves the 2026-07-28 wire (discover,
 * envelope, headers, `resultType`) and the 2025-era stateless fallback; this
 * module adds the Tasks extension on top. A `tools/call`'s route is decided
 * by the router (`router.ts`) and followed here: inline (`inline.ts`), a
 * task, a 2025 task, the fallback for clients without tasks (`fallback.ts`)
 * or a refusal. Every surface acts on tasks through the task actions
 * (`shared/actions`); the task methods are in `task-methods.ts` and
 * `legacy-tasks.ts`, the result shapes and error mapping in `server.ts`, the
 * HTTP checks in `http-front.ts`.
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
  /** A machine's token: its tasks' questions for a person are for approvers (see `CallerFacts`). */
  machine: boolean;
  /** The caller's name or email from their token, kept on the tasks they start (personal data: see `TaskBase.requester`). */
  requester: string | undefined;
  era: Era;
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
  private readonly actions: TaskActions;
  private readonly inline: InlineRunner;
  private readonly fallbackOn: boolean;
  private readonly fallbackDeps: FallbackDeps;
  /** The key repeated calls' task ids are derived with. */
  private readonly repeatKey: () => Promise<Uint8Array>;
  // The catalogue is fixed for the life of the endpoint: describe it once.
  private toolList: ToolListing[] | undefined;
  private fallbackToolsList: ToolListing[] | undefined;
  private legacyToolList: ToolListing[] | undefined;

  constructor(private readonly deps: EndpointDeps) {
    this.now = deps.now ?? Date.now;
    // `auto`: a JSON body, unless a tool reports progress to a client that asked for it (see progress.ts).
    const handler = createMcpHandler((ctx) => this.buildServer(ctx), { responseMode: 'auto' });
    this.inline = new InlineRunner(requestStateSealer(deps.stackSecret), deps.config.syncBudgetMs);
    const keys = purposeKeys(deps.stackSecret);
    this.repeatKey = () => keys('repeat-call-id');
    this.fallbackOn = deps.clientFallback ?? true;
    if (this.fallbackOn) {
      const taken = FALLBACK_TOOL_NAMES.filter((name) => deps.tools.has(name));
      if (taken.length > 0) throw new Error(`Tool names reserved by the client fallback: ${taken.join(', ')}`);
    }
    const { store, queue, config, log, events } = deps;
    const tracing = tracingOf(deps);
    this.actions = new TaskActions({ store, queue, log, now: this.now, ...(events ? { events } : {}), tracing });
    const text = { config, links: deps.links ?? new DeploymentLinks(undefined), signIn: deps.signIn ?? false };
    this.fallbackDeps = { actions: this.actions, config, now: this.now, text };
    // A declaration clients would drop the tool for stops the function at start (CatalogueError).
    const headerParams = catalogueHeaderParams(deps.tools.values());
    this.fetch = httpFront(handler, deps.originPolicy, (name) => headerParams.get(name), tracing);
  }

  private buildServer(ctx: McpRequestContext): Server {
    const principal = ctx.authInfo?.clientId;
    if (!principal) throw new Error('Endpoint called without a principal');
    const machine = ctx.authInfo?.extra?.['machine'] === true;
    const era: Era = ctx.era;
    const capabilities =
      era === 'modern' ? { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } : { tools: {}, tasks: LEGACY_TASKS_CAPABILITY };
    // The instructions say in brief how long tools answer (initialize and server/discover carry them).
    const server = new TaskAwareServer(SERVER_INFO, { capabilities, instructions: SERVER_INSTRUCTIONS }, this.deps.log);
    server.setRequestHandler('tools/list', async (_request, context) => ({ tools: this.listTools(era, context) }));
    // The result is a CallToolResult, an InputRequiredResult or a CreateTaskResult (see TaskAwareServer).
    const requester = ctx.authInfo?.extra?.['requester'];
    const caller = { principal, machine, requester: typeof requester === 'string' ? requester : undefined };
    server.setRequestHandler('tools/call', (request, context) => this.callTool(request.params, context, caller, era) as never);
    const { actions, now, renderContext } = this;
    if (era === 'modern')
      registerTaskMethods(server, principal, {
        actions,
        renderContext,
        ...(this.deps.personPage ? { personPage: this.deps.personPage } : {}),
      });
    else registerLegacyTaskMethods(server, principal, { actions, config: this.deps.config, now, renderContext });
    return server;
  }

  /** Whether the fallback serves this tool to a client that did not declare the extension. */
  private served(tool: ToolDefinition): boolean {
    return this.fallbackOn && tool.fallback !== false;
  }

  /** 2026-07-28: the fallback tools only to a request that does not declare the extension. */
  private listTools(era: Era, context: ServerContext): ToolListing[] {
    if (era === 'legacy') return this.legacyTools();
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

  /** `tools/call`: the router's route, followed. */
  private async callTool(params: CallParams, ctx: ServerContext, who: Pick<Caller, 'principal' | 'machine' | 'requester'>, era: Era) {
    const { principal } = who;
    const startedAt = this.now();
    const capabilities = clientCapabilities(ctx);
    checkBudget('clientCapabilities', capabilities, MAX_CAPABILITIES_BYTES);
    const facts: Omit<CallFacts, 'target'> = {
      era,
      declaresTasks: declaresTasks(capabilities),
      asksLegacyTask: wantsLegacyTask(params),
      fallbackOn: this.fallbackOn,
    };
    if (this.fallbackOn && FALLBACK_TOOL_NAMES.includes(params.name)) {
      const route = routeCall({ ...facts, target: { kind: 'fallback-tool' } });
      if (route.kind === 'refuse') throw this.refusal(route.reason, params.name, era);
      // The fallback tools word every mistake for a model, an oversized call's too.
      return callFallbackTool(params.name, params.arguments ?? {}, principal, this.fallbackDeps, ctx.mcpReq.signal);
    }
    // Budgets first: nothing larger than a row can hold is parsed further or written.
    checkBudget('arguments', params.arguments ?? {}, MAX_ARGUMENTS_BYTES);
    const caller: Caller = { ctx, ...who, era, capabilities };
    const checked = this.checkCall(params, ctx);
    if (!checked.ok) return checked.result;
    const { tool, args, key } = checked;
    const cheap = tool.execution === 'optional' && (tool.inline?.(args) ?? false);
    const route = routeCall({ ...facts, target: { kind: 'tool', execution: tool.execution, fallback: tool.fallback !== false, cheap } });
    switch (route.kind) {
      case 'inline':
        return (await this.inline.run(tool, args, caller)).result;
      case 'fallback':
        return this.startFallback(tool, args, caller, key, startedAt + this.deps.config.syncBudgetMs);
      case 'task':
      case 'legacy-task':
        return this.startTask(tool, args, caller, key, route.kind === 'legacy-task');
      case 'refuse':
        throw this.refusal(route.reason, params.name, era);
      case 'fallback-tool':
        throw new Error(`A catalogue tool routed as a fallback tool: ${tool.name}`);
    }
  }

  /** The protocol error a refused route answers. */
  private refusal(reason: Extract<CallRoute, { kind: 'refuse' }>['reason'], name: string, era: Era): ProtocolError {
    if (reason === 'missing-capability') return missingTasksCapability(era);
    return invalidParams(
      `Unknown tool: ${name} (a request declaring ${TASKS_EXTENSION} follows tasks with tasks/get, tasks/update and tasks/cancel)`,
    );
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

  /** A call that declared tasks: gather what the tool asks first, then create the task and answer it. */
  private async startTask(tool: ToolDefinition, args: Record<string, unknown>, caller: Caller, key: string | undefined, legacy: boolean) {
    let answers: Record<string, unknown> = {};
    if (tool.prepare) {
      const gathered = await this.inline.gather(tool, tool.prepare, args, caller);
      if (gathered.result['resultType'] === 'input_required') return gathered.result;
      answers = gathered.answers;
    }
    const task = await this.actions.create(this.taskToStart(tool, args, caller, answers, key));
    return legacy ? legacyCreateTaskResult(task, this.renderContext()) : createTaskResult(task, this.renderContext());
  }

  /**
   * A long call from a client that did not declare the extension: the task
   * is created (durable) and queued first, then the row is waited on until
   * the budget. The request never runs the handler, so nothing runs twice
   * and nothing is dropped at the budget. The task may ask its questions
   * whatever the call declared: `task_answer` is their channel (input
   * gathered before a task, `prepare`, is asked by the task instead).
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
    const start = this.taskToStart(tool, args, { ...caller, capabilities: channel }, {}, key);
    // A repeat of an unfinished identical call joins its task (unless the tool opts out, or the call carries its own key).
    const { task, joined } =
      tool.joinRepeats === false || key !== undefined
        ? { task: await this.actions.create(start), joined: false }
        : await this.actions.createOrJoin(start, repeatWindows(await this.repeatKey(), { principal, tool: tool.name, args }, this.now()));
    if (!joined) this.deps.log({ event: 'fallback-started', taskId: task.taskId, tool: tool.name });
    const latest = (await this.actions.wait(task, principal, deadline, caller.ctx.mcpReq.signal)) ?? task;
    if (latest.status === 'failed') {
      // As the same failure inside the request would have answered.
      throw ProtocolError.fromError(latest.error.code, latest.error.message, latest.error.data);
    }
    return describeTask(latest, this.fallbackDeps.text, joined ? { joined: true } : { firstAnswer: true });
  }

  /** What a task of `tool` is started with. */
  private taskToStart(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    caller: Pick<Caller, 'principal' | 'machine' | 'requester' | 'capabilities'>,
    answers: Record<string, unknown>,
    key: string | undefined,
  ): TaskToStart {
    const { config } = this.deps;
    return {
      owner: caller.principal,
      ...(caller.machine ? { machineOwner: true as const } : {}),
      ...(caller.requester === undefined ? {} : { requester: caller.requester }),
      tool: tool.name,
      ...(tool.title === undefined ? {} : { toolTitle: tool.title }),
      arguments: args,
      clientCapabilities: caller.capabilities,
      inputResponses: answers,
      ttlMs: config.taskTtlMs,
      pollIntervalMs: tool.pollIntervalMs ?? config.pollIntervalMs,
      ...(tool.version === undefined ? {} : { toolVersion: tool.version }),
      ...(key === undefined ? {} : { idempotencyKey: key }),
    };
  }

  /** The clock and settings a task is rendered with. Bound: the task methods call it. */
  private readonly renderContext = (): RenderContext => ({ now: this.now(), config: this.deps.config });
}

function invalidArguments(error: z.ZodError): ToolResult {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
  return { content: [{ type: 'text', text: `Invalid arguments: ${issues}` }], isError: true };
}

function idempotencyKey(ctx: ServerContext): string | undefined {
  const value = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[IDEMPOTENCY_KEY];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 256) {
    throw invalidParams(`${IDEMPOTENCY_KEY} must be a non-empty string of at most 256 characters`);
  }
  return value;
}
