/**
 * `McpTasks`: the whole MCP Tasks server as one CDK construct, built from a
 * project's tools module. Add it to a stack of yours:
 *
 * ```ts
 * const stack = new Stack(app, 'MyTools');
 * const tasks = new McpTasks(stack, 'Tasks', { tools: 'src/tools/index.ts' });
 * tasks.toolFunctions.forEach((fn) => bucket.grantRead(fn));
 * ```
 *
 * This repository's own stack is its first user (`infra/app.ts`), under the
 * construct id `Default`, which CDK leaves out of logical ids: the resources
 * keep the ids they had when the stack built them itself.
 */
import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import type { EventBus } from 'aws-cdk-lib/aws-events';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { DEFAULT_SETTINGS, ENV } from '../shared/config.ts';
import { settingStoresOf } from '../shared/runtime/settings.ts';
import { Api } from './constructs/api.ts';
import { callbacksFunction } from './constructs/callbacks.ts';
import { FunctionCode } from './constructs/function-code.ts';
import { Operations } from './constructs/operations.ts';
import { StackSecret } from './constructs/stack-secret.ts';
import { SweepSchedule } from './constructs/sweep-schedule.ts';
import { TaskEvents } from './constructs/task-events.ts';
import { TaskFunction } from './constructs/task-function.ts';
import { TaskQueue } from './constructs/task-queue.ts';
import { TaskTable } from './constructs/task-table.ts';
import { TaskWorker } from './constructs/task-worker.ts';
import { grantToolNeeds, runsAsTask, runsInline } from './constructs/tool-needs.ts';
import { DEFAULT_CALLBACK_URLS, McpUserPool, USER_POOL_SCOPE } from './constructs/user-pool.ts';
import { Workflows } from './constructs/workflows.ts';
import type { McpTasksProps, ResolvedProps, ResourceServerProps } from './mcp-tasks-props.ts';
import { withDefaults } from './mcp-tasks-props.ts';
import { OPS_OUTPUTS } from './outputs.ts';
import { type DurableTimings, durableTimings, timingsEnvironment } from './timings.ts';
import { traceFunction } from './tracing.ts';

export type { ApiThrottle, JwtSettings } from './constructs/api.ts';
export type { ToolsSource } from './constructs/tools-module.ts';
export type { QuestionStateProps, WorkflowStates } from './constructs/workflow-states.ts';
export type { CreatedWorkflowBinding, ImportedWorkflowBinding, WorkflowBinding } from './constructs/workflows.ts';
export type { CognitoProps, ConsoleProps, McpTasksProps, ResourceServerProps } from './mcp-tasks-props.ts';
export type { TracingProp, TracingTarget } from './tracing.ts';

/**
 * The MCP Tasks server: task table, task queue with worker, dead-letter
 * handler and scheduled sweeper, the HTTP API in front of the MCP function,
 * the console and the callbacks endpoint, lifecycle events, alarms and, when
 * asked for, a user pool, a dashboard and tracing. Environment-agnostic:
 * nothing is looked up, so it synthesizes offline. One per stack.
 */
export class McpTasks extends Construct {
  readonly table: TaskTable;
  /** The task queue and its dead-letter queue. */
  readonly tasks: TaskQueue;
  /** The worker, driven by the task queue. */
  readonly worker: TaskWorker;
  /** The sweeper and the dead-letter handler, on the sweep schedule. */
  readonly sweeps: SweepSchedule;
  readonly mcp: TaskFunction;
  /** The console, `/console` on the API's origin. */
  readonly console: TaskFunction;
  /** The completion endpoint, `POST /callbacks/{token}` on the API's origin. */
  readonly callbacks: TaskFunction;
  readonly api: Api;
  /** The stack's secret: the SSM parameter that seals `requestState` and from which every purpose's key derives. */
  readonly stackSecret: StackSecret;
  readonly operations: Operations;
  /** The user pool, when the construct creates one. */
  readonly userPool?: McpUserPool;
  /** The lifecycle events' bus construct, unless `events` is off. */
  readonly events: TaskEvents | undefined;
  /** The URL MCP clients call (`…/mcp`). */
  readonly endpointUrl: string;
  /** The bus the lifecycle events go to (rules of yours go on it), unless `events` is off. */
  readonly eventBus: EventBus | undefined;
  /**
   * The functions that run your tools, the MCP function and the worker: grant
   * them what a tool reaches beyond what its `needs` declares.
   */
  readonly toolFunctions: readonly IFunction[];
  /** The workflow tools' machines, receiver and event consumer, when a tool declares a workflow. */
  readonly workflows: Workflows | undefined;

