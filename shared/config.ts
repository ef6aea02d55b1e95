/**
 * Configuration, read once at start-up from the environment and passed down.
 * The variable names are shared with `infra/` so the stack and the functions
 * can never disagree on them.
 */
import { checkAuthSettings, list, type AuthSettings } from './auth/settings.ts';

/** Environment variable names, shared by `infra/` (which sets them) and `functions/` (which read them). */
export const ENV = {
  tableName: 'TASKS_TABLE_NAME',
  queueUrl: 'TASKS_QUEUE_URL',
  /** The dead-letter queue, which its handler drains on the sweep schedule (that function only). */
  deadLetterQueueUrl: 'TASKS_DEAD_LETTER_QUEUE_URL',
  /** The principal tasks are bound to when no authorizer identifies the caller. */
  localPrincipal: 'TASKS_LOCAL_PRINCIPAL',
  /** `ttlMs` advertised on creation. */
  taskTtlMs: 'TASKS_TTL_MS',
  /** How long a task stays readable once it has ended (completed, failed or cancelled). */
  retentionMs: 'TASKS_RETENTION_MS',
  pollIntervalMs: 'TASKS_POLL_INTERVAL_MS',
  /** Lease a worker takes on a task while running it. */
  leaseMs: 'TASKS_LEASE_MS',
  /**
   * How often a running task's worker checks for cancellation (a read, or the
   * lease renewal once a third of the lease has passed), progress or not.
   */
  cancelCheckMs: 'TASKS_CANCEL_CHECK_MS',
  /** Minimum time between two progress writes of one task. */
  progressIntervalMs: 'TASKS_PROGRESS_INTERVAL_MS',
  /** Longest a synchronous (non-task) tool call may run inside the request. */
  syncBudgetMs: 'TASKS_SYNC_BUDGET_MS',
  /** Longest `pollIntervalMs` suggested to clients of an old task. */
  maxPollIntervalMs: 'TASKS_MAX_POLL_INTERVAL_MS',
  /** How long a task may go unnoticed past its next expected event before the sweeper re-enqueues it. */
  sweepGraceMs: 'TASKS_SWEEP_GRACE_MS',
  /** How long step checkpoints are kept (the longest a step-structured job may run). */
  stepRetentionMs: 'TASKS_STEP_RETENTION_MS',
  /** Most time one worker invocation spends on a task before handing over to a continuation. */
  invocationBudgetMs: 'TASKS_INVOCATION_BUDGET_MS',
  /**
   * Runs a task may take through `RetryableError`, or through crashes and
   * timeouts without a new step checkpoint, before it ends `failed` (a run
   * that records a step starts the count again).
   */
  maxAttempts: 'TASKS_MAX_ATTEMPTS',
  /** First retry delay; doubles with each attempt (capped at SQS's 15 minutes). */
  retryBaseDelayMs: 'TASKS_RETRY_BASE_DELAY_MS',
  /**
   * When SQS redelivers a message the worker did not delete: the task queue's
   * visibility timeout (set by the stack). The sweeper leaves such a task alone until then.
   */
  redeliveryMs: 'TASKS_REDELIVERY_MS',
  /**
   * The longest a task may wait for input (from the moment it starts waiting):
   * past it the sweeper ends the task `failed`. While it waits, the advertised
   * `ttlMs` covers this deadline plus the retention.
   */
  maxInputWaitMs: 'TASKS_MAX_INPUT_WAIT_MS',
  /**
   * Which tool catalogue the functions serve: `product` (default),
   * `conformance`, `all`, or `test` (`all` plus the durability fixtures; tests
   * only). A deployed function's catalogue is fixed when it is bundled.
   */
  toolset: 'TASKS_TOOLSET',
  /**
   * Origins (`https://app.example.com`, comma-separated) whose pages may call
   * the endpoint; a request with any other `Origin` gets 403, one without an
   * `Origin` (a non-browser client) is served. The stack gives the same list
   * to the HTTP API's CORS configuration. Default: none.
   */
  allowedOrigins: 'TASKS_ALLOWED_ORIGINS',
  /** Name of the SSM SecureString holding the `requestState` sealing key (base64, 32 bytes or more). */
  stateKeyParameter: 'TASKS_STATE_KEY_PARAMETER',
  /** Most unfinished tasks one principal may have at once (unset or 0: no cap). */
  maxUnfinishedTasks: 'TASKS_MAX_UNFINISHED_TASKS',
  /**
   * Issuers whose access tokens the endpoint accepts (comma-separated). Set, the
   * endpoint is an OAuth resource server and every MCP request needs a token;
   * unset, it is open (one shared principal).
   */
  authIssuers: 'TASKS_AUTH_ISSUERS',
  /** The endpoint's canonical URL: the metadata's `resource` and the audience tokens must carry. Required with issuers. */
  authResource: 'TASKS_AUTH_RESOURCE',
  /** Scopes every request needs (space- or comma-separated). */
  authScopes: 'TASKS_AUTH_SCOPES',
  /** Advertised authorization servers, when not the issuers themselves. */
  authServers: 'TASKS_AUTH_SERVERS',
  /** Further accepted `aud` values, for IdPs that cannot put the resource URL in `aud`. */
  authAudiences: 'TASKS_AUTH_AUDIENCES',
  /** Client ids whose tokens may lack `aud` altogether (Cognito without resource binding). */
  authClientIds: 'TASKS_AUTH_CLIENT_IDS',
} as const;

