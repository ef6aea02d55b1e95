import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct, Node } from 'constructs';
import { DEFAULT_SETTINGS, ENV, type Toolset } from '../shared/config.ts';
import { OPS_OUTPUTS } from '../shared/ops/outputs.ts';
import { settingStoresOf } from '../shared/runtime/settings.ts';
import type { ToolDefinition } from '../shared/runtime/tool.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY } from './event-sources.ts';
import { Api, type ApiThrottle, type JwtSettings } from './constructs/api.ts';
import { Operations } from './constructs/operations.ts';
import { McpUserPool, USER_POOL_SCOPE } from './constructs/user-pool.ts';
import { StateKey } from './constructs/state-key.ts';
import { FUNCTION_ENTRIES, TaskFunction } from './constructs/task-function.ts';
import { grantToolNeeds, runsAsTask, runsInline, toolsOf } from './constructs/tool-needs.ts';
import { TaskQueue } from './constructs/task-queue.ts';
import { TaskTable } from './constructs/task-table.ts';
import { DEFAULT_SWEEP_INTERVAL, durableTimings, timingsEnvironment } from './timings.ts';

/** Context keys the stack reads (`cdk.json` holds the defaults; override with `-c key=value`). */
export const CONTEXT = {
  toolset: 'toolset',
  removalPolicy: 'removalPolicy',
  jwtIssuer: 'jwtIssuer',
  jwtAudience: 'jwtAudience',
  authIssuer: 'authIssuer',
  authResource: 'authResource',
  authScopes: 'authScopes',
  authAudiences: 'authAudiences',
  authClientIds: 'authClientIds',
  authServers: 'authServers',
  cognito: 'cognito',
  cognitoDomainPrefix: 'cognitoDomainPrefix',
  cognitoCallbackUrls: 'cognitoCallbackUrls',
  throttleRateLimit: 'throttleRateLimit',
  throttleBurstLimit: 'throttleBurstLimit',
  logRetentionDays: 'logRetentionDays',
  workerMaxConcurrency: 'workerMaxConcurrency',
  alarmTopicArn: 'alarmTopicArn',
  sweepIntervalMinutes: 'sweepIntervalMinutes',
  /** `true` turns on active X-Ray tracing on every function (off by default: see the README's cost section). */
  tracing: 'tracing',
  /** `true` adds the CloudWatch dashboard ($3 a month at list price; off by default). */
  dashboard: 'dashboard',
  allowedOrigins: 'allowedOrigins',
  maxUnfinishedTasks: 'maxUnfinishedTasks',
} as const;

export interface TasksStackProps extends StackProps {
  /** Which tool catalogue the endpoint serves. */
  readonly toolset: Exclude<Toolset, 'test'>;
  /**
   * The tools whose `needs` (settings, secrets, permissions) the functions
   * are granted. Default: the toolset's catalogue, which is what the bundles
   * serve; pass a list only to check grants without bundling (tests).
   */
  readonly tools?: readonly ToolDefinition[];
  /** For the table and the log groups; `RETAIN` unless this is a throw-away stack. */
  readonly removalPolicy: RemovalPolicy;
  /** An HTTP API JWT authorizer; with {@link TasksStackProps.auth} only a pre-filter. */
  readonly jwt?: JwtSettings;
  /** The MCP function as an OAuth resource server. Without it or `jwt` the endpoint is open (and the stack says so). */
  readonly auth?: ResourceServerProps;
  /** A Cognito user pool the stack creates as the authorization server (added to `auth`'s issuers). */
  readonly cognito?: { readonly domainPrefix: string; readonly callbackUrls: string[] };
  readonly throttle: ApiThrottle;
  readonly logRetention: RetentionDays;
  readonly workerMaxConcurrency: number;
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
   * as the HTTP API's CORS. Default: none.
   */
  readonly allowedOrigins?: string[];
  /** Most unfinished tasks per principal; default: no cap. */
  readonly maxUnfinishedTasks?: number;
}

/** The resource server's settings (see `shared/auth/settings.ts`); lists may be empty. */
export interface ResourceServerProps {
  readonly issuers: string[];
  /** The canonical endpoint URL (default: the HTTP API's `…/mcp` URL); set it for a custom domain. */
  readonly resource?: string;
  readonly scopes: string[];
  readonly audiences: string[];
  readonly clientIds: string[];
  readonly authorizationServers: string[];
}