  constructor(scope: Construct, id: string, props: McpTasksProps) {
    super(scope, id);
    claimStack(this);
    const settings = withDefaults(props);
    const code = new FunctionCode({
      tools: props.tools,
      ...(props.projectRoot ? { projectRoot: props.projectRoot } : {}),
      ...(settings.traced ? { tracing: true } : {}),
    });
    const common = { code, logRetention: settings.logRetention, removalPolicy: settings.removalPolicy, tracing: settings.tracing };
    const timings = durableTimings(settings.sweepInterval);
    const activeIndexShards = settings.activeIndexShards ?? DEFAULT_SETTINGS.activeIndexShards;
    const taskTools = code.tools.filter(runsAsTask);

    this.table = new TaskTable(this, 'TaskTable', { removalPolicy: settings.removalPolicy });
    this.events = settings.events === false ? undefined : new TaskEvents(this, 'Events');
    this.eventBus = this.events?.bus;
    this.tasks = new TaskQueue(this, 'TaskQueue', { environment: this.#sharedEnvironment(settings, timings, activeIndexShards), timings });
    // The worker and the scheduled functions live in the queue's scope:
    // construct paths make logical ids, and a changed id replaces the resource
    // on deploy. `Default` is left out of logical ids, so the schedule's
    // functions and rule have the ids of direct children of the queue construct.
    this.worker = new TaskWorker(this.tasks, 'Worker', {
      ...common,
      table: this.table,
      tasks: this.tasks,
      timings,
      maxConcurrency: settings.workerMaxConcurrency,
      settingStores: settingStoresOf(taskTools),
    });
    this.sweeps = new SweepSchedule(this.tasks, 'Default', { ...common, table: this.table, tasks: this.tasks, timings });
    grantToolNeeds(this.worker, taskTools);
    for (const fn of [this.worker, this.sweeps.sweeper, this.sweeps.deadLetterHandler]) this.events?.grantPublish(fn);

    // The id predates the name: kept, so a deployed stack keeps its secret (a new id would replace it).
    this.stackSecret = new StackSecret(this, 'StateKey', common);
    this.mcp = this.#mcpFunction(settings, code);
    const auth = this.#resourceServer(settings);
    this.console = this.#console(settings, code, auth);
    this.callbacks = callbacksFunction(this, { ...common, table: this.table, tasks: this.tasks, stackSecret: this.stackSecret });
    // The worker seals the tokens of the callback URLs it hands out.
    this.worker.function.addEnvironment(ENV.stackSecretParameter, this.stackSecret.parameterName);
    this.stackSecret.grantRead(this.worker.role);
    this.api = new Api(this, 'Api', {
      logRetention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
      handler: this.mcp.function,
      console: this.console.function,
      callbacks: this.callbacks.function,
      throttle: settings.throttle,
      allowedOrigins: settings.allowedOrigins,
      paramHeaders: code.tools.flatMap((tool) => tool.paramHeaders ?? []),
      ...(settings.jwt ? { jwt: settings.jwt } : {}),
      ...(auth ? { resourceServer: { issuers: auth.issuers } } : {}),
    });
    this.endpointUrl = this.api.endpointUrl;
    this.workflows = this.#workflows(settings, code);
    this.toolFunctions = [this.mcp.function, this.worker.function];
    // Their generated entries install the tracing adapter: they alone send spans (with those that resume tasks for an outside party).
    const traced = [this.mcp, this.worker, this.callbacks, ...(this.workflows ? [this.workflows.receiver, this.workflows.events] : [])];
    if (settings.traced) for (const fn of traced) traceFunction(fn, settings.traced, Stack.of(this).stackName);
    if (auth) this.#resourceServerEnvironment(auth);
    this.#links(settings);
    this.operations = new Operations(this, 'Operations', {
      api: this.api,
      mcp: this.mcp,
      tasks: this.tasks,
      worker: this.worker,
      sweeper: this.sweeps.sweeper,
      sweepInterval: settings.sweepInterval,
      dashboard: settings.dashboard,
      ...(this.workflows ? { workflowEvents: this.workflows.deadLetterQueue } : {}),
      ...(settings.alarmTopicArn ? { alarmTopicArn: settings.alarmTopicArn } : {}),
    });
    this.#operatorOutputs(activeIndexShards);
  }

  /** What every function of the queue's environment gets: the worker, the MCP function, the sweeper, the dead-letter handler, the console, the callbacks. */
  #sharedEnvironment(settings: ResolvedProps, timings: DurableTimings, activeIndexShards: number): Record<string, string> {
    return {
      // Every function of the queue's environment publishes: the worker, the MCP function, the sweeper, the dead-letter handler.
      ...this.events?.environment,
      [ENV.tableName]: this.table.table.tableName,
      ...timingsEnvironment(timings),
      // Every writer spreads rows over, and every reader reads, the same index partitions.
      [ENV.activeIndexShards]: String(activeIndexShards),
      // Every function that writes a waiting task (or ends it) applies the same deadline.
      ...(settings.maxInputWait ? { [ENV.maxInputWaitMs]: String(settings.maxInputWait.toMilliseconds()) } : {}),
      // Every function that creates a task takes a slot under the same cap, and every one that ends a task frees it.
      ...(settings.maxUnfinishedTasks !== undefined ? { [ENV.maxUnfinishedTasks]: String(settings.maxUnfinishedTasks) } : {}),
      // Every function that asks, lists or decides a question for a person follows the same approvers rule.
      ...(settings.approvers ? { [ENV.approvers]: settings.approvers } : {}),
      ...(settings.personQuestions === 'form' ? { [ENV.personQuestions]: 'form' } : {}),
    };
  }

  /** The MCP function: it creates and reads tasks, runs `sync` and `optional` tools and `prepare` inside the request. */
  #mcpFunction(settings: ResolvedProps, code: FunctionCode): TaskFunction {
    const inlineTools = code.tools.filter(runsInline);
    const fn = new TaskFunction(this, 'Mcp', {
      code,
      logRetention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
      tracing: settings.tracing,
      entry: 'mcp',
      description: 'MCP tasks: the MCP endpoint (POST /mcp)',
      // Cold starts load the MCP SDK, zod and two AWS clients: more memory is more CPU.
      memorySize: 512,
      // Above the synchronous tool budget (`syncBudgetMs`), below the HTTP
      // API's 30-second integration limit.
      timeout: mcpTimeout(DEFAULT_SETTINGS.syncBudgetMs),
      environment: {
        ...this.tasks.environment,
        [ENV.stackSecretParameter]: this.stackSecret.parameterName,
        ...(settings.allowedOrigins.length > 0 ? { [ENV.allowedOrigins]: settings.allowedOrigins.join(',') } : {}),
        ...(settings.clientFallback === false ? { [ENV.clientFallback]: 'off' } : {}),
        ...(settings.machineClaim ? { [ENV.machineClaim]: settings.machineClaim } : {}),
      },
      settingStores: settingStoresOf(inlineTools),
    });
    grantToolNeeds(fn, inlineTools);
    // The key exists before the first request can need it.
    fn.function.node.addDependency(this.stackSecret.resource);
    this.stackSecret.grantRead(fn.role);
    this.table.grantReadWriteData(fn);
    this.tasks.queue.grantSendMessages(fn.function);
    this.events?.grantPublish(fn);
    return fn;
  }