/** `test` adds the durability fixtures to `all`; tests only. */
export type Toolset = 'product' | 'conformance' | 'all' | 'test';

export interface TaskSettings {
  taskTtlMs: number;
  retentionMs: number;
  pollIntervalMs: number;
  leaseMs: number;
  cancelCheckMs: number;
  progressIntervalMs: number;
  syncBudgetMs: number;
  maxPollIntervalMs: number;
  sweepGraceMs: number;
  stepRetentionMs: number;
  invocationBudgetMs: number;
  maxAttempts: number;
  retryBaseDelayMs: number;
  redeliveryMs: number;
  maxInputWaitMs: number;
}

export interface Config extends TaskSettings {
  tableName: string;
  queueUrl: string;
  deadLetterQueueUrl?: string;
  localPrincipal: string;
  toolset: Toolset;
  allowedOrigins: string[];
  /** Where the MCP function reads its `requestState` key on AWS (the local stack keeps its own key file). */
  stateKeyParameter?: string;
  /** Most unfinished tasks per principal; `undefined`: no cap. */
  maxUnfinishedTasks?: number;
  /** Present when the endpoint requires tokens (`TASKS_AUTH_ISSUERS` set). */
  auth?: AuthSettings;
}

export const DEFAULT_SETTINGS: TaskSettings = {
  taskTtlMs: 60 * 60 * 1000,
  retentionMs: 60 * 60 * 1000,
  pollIntervalMs: 1000,
  leaseMs: 5 * 60 * 1000,
  cancelCheckMs: 5000,
  progressIntervalMs: 1000,
  syncBudgetMs: 20_000,
  maxPollIntervalMs: 30_000,
  sweepGraceMs: 60_000,
  stepRetentionMs: 30 * 24 * 60 * 60 * 1000,
  invocationBudgetMs: 14 * 60 * 1000,
  maxAttempts: 5,
  retryBaseDelayMs: 2000,
  redeliveryMs: 30_000,
  // A week: long enough for a person to answer across a weekend, short enough
  // that an abandoned question does not hold a task (and its index entry) for ever.
  maxInputWaitMs: 7 * 24 * 60 * 60 * 1000,
};

/** The longest retention that may be configured: results are not an archive. */
export const MAX_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

type Env = Record<string, string | undefined>;