/** Settings when neither props nor context say otherwise. */
export const STACK_DEFAULTS = {
  toolset: 'product',
  removalPolicy: RemovalPolicy.RETAIN,
  throttle: { rateLimit: 100, burstLimit: 200 },
  logRetention: RetentionDays.ONE_MONTH,
  workerMaxConcurrency: DEFAULT_WORKER_MAX_CONCURRENCY,
  sweepInterval: DEFAULT_SWEEP_INTERVAL,
  tracing: false,
  dashboard: false,
} as const satisfies Partial<TasksStackProps>;

/**
 * The MCP Tasks server: task table, task queue with worker, dead-letter
 * handler and scheduled sweeper, the HTTP API in front of the MCP function,
 * alarms and, when asked for, a dashboard and tracing.
 * Environment-agnostic: nothing is looked up, so it synthesizes offline.
 */
export class TasksStack extends Stack {
  readonly table: TaskTable;
  readonly tasks: TaskQueue;
  readonly mcp: TaskFunction;
  readonly api: Api;
  readonly stateKey: StateKey;
  readonly operations: Operations;
  /** The user pool, when the stack creates one. */
  readonly userPool?: McpUserPool;

  constructor(scope: Construct, id: string, props: TasksStackProps) {
    super(scope, id, props);
    const common = { logRetention: props.logRetention, removalPolicy: props.removalPolicy, tracing: props.tracing };
    const timings = durableTimings(props.sweepInterval);
    const tools = props.tools ?? toolsOf(props.toolset);
    const taskTools = tools.filter(runsAsTask);
    const inlineTools = tools.filter(runsInline);

    this.table = new TaskTable(this, 'TaskTable', { removalPolicy: props.removalPolicy });
    this.tasks = new TaskQueue(this, 'TaskQueue', {
      ...common,
      table: this.table,
      environment: {
        [ENV.tableName]: this.table.table.tableName,
        [ENV.toolset]: props.toolset,
        ...timingsEnvironment(timings),
      },
      timings,
      workerMaxConcurrency: props.workerMaxConcurrency,
      workerSettingStores: settingStoresOf(taskTools),
    });
    grantToolNeeds(this.tasks.worker, taskTools);

    this.stateKey = new StateKey(this, 'StateKey', common);
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
        [ENV.stateKeyParameter]: this.stateKey.parameterName,
        ...(allowedOrigins.length > 0 ? { [ENV.allowedOrigins]: allowedOrigins.join(',') } : {}),
        ...(props.maxUnfinishedTasks ? { [ENV.maxUnfinishedTasks]: String(props.maxUnfinishedTasks) } : {}),
      },
      settingStores: settingStoresOf(inlineTools),
    });
    grantToolNeeds(this.mcp, inlineTools);
    // The key exists before the first request can need it.
    this.mcp.function.node.addDependency(this.stateKey.resource);
    this.stateKey.grantRead(this.mcp.role);
    this.table.grantReadWriteData(this.mcp);
    this.tasks.queue.grantSendMessages(this.mcp.function);

    const auth = this.#resourceServer(props);
    this.api = new Api(this, 'Api', {
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      handler: this.mcp.function,
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
    this.operations = new Operations(this, 'Operations', {
      api: this.api,
      mcp: this.mcp,
      tasks: this.tasks,
      sweepInterval: props.sweepInterval,
      dashboard: props.dashboard,
      ...(props.alarmTopicArn ? { alarmTopicArn: props.alarmTopicArn } : {}),
    });

    // What the operator commands (`npm run ops`) find the stack by: `cdk deploy --outputs-file cdk-outputs.json`.
    new CfnOutput(this, OPS_OUTPUTS.tableName, { value: this.table.table.tableName, description: 'Task table (operator commands)' });
    new CfnOutput(this, OPS_OUTPUTS.queueUrl, { value: this.tasks.queue.queueUrl, description: 'Task queue (operator commands)' });
    new CfnOutput(this, OPS_OUTPUTS.deadLetterQueueUrl, { value: this.tasks.deadLetterQueue.queueUrl, description: 'Dead-letter queue (operator commands)' });
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

/** Reads {@link TasksStackProps} from context; a malformed value fails synthesis with the key's name. */
export function tasksStackPropsFromContext(node: Node): TasksStackProps {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new Error(`Context "${key}" must be a string`);
    return value;
  };
  const integer = (key: string, fallback: number): number => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return fallback;
    const number = typeof value === 'number' ? value : Number(value);
    if (!Number.isSafeInteger(number) || number <= 0) throw new Error(`Context "${key}" must be a positive integer, got ${JSON.stringify(value)}`);
    return number;
  };

  const toolset = text(CONTEXT.toolset) ?? STACK_DEFAULTS.toolset;
  if (toolset !== 'product' && toolset !== 'conformance' && toolset !== 'all') {
    throw new Error(`Context "${CONTEXT.toolset}" must be product, conformance or all, got "${toolset}"`);
  }

  const removal = text(CONTEXT.removalPolicy) ?? 'retain';
  if (removal !== 'retain' && removal !== 'destroy') throw new Error(`Context "${CONTEXT.removalPolicy}" must be retain or destroy, got "${removal}"`);

  const logRetention = integer(CONTEXT.logRetentionDays, STACK_DEFAULTS.logRetention) as RetentionDays;
  if (!Object.values(RetentionDays).includes(logRetention)) {
    throw new Error(`Context "${CONTEXT.logRetentionDays}" must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, …), got ${logRetention}`);
  }

  const workerMaxConcurrency = integer(CONTEXT.workerMaxConcurrency, STACK_DEFAULTS.workerMaxConcurrency);
  if (workerMaxConcurrency < 2 || workerMaxConcurrency > 1000) {
    throw new Error(`Context "${CONTEXT.workerMaxConcurrency}" must be between 2 and 1000 (the SQS event source limits)`);
  }

  const sweepInterval = Duration.minutes(integer(CONTEXT.sweepIntervalMinutes, STACK_DEFAULTS.sweepInterval.toMinutes()));
  try {
    durableTimings(sweepInterval);
  } catch (error) {
    throw new Error(`Context "${CONTEXT.sweepIntervalMinutes}" does not fit the other timings: ${(error as Error).message}`);
  }
  const alarmTopicArn = text(CONTEXT.alarmTopicArn);
  const flag = (key: string, fallback: boolean): boolean => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new Error(`Context "${key}" must be true or false, got ${JSON.stringify(value)}`);
  };
  const allowedOrigins = (text(CONTEXT.allowedOrigins) ?? '').split(',').map((origin) => origin.trim()).filter(Boolean);
  for (const origin of allowedOrigins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) throw new Error(`Context "${CONTEXT.allowedOrigins}" must list origins like https://app.example.com, got "${origin}"`);
  }
  const maxUnfinished = node.tryGetContext(CONTEXT.maxUnfinishedTasks) === undefined ? undefined : integer(CONTEXT.maxUnfinishedTasks, 1);
  return {
    tracing: flag(CONTEXT.tracing, STACK_DEFAULTS.tracing),
    dashboard: flag(CONTEXT.dashboard, STACK_DEFAULTS.dashboard),
    toolset,
    removalPolicy: removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    throttle: {
      rateLimit: integer(CONTEXT.throttleRateLimit, STACK_DEFAULTS.throttle.rateLimit),
      burstLimit: integer(CONTEXT.throttleBurstLimit, STACK_DEFAULTS.throttle.burstLimit),
    },
    logRetention,
    workerMaxConcurrency,
    sweepInterval,
    ...jwtFromContext(node),
    ...authFromContext(node),
    ...(alarmTopicArn ? { alarmTopicArn } : {}),
    ...(allowedOrigins.length > 0 ? { allowedOrigins } : {}),
    ...(maxUnfinished ? { maxUnfinishedTasks: maxUnfinished } : {}),
  };
}