  /**
   * The console function: the task table's reads, answers and cancels
   * (`grantConsole`), the task queue (a resume after the last answer), the
   * stack's secret its cookie keys derive from, and the client secret when one is
   * given. Its sign-in issuer: the user pool (whose console client is made
   * once the API's URL is known: {@link McpTasks.#links}), else the first
   * configured issuer; without a client id there, a console of an endpoint
   * that requires tokens shows nothing.
   */
  #console(settings: ResolvedProps, code: FunctionCode, auth: ResourceServerProps | undefined): TaskFunction {
    const options = settings.console ?? {};
    const issuer = this.userPool?.issuer ?? auth?.issuers[0] ?? settings.jwt?.issuer;
    if (options.open && issuer)
      throw new Error('McpTasks: console.open (context "console=open") is for an open endpoint only: with an issuer, people sign in');
    const clientId = this.userPool ? undefined : options.clientId;
    const fn = new TaskFunction(this, 'Console', {
      code,
      logRetention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
      tracing: settings.tracing,
      entry: 'console',
      description: "MCP tasks: the console (a person's tasks in a browser, /console)",
      // Cold starts load Hono, the answer validator and two AWS clients: more memory is more CPU.
      memorySize: 512,
      // Room for a sign-in's calls to the issuer (discovery, token).
      timeout: Duration.seconds(15),
      environment: {
        ...this.tasks.environment,
        [ENV.stackSecretParameter]: this.stackSecret.parameterName,
        ...(options.open ? { [ENV.console]: 'open' } : {}),
        ...(issuer ? { [ENV.consoleIssuer]: issuer } : {}),
        ...(clientId ? { [ENV.consoleClientId]: clientId } : {}),
        ...(options.clientSecret ? { [ENV.consoleClientSecret]: options.clientSecret } : {}),
      },
      settingStores: { ssmParameter: false, secretsManager: options.clientSecret !== undefined },
    });
    fn.function.node.addDependency(this.stackSecret.resource);
    this.stackSecret.grantRead(fn.role);
    this.table.grantConsole(fn);
    this.tasks.queue.grantSendMessages(fn.function);
    // A cancel from a task's page ends the task here: its event too.
    this.events?.grantPublish(fn);
    if (options.clientSecret) {
      const secret = options.clientSecret.startsWith('arn:')
        ? Secret.fromSecretCompleteArn(this, 'ConsoleClientSecret', options.clientSecret)
        : Secret.fromSecretNameV2(this, 'ConsoleClientSecret', options.clientSecret);
      secret.grantRead(fn.function);
    }
    return fn;
  }

  /** The workflow tools' part (`constructs/workflows.ts`), and the worker's grants on it; none without workflow tools or bindings. */
  #workflows(settings: ResolvedProps, code: FunctionCode): Workflows | undefined {
    const bindings = settings.workflows ?? {};
    if (!code.tools.some((tool) => tool.workflow !== undefined) && Object.keys(bindings).length === 0) return undefined;
    const { logRetention, removalPolicy, tracing } = settings;
    const workflows = new Workflows(this, 'Workflows', {
      tools: code.tools,
      bindings,
      code,
      table: this.table,
      tasks: this.tasks,
      stackSecret: this.stackSecret,
      logRetention,
      removalPolicy,
      tracing,
    });
    workflows.grantWorker(this.worker);
    new CfnOutput(this, 'WorkflowReceiverArn', {
      value: workflows.receiver.function.functionArn,
      description: "The workflow receiver: an imported machine's task-token and progress states invoke it (docs/tools.md)",
    });
    return workflows;
  }

  /** The MCP function as an OAuth resource server: its issuers, canonical URL, scopes, audiences and client ids. */
  #resourceServerEnvironment(auth: ResourceServerProps): void {
    const fn = this.mcp.function;
    fn.addEnvironment(ENV.authIssuers, auth.issuers.join(','));
    // The canonical URL is a setting, never the Host header: the API's own URL unless a custom one is given.
    fn.addEnvironment(ENV.authResource, auth.resource ?? this.api.endpointUrl);
    if (auth.scopes.length) fn.addEnvironment(ENV.authScopes, auth.scopes.join(' '));
    if (auth.audiences.length) fn.addEnvironment(ENV.authAudiences, auth.audiences.join(','));
    if (auth.clientIds.length) fn.addEnvironment(ENV.authClientIds, auth.clientIds.join(','));
    if (auth.authorizationServers.length) fn.addEnvironment(ENV.authServers, auth.authorizationServers.join(','));
  }

  /**
   * Every link given to people and models is built from the HTTP API's own
   * URL (`TASKS_PUBLIC_URL`, never a request's `Host`): on the MCP function
   * (the fallback's texts), the worker (a waiting task's status) and the
   * console (its callback, its origin). The user pool's console client is
   * sent back to the same URL's `/console/callback`. Functions that create
   * tasks list them for their owners when the console signs people in or is
   * open: they are told so (`TASKS_CONSOLE`, `TASKS_CONSOLE_CLIENT_ID`).
   */
  #links(settings: ResolvedProps): void {
    const publicUrl = this.api.httpApi.apiEndpoint;
    for (const fn of [this.mcp, this.worker, this.console]) fn.function.addEnvironment(ENV.publicUrl, publicUrl);
    const options = settings.console ?? {};
    const clientId = this.userPool ? this.userPool.addConsoleClient(`${publicUrl}/console/callback`).userPoolClientId : options.clientId;
    if (this.userPool && clientId) this.console.function.addEnvironment(ENV.consoleClientId, clientId);
    if (clientId) this.mcp.function.addEnvironment(ENV.consoleClientId, clientId);
    if (options.open) this.mcp.function.addEnvironment(ENV.console, 'open');
    new CfnOutput(this, 'ConsoleUrl', { value: `${publicUrl}/console`, description: "The console: a person's tasks in a browser" });
    new CfnOutput(this, 'ConsoleCallbackUrl', {
      value: `${publicUrl}/console/callback`,
      description: "The console's sign-in callback: register it with the console's client at your issuer",
    });
  }

  /** The resource server settings, with the construct's own user pool (if any) as one more issuer. */
  #resourceServer(settings: ResolvedProps): ResourceServerProps | undefined {
    if (!settings.cognito) return settings.auth;
    const { domainPrefix, callbackUrls = [...DEFAULT_CALLBACK_URLS] } = settings.cognito;
    if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(domainPrefix)) {
      throw new Error(
        `McpTasks: cognito.domainPrefix must be lowercase letters, digits and hyphens (globally unique), got "${domainPrefix}"`,
      );
    }
    const pool = new McpUserPool(this, 'UserPool', { domainPrefix, callbackUrls, removalPolicy: settings.removalPolicy });
    (this as { userPool?: McpUserPool }).userPool = pool;
    const base = settings.auth ?? { issuers: [], scopes: [USER_POOL_SCOPE], audiences: [], clientIds: [], authorizationServers: [] };
    return {
      ...base,
      issuers: [...base.issuers, pool.issuer],
      // Cognito access tokens carry no `aud`: accept them from the pool's own clients only.
      clientIds: [...base.clientIds, pool.userClient.userPoolClientId, pool.serviceClient.userPoolClientId],
    };
  }

  /**
   * What the operator commands (`mcp-tasks ops`) find the deployment by:
   * `cdk deploy --outputs-file cdk-outputs.json`. In the stack's scope, so the
   * outputs keep these names whatever the construct's id.
   */
  #operatorOutputs(activeIndexShards: number): void {
    const stack = Stack.of(this);
    new CfnOutput(stack, OPS_OUTPUTS.tableName, { value: this.table.table.tableName, description: 'Task table (operator commands)' });
    new CfnOutput(stack, OPS_OUTPUTS.queueUrl, { value: this.tasks.queue.queueUrl, description: 'Task queue (operator commands)' });
    new CfnOutput(stack, OPS_OUTPUTS.deadLetterQueueUrl, {
      value: this.tasks.deadLetterQueue.queueUrl,
      description: 'Dead-letter queue (operator commands)',
    });
    new CfnOutput(stack, OPS_OUTPUTS.activeIndexShards, {
      value: String(activeIndexShards),
      description: 'Partitions of the index of unfinished tasks (operator commands)',
    });
  }
}

/** Stacks that hold an McpTasks: its state key's parameter and its outputs are named per stack. */
const claimed = new WeakSet<Stack>();

function claimStack(construct: Construct): void {
  const stack = Stack.of(construct);
  if (claimed.has(stack)) throw new Error(`McpTasks: stack ${stack.node.path} already holds one; put another in a stack of its own`);
  claimed.add(stack);
}

/** HTTP APIs end an integration after 30 seconds; the function must finish first. */
const HTTP_API_INTEGRATION_LIMIT_MS = 30_000;

function mcpTimeout(syncBudgetMs: number) {
  const timeoutMs = syncBudgetMs + 5_000;
  if (timeoutMs >= HTTP_API_INTEGRATION_LIMIT_MS) {
    throw new Error(`The synchronous budget (${syncBudgetMs} ms) leaves the MCP function no room under the HTTP API's 30 s limit`);
  }
  return Duration.millis(timeoutMs);
}