/** Reads the configuration; required values missing is an error at start, not at first use. */
export function loadConfig(env: Env = process.env): Config {
  const config: Config = {
    tableName: required(env, ENV.tableName),
    queueUrl: required(env, ENV.queueUrl),
    ...(env[ENV.deadLetterQueueUrl] ? { deadLetterQueueUrl: env[ENV.deadLetterQueueUrl] } : {}),
    localPrincipal: env[ENV.localPrincipal] || 'local',
    toolset: toolset(env[ENV.toolset]),
    taskTtlMs: positiveInt(env, ENV.taskTtlMs, DEFAULT_SETTINGS.taskTtlMs),
    retentionMs: positiveInt(env, ENV.retentionMs, DEFAULT_SETTINGS.retentionMs),
    pollIntervalMs: positiveInt(env, ENV.pollIntervalMs, DEFAULT_SETTINGS.pollIntervalMs),
    leaseMs: positiveInt(env, ENV.leaseMs, DEFAULT_SETTINGS.leaseMs),
    cancelCheckMs: positiveInt(env, ENV.cancelCheckMs, DEFAULT_SETTINGS.cancelCheckMs),
    progressIntervalMs: positiveInt(env, ENV.progressIntervalMs, DEFAULT_SETTINGS.progressIntervalMs),
    syncBudgetMs: positiveInt(env, ENV.syncBudgetMs, DEFAULT_SETTINGS.syncBudgetMs),
    maxPollIntervalMs: positiveInt(env, ENV.maxPollIntervalMs, DEFAULT_SETTINGS.maxPollIntervalMs),
    sweepGraceMs: positiveInt(env, ENV.sweepGraceMs, DEFAULT_SETTINGS.sweepGraceMs),
    stepRetentionMs: positiveInt(env, ENV.stepRetentionMs, DEFAULT_SETTINGS.stepRetentionMs),
    invocationBudgetMs: positiveInt(env, ENV.invocationBudgetMs, DEFAULT_SETTINGS.invocationBudgetMs),
    maxAttempts: positiveInt(env, ENV.maxAttempts, DEFAULT_SETTINGS.maxAttempts),
    retryBaseDelayMs: positiveInt(env, ENV.retryBaseDelayMs, DEFAULT_SETTINGS.retryBaseDelayMs),
    redeliveryMs: positiveInt(env, ENV.redeliveryMs, DEFAULT_SETTINGS.redeliveryMs),
    maxInputWaitMs: positiveInt(env, ENV.maxInputWaitMs, DEFAULT_SETTINGS.maxInputWaitMs),
    allowedOrigins: origins(env[ENV.allowedOrigins]),
    ...(env[ENV.stateKeyParameter] ? { stateKeyParameter: env[ENV.stateKeyParameter] } : {}),
    ...(env[ENV.maxUnfinishedTasks] && env[ENV.maxUnfinishedTasks] !== '0'
      ? { maxUnfinishedTasks: positiveInt(env, ENV.maxUnfinishedTasks, 1) }
      : {}),
  };
  const auth = authSettings(env);
  if (auth) config.auth = auth;
  if (config.retentionMs > MAX_RETENTION_MS) throw new Error(`${ENV.retentionMs} may be at most ${MAX_RETENTION_MS} (30 days)`);
  return config;
}

function authSettings(env: Env): AuthSettings | undefined {
  const issuers = list(env[ENV.authIssuers]);
  if (issuers.length === 0) return undefined;
  const servers = list(env[ENV.authServers]);
  return checkAuthSettings(
    {
      resource: env[ENV.authResource] ?? '',
      issuers,
      authorizationServers: servers.length ? servers : issuers,
      scopes: list(env[ENV.authScopes]),
      audiences: list(env[ENV.authAudiences]),
      clientIds: list(env[ENV.authClientIds]),
    },
    { resource: ENV.authResource, issuers: ENV.authIssuers },
  );
}

function required(env: Env, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function toolset(raw: string | undefined): Toolset {
  if (raw === undefined || raw === '') return 'product';
  if (raw === 'product' || raw === 'conformance' || raw === 'all' || raw === 'test') return raw;
  throw new Error(`${ENV.toolset} must be product, conformance, all or test, got "${raw}"`);
}

/** A comma-separated list of origins, each `scheme://host[:port]` exactly as browsers send it. */
function origins(raw: string | undefined): string[] {
  const list = (raw ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const entry of list) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(entry);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== entry) throw new Error(`${ENV.allowedOrigins} must list origins like https://app.example.com, got "${entry}"`);
  }
  return list;
}