/** `jwtIssuer` and `jwtAudience` (a list, or one comma-separated string) come together or not at all. */
function jwtFromContext(node: Node): { jwt?: JwtSettings } {
  const issuer: unknown = node.tryGetContext(CONTEXT.jwtIssuer);
  const rawAudience: unknown = node.tryGetContext(CONTEXT.jwtAudience);
  const audience = (Array.isArray(rawAudience) ? rawAudience : typeof rawAudience === 'string' ? rawAudience.split(',') : [])
    .map((value: unknown) => String(value).trim())
    .filter((value) => value !== '');
  const hasIssuer = typeof issuer === 'string' && issuer.trim() !== '';
  if (!hasIssuer && audience.length === 0) return {};
  if (!hasIssuer || audience.length === 0) {
    throw new Error(`Context "${CONTEXT.jwtIssuer}" and "${CONTEXT.jwtAudience}" must be given together`);
  }
  if (!/^https:\/\/\S+$/.test(issuer.trim())) throw new Error(`Context "${CONTEXT.jwtIssuer}" must be an https URL`);
  return { jwt: { issuer: issuer.trim(), audience } };
}

/**
 * The resource server from context: `authIssuer` (comma-separated) turns it
 * on; `cognito=true` adds a user pool (with `cognitoDomainPrefix`). The other
 * `auth*` keys are lists too. Checked here so a bad value fails synthesis.
 */
