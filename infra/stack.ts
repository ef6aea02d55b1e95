import { CfnOutput, Duration, type RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { DEFAULT_SETTINGS, ENV, type Toolset } from '../shared/config.ts';
import { settingStoresOf } from '../shared/runtime/settings.ts';
import type { ToolDefinition } from '../shared/runtime/tool.ts';
import { Api, type ApiThrottle, type JwtSettings } from './constructs/api.ts';
import { callbacksFunction } from './constructs/callbacks.ts';
import { Operations } from './constructs/operations.ts';
import { StackSecret } from './constructs/stack-secret.ts';
import { SweepSchedule } from './constructs/sweep-schedule.ts';
import { TaskEvents } from './constructs/task-events.ts';
import { FUNCTION_ENTRIES, TaskFunction } from './constructs/task-function.ts';
import { TaskQueue } from './constructs/task-queue.ts';
import { TaskTable } from './constructs/task-table.ts';
import { TaskWorker } from './constructs/task-worker.ts';
import { grantToolNeeds, runsAsTask, runsInline, toolsOf } from './constructs/tool-needs.ts';
import { McpUserPool, USER_POOL_SCOPE } from './constructs/user-pool.ts';
import { OPS_OUTPUTS } from './outputs.ts';
import { durableTimings, timingsEnvironment } from './timings.ts';

export interface TasksStackProps extends StackProps {
  /** Which tool catalogue the endpoint serves. */
  readonly toolset: Exclude<Toolset, 'test'>;
  /**
   * The tools whose `needs` (settings, secrets, permissions) the functions
   * are granted. Default: the toolset's catalogue, which is what the bundles
   * serve; pass a list only to check grants without bundling (tests).
   * @default the toolset's catalogue
   */
  readonly tools?: readonly ToolDefinition[];
  /** For the table and the log groups; `RETAIN` unless this is a throw-away stack. */
  readonly removalPolicy: RemovalPolicy;
  /**
   * An HTTP API JWT authorizer; with {@link TasksStackProps.auth} only a pre-filter.
   * @default none
   */
  readonly jwt?: JwtSettings;
  /**
   * The MCP function as an OAuth resource server. Without it or `jwt` the endpoint is open (and the stack says so).
   * @default none: an open endpoint
   */
  readonly auth?: ResourceServerProps;
  /**
   * A Cognito user pool the stack creates as the authorization server (added to `auth`'s issuers).
   * @default none: no user pool
   */
  readonly cognito?: { readonly domainPrefix: string; readonly callbackUrls: string[] };
  readonly throttle: ApiThrottle;
  readonly logRetention: RetentionDays;
  readonly workerMaxConcurrency: number;
  /**
   * Partitions of the index of unfinished tasks (`TASKS_ACTIVE_INDEX_SHARDS` on every function). It may grow, never shrink.
   * @default 4
   */
  readonly activeIndexShards?: number;
  /**
   * @default none: the alarms only change state
   */
  readonly alarmTopicArn?: string;
  /** How often the sweeper looks for stuck tasks (whole minutes; checked against the other timings in `infra/timings.ts`). */
  readonly sweepInterval: Duration;
  /** Active X-Ray tracing on every function. */
  readonly tracing: boolean;
  /** Whether to create the dashboard. */
  readonly dashboard: boolean;
  /**
   * Origins whose browser pages may call the endpoint (exact, e.g.
   * `https://app.example.com`): checked by the MCP function and configured
   * as the HTTP API's CORS.
   * @default `[]`
   */
  readonly allowedOrigins?: string[];
  /**
   * Who may decide questions for a person of tasks they do not own (`group:<name>,scope:<name>`, `TASKS_APPROVERS`).
   * @default nobody
   */
  readonly approvers?: string;
  /**
   * `form`: questions for a person always go out as forms (`TASKS_PERSON_QUESTIONS`).
   * @default URL mode where it may
   */
  readonly personQuestions?: 'url' | 'form';
  /** Which callers are machines (`<claim>=<value>` or `none`, `TASKS_MACHINE_CLAIM`). @default `sub` equals the token's client id */
  readonly machineClaim?: string;
  /**
   * Most unfinished tasks per principal (`0`: no cap), passed on as `TASKS_MAX_UNFINISHED_TASKS`.
   * @default the functions' own: 100 where the endpoint has an issuer (`unfinishedTaskCap`), else no cap
   */
  readonly maxUnfinishedTasks?: number;
  /**
   * `false`: serve clients without the tasks extension strictly (`TASKS_CLIENT_FALLBACK=off`).
   * @default `true`
   */
  readonly clientFallback?: boolean;
  /**
   * The longest a task may wait for input.
   * @default the functions' (`TASKS_MAX_INPUT_WAIT_MS`)
   */
  readonly maxInputWait?: Duration;
  /**
   * `false`: no lifecycle events (no bus, no grant, no `TASKS_EVENT_BUS`).
   * @default `true`
   */
  readonly events?: boolean;
  /**
   * The console's sign-in and, for an open endpoint, whether it lists every task (see {@link ConsoleProps}).
   * @default tasks by id on an open endpoint; sign-in where the stack has an issuer
   */
  readonly console?: ConsoleProps;
}

/** The console's settings (see docs/console.md). */
export interface ConsoleProps {
  /**
   * An open endpoint's console lists every task (`-c console=open`). Only without an issuer.
   * @default `false`
   */
  readonly open?: boolean;
  /**
   * The console's client id at the issuer people sign in with (the first `authIssuer`, else `jwtIssuer`); the user pool makes its own.
   * @default the user pool's console client, when the stack makes one
   */
  readonly clientId?: string;
  /**
   * The Secrets Manager secret (name or ARN) holding that client's secret, for an issuer that requires one.
   * @default none
   */
  readonly clientSecret?: string;
}

/** The resource server's settings (see `shared/auth/settings.ts`); lists may be empty. */
export interface ResourceServerProps {
  readonly issuers: string[];
  /**
   * The canonical endpoint URL; set it for a custom domain.
   * @default the HTTP API's `…/mcp` URL
   */
  readonly resource?: string;
  readonly scopes: string[];
  readonly audiences: string[];
  readonly clientIds: string[];
  readonly authorizationServers: string[];
}

/**
 * The MCP Tasks server: task table, task queue with worker, dead-letter
 * handler and scheduled sweeper, the HTTP API in front of the MCP function,
 * alarms and, when asked for, a dashboard and tracing.
 * Environment-agnostic: nothing is looked up, so it synthesizes offline.
 */
export class TasksStack extends Stack {
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
  /** The user pool, when the stack creates one. */
  readonly userPool?: McpUserPool;
  /** The lifecycle events' bus, unless `events` is off. */
  readonly events: TaskEvents | undefined;

  constructor(scope: Construct, id: string, props: TasksStackProps) {
    super(scope, id, props);
    const common = { logRetention: props.logRetention, removalPolicy: props.removalPolicy, tracing: props.tracing };
    const timings = durableTimings(props.sweepInterval);
    const activeIndexShards = props.activeIndexShards ?? DEFAULT_SETTINGS.activeIndexShards;
    const tools = props.tools ?? toolsOf(props.toolset);
    const taskTools = tools.filter(runsAsTask);
    const inlineTools = tools.filter(runsInline);

    this.table = new TaskTable(this, 'TaskTable', { removalPolicy: props.removalPolicy });
    const events = props.events === false ? undefined : new TaskEvents(this, 'Events');
    this.events = events;
    this.tasks = new TaskQueue(this, 'TaskQueue', {
      environment: {
        // Every function of the queue's environment publishes: the worker, the MCP function, the sweeper, the dead-letter handler.
        ...events?.environment,
        [ENV.tableName]: this.table.table.tableName,
        [ENV.toolset]: props.toolset,
        ...timingsEnvironment(timings),
        // Every writer spreads rows over, and every reader reads, the same index partitions.
        [ENV.activeIndexShards]: String(activeIndexShards),
        // Every function that writes a waiting task (or ends it) applies the same deadline.
        ...(props.maxInputWait ? { [ENV.maxInputWaitMs]: String(props.maxInputWait.toMilliseconds()) } : {}),
        // Every function that creates a task takes a slot under the same cap, and every one that ends a task frees it.
        ...(props.maxUnfinishedTasks !== undefined ? { [ENV.maxUnfinishedTasks]: String(props.maxUnfinishedTasks) } : {}),
        // Every function that asks, lists or decides a question for a person follows the same approvers rule.
        ...(props.approvers ? { [ENV.approvers]: props.approvers } : {}),
        ...(props.personQuestions === 'form' ? { [ENV.personQuestions]: 'form' } : {}),
      },
      timings,
    });
    // The worker and the scheduled functions live in the queue's scope:
    // construct paths make logical ids, and a changed id replaces the resource
    // on deploy. `Default` is left out of logical ids, so the schedule's
    // functions and rule have the ids of direct children of the queue construct.
    this.worker = new TaskWorker(this.tasks, 'Worker', {
      ...common,
      table: this.table,
      tasks: this.tasks,
      timings,
      maxConcurrency: props.workerMaxConcurrency,
      settingStores: settingStoresOf(taskTools),
    });
    this.sweeps = new SweepSchedule(this.tasks, 'Default', { ...common, table: this.table, tasks: this.tasks, timings });
    grantToolNeeds(this.worker, taskTools);
    for (const fn of [this.worker, this.sweeps.sweeper, this.sweeps.deadLetterHandler]) events?.grantPublish(fn);

    // The id predates the name: kept, so a deployed stack keeps its secret (a new id would replace it).
    this.stackSecret = new StackSecret(this, 'StateKey', common);
    const allowedOrigins = props.allowedOrigins ?? [];
    this.mcp = new TaskFunction(this, 'Mcp', {
      ...common,
      entry: FUNCTION_ENTRIES.mcp,
      description: 'MCP tasks: the MCP endpoint (POST /mcp)',
      // Cold starts load the MCP SDK, zod and two AWS clients: more memory is more CPU.
      memorySize: 512,
      // Above the synchronous tool budget (`syncBudgetMs`), below the HTTP
      // API's 30-second integration limit.
      timeout: mcpTimeout(DEFAULT_SETTINGS.syncBudgetMs),
      environment: {
        ...this.tasks.environment,
        [ENV.stackSecretParameter]: this.stackSecret.parameterName,
        ...(allowedOrigins.length > 0 ? { [ENV.allowedOrigins]: allowedOrigins.join(',') } : {}),
        ...(props.clientFallback === false ? { [ENV.clientFallback]: 'off' } : {}),
        ...(props.machineClaim ? { [ENV.machineClaim]: props.machineClaim } : {}),
      },
      settingStores: settingStoresOf(inlineTools),
    });
    grantToolNeeds(this.mcp, inlineTools);
    // The key exists before the first request can need it.
    this.mcp.function.node.addDependency(this.stackSecret.resource);
    this.stackSecret.grantRead(this.mcp.role);
    this.table.grantReadWriteData(this.mcp);
    this.tasks.queue.grantSendMessages(this.mcp.function);
    events?.grantPublish(this.mcp);

    const auth = this.#resourceServer(props);
    this.console = this.#console(props, auth);
    this.callbacks = callbacksFunction(this, { ...common, table: this.table, tasks: this.tasks, stackSecret: this.stackSecret });
    // The worker seals the tokens of the callback URLs it hands out.
    this.worker.function.addEnvironment(ENV.stackSecretParameter, this.stackSecret.parameterName);
    this.stackSecret.grantRead(this.worker.role);
    this.api = new Api(this, 'Api', {
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      handler: this.mcp.function,
      console: this.console.function,
      callbacks: this.callbacks.function,
      throttle: props.throttle,
      allowedOrigins,
      ...(props.jwt ? { jwt: props.jwt } : {}),
      ...(auth ? { resourceServer: { issuers: auth.issuers } } : {}),
    });
    if (auth) {
      const fn = this.mcp.function;
      fn.addEnvironment(ENV.authIssuers, auth.issuers.join(','));
      // The canonical URL is a setting, never the Host header: the API's own URL unless a custom one is given.
      fn.addEnvironment(ENV.authResource, auth.resource ?? this.api.endpointUrl);
      if (auth.scopes.length) fn.addEnvironment(ENV.authScopes, auth.scopes.join(' '));
      if (auth.audiences.length) fn.addEnvironment(ENV.authAudiences, auth.audiences.join(','));
      if (auth.clientIds.length) fn.addEnvironment(ENV.authClientIds, auth.clientIds.join(','));
      if (auth.authorizationServers.length) fn.addEnvironment(ENV.authServers, auth.authorizationServers.join(','));
    }
    this.#links(props);
    this.operations = new Operations(this, 'Operations', {
      api: this.api,
      mcp: this.mcp,
      tasks: this.tasks,
      worker: this.worker,
      sweeper: this.sweeps.sweeper,
      sweepInterval: props.sweepInterval,
      dashboard: props.dashboard,
      ...(props.alarmTopicArn ? { alarmTopicArn: props.alarmTopicArn } : {}),
    });

    // What the operator commands (`npm run ops`) find the stack by: `cdk deploy --outputs-file cdk-outputs.json`.
    new CfnOutput(this, OPS_OUTPUTS.tableName, { value: this.table.table.tableName, description: 'Task table (operator commands)' });
    new CfnOutput(this, OPS_OUTPUTS.queueUrl, { value: this.tasks.queue.queueUrl, description: 'Task queue (operator commands)' });
    new CfnOutput(this, OPS_OUTPUTS.deadLetterQueueUrl, {
      value: this.tasks.deadLetterQueue.queueUrl,
      description: 'Dead-letter queue (operator commands)',
    });
    new CfnOutput(this, OPS_OUTPUTS.activeIndexShards, {
      value: String(activeIndexShards),
      description: 'Partitions of the index of unfinished tasks (operator commands)',
    });
  }

  /**
   * The console function: the task table's reads, answers and cancels
   * (`grantConsole`), the task queue (a resume after the last answer), the
   * stack's secret its cookie keys derive from, and the client secret when one is
   * given. Its sign-in issuer: the user pool (whose console client is made
   * once the API's URL is known: {@link TasksStack.#links}), else the first
   * configured issuer; without a client id there, a console of an endpoint
   * that requires tokens shows nothing.
   */
  #console(props: TasksStackProps, auth: ResourceServerProps | undefined): TaskFunction {
    const settings = props.console ?? {};
    const issuer = this.userPool?.issuer ?? auth?.issuers[0] ?? props.jwt?.issuer;
    if (settings.open && issuer) throw new Error('Context "console=open" is for an open endpoint only: with an issuer, people sign in');
    const clientId = this.userPool ? undefined : settings.clientId;
    const fn = new TaskFunction(this, 'Console', {
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
      entry: FUNCTION_ENTRIES.console,
      description: "MCP tasks: the console (a person's tasks in a browser, /console)",
      // Cold starts load Hono, the answer validator and two AWS clients: more memory is more CPU.
      memorySize: 512,
      // Room for a sign-in's calls to the issuer (discovery, token).
      timeout: Duration.seconds(15),
      environment: {
        ...this.tasks.environment,
        [ENV.stackSecretParameter]: this.stackSecret.parameterName,
        ...(settings.open ? { [ENV.console]: 'open' } : {}),
        ...(issuer ? { [ENV.consoleIssuer]: issuer } : {}),
        ...(clientId ? { [ENV.consoleClientId]: clientId } : {}),
        ...(settings.clientSecret ? { [ENV.consoleClientSecret]: settings.clientSecret } : {}),
      },
      settingStores: { ssmParameter: false, secretsManager: settings.clientSecret !== undefined },
    });
    fn.function.node.addDependency(this.stackSecret.resource);
    this.stackSecret.grantRead(fn.role);
    this.table.grantConsole(fn);
    this.tasks.queue.grantSendMessages(fn.function);
    // A cancel from a task's page ends the task here: its event too.
    this.events?.grantPublish(fn);
    if (settings.clientSecret) {
      const secret = settings.clientSecret.startsWith('arn:')
        ? Secret.fromSecretCompleteArn(this, 'ConsoleClientSecret', settings.clientSecret)
        : Secret.fromSecretNameV2(this, 'ConsoleClientSecret', settings.clientSecret);
      secret.grantRead(fn.function);
    }
    return fn;
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
  #links(props: TasksStackProps): void {
    const publicUrl = this.api.httpApi.apiEndpoint;
    for (const fn of [this.mcp, this.worker, this.console]) fn.function.addEnvironment(ENV.publicUrl, publicUrl);
    const settings = props.console ?? {};
    const clientId = this.userPool ? this.userPool.addConsoleClient(`${publicUrl}/console/callback`).userPoolClientId : settings.clientId;
    if (this.userPool && clientId) this.console.function.addEnvironment(ENV.consoleClientId, clientId);
    if (clientId) this.mcp.function.addEnvironment(ENV.consoleClientId, clientId);
    if (settings.open) this.mcp.function.addEnvironment(ENV.console, 'open');
    new CfnOutput(this, 'ConsoleUrl', { value: `${publicUrl}/console`, description: "The console: a person's tasks in a browser" });
    new CfnOutput(this, 'ConsoleCallbackUrl', {
      value: `${publicUrl}/console/callback`,
      description: "The console's sign-in callback: register it with the console's client at your issuer",
    });
  }

  /** The resource server settings, with the stack's own user pool (if any) as one more issuer. */
  #resourceServer(props: TasksStackProps): ResourceServerProps | undefined {
    if (!props.cognito) return props.auth;
    const pool = new McpUserPool(this, 'UserPool', { ...props.cognito, removalPolicy: props.removalPolicy });
    (this as { userPool?: McpUserPool }).userPool = pool;
    const base = props.auth ?? { issuers: [], scopes: [USER_POOL_SCOPE], audiences: [], clientIds: [], authorizationServers: [] };
    return {
      ...base,
      issuers: [...base.issuers, pool.issuer],
      // Cognito access tokens carry no `aud`: accept them from the pool's own clients only.
      clientIds: [...base.clientIds, pool.userClient.userPoolClientId, pool.serviceClient.userPoolClientId],
    };
  }
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