function authFromContext(node: Node): Pick<TasksStackProps, 'auth' | 'cognito'> {
  const listOf = (key: string): string[] => {
    const value: unknown = node.tryGetContext(key);
    const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[\s,]+/) : [];
    return items.map((item: unknown) => String(item).trim()).filter((item) => item !== '');
  };
  const issuers = listOf(CONTEXT.authIssuer);
  for (const issuer of issuers) {
    if (!/^https:\/\/\S+$/.test(issuer)) throw new Error(`Context "${CONTEXT.authIssuer}" must hold https URLs, got "${issuer}"`);
  }
  const resource = listOf(CONTEXT.authResource)[0];
  if (resource !== undefined) {
    let url: URL;
    try {
      url = new URL(resource);
    } catch {
      throw new Error(`Context "${CONTEXT.authResource}" must be a URL, got "${resource}"`);
    }
    // The metadata routes are at the path of /mcp; a custom domain must map the API at its root.
    if (url.protocol !== 'https:' || url.pathname !== '/mcp' || url.search || url.hash) {
      throw new Error(`Context "${CONTEXT.authResource}" must be https://<host>/mcp, got "${resource}"`);
    }
  }
  const cognitoValue: unknown = node.tryGetContext(CONTEXT.cognito);
  const cognitoOn = cognitoValue === true || cognitoValue === 'true';
  const result: { -readonly [K in 'auth' | 'cognito']?: TasksStackProps[K] } = {};
  if (issuers.length) {
    result.auth = {
      issuers,
      ...(resource ? { resource } : {}),
      scopes: listOf(CONTEXT.authScopes),
      audiences: listOf(CONTEXT.authAudiences),
      clientIds: listOf(CONTEXT.authClientIds),
      authorizationServers: listOf(CONTEXT.authServers),
    };
  } else if (['authResource', 'authScopes', 'authAudiences', 'authClientIds', 'authServers'].some((key) => listOf(key).length) && !cognitoOn) {
    throw new Error(`Context "${CONTEXT.authIssuer}" (or "${CONTEXT.cognito}=true") is required with the other auth* settings`);
  }
  if (cognitoOn) {
    const domainPrefix = listOf(CONTEXT.cognitoDomainPrefix)[0];
    if (!domainPrefix || !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(domainPrefix)) {
      throw new Error(`Context "${CONTEXT.cognitoDomainPrefix}" (lowercase letters, digits, hyphens; globally unique) is required with "${CONTEXT.cognito}=true"`);
    }
    const callbackUrls = listOf(CONTEXT.cognitoCallbackUrls);
    result.cognito = { domainPrefix, callbackUrls: callbackUrls.length ? callbackUrls : [...DEFAULT_CALLBACK_URLS] };
  }
  return result;
}

/** Loopback callbacks of the project's CLI and of the MCP Inspector, for the user pool's client. */
export const DEFAULT_CALLBACK_URLS = ['http://127.0.0.1:33418/callback', 'http://localhost:6274/oauth/callback'] as const;
