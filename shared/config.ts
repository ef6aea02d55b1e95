/**
 * Configuration, read once at start-up from the environment and passed down.
 *
 * {@link SETTINGS} is the one table of the functions' settings: each entry
 * names its variable, default, meaning and how it is read. `ENV`, `Config`,
 * `DEFAULT_SETTINGS` and `loadConfig` are derived from it, the stack sets the
 * variables by their `ENV` names, and the settings table of
 * `docs/configuration.md` is rendered from it (`bin/scripts/config-tables.ts`;
 * a test keeps it current).
 */
import { type Approvers, parseApprovers } from './auth/approvers.ts';
import { type MachineRule, parseMachineRule } from './auth/machine.ts';
import { type AuthSettings, checkAuthSettings } from './auth/settings.ts';
import { count, duration, listed, type Numeric, optional, origins, positiveInt, required, type Setting } from './setting-readers.ts';
import { parseWorkflowBindings, type WorkflowBindings } from './workflows/bindings.ts';

/** `test` adds the durability fixtures to `all`; tests only. */
export type Toolset = 'product' | 'conformance' | 'all' | 'test';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The longest retention that may be configured: results are not an archive. */
const MAX_RETENTION_MS = 30 * DAY;

const STACK_SETS = 'set by the stack';

/** The most index shards (`MAX_ACTIVE_INDEX_SHARDS` of the DynamoDB layout, which a test keeps equal). */
const MAX_INDEX_SHARDS = 64;

/** The cap on unfinished tasks per principal where people sign in, unless set otherwise: what peers and security guides use. */
export const DEFAULT_UNFINISHED_TASK_CAP = 100;

/**
 * The cap on unfinished tasks per principal (`undefined`: none) from the
 * setting (`-c maxUnfinishedTasks`, `TASKS_MAX_UNFINISHED_TASKS`; `0` turns
 * it off) and whether the endpoint has an issuer (its callers are people and
 * clients signed in, each a principal of their own, rather than the one
 * principal of an open endpoint): set, as set; unset,
 * {@link DEFAULT_UNFINISHED_TASK_CAP} with an issuer, none without. The one
 * rule: the functions (`loadConfig`), the stack's context and the capacity
 * model apply it.
 */
export function unfinishedTaskCap(setting: number | undefined, hasIssuer: boolean): number | undefined {
  if (setting !== undefined) return setting > 0 ? setting : undefined;
  return hasIssuer ? DEFAULT_UNFINISHED_TASK_CAP : undefined;
}

/** The functions' settings. Keep the order: `docs/configuration.md` shows it. */
export const SETTINGS = {
  tableName: required('TASKS_TABLE_NAME', 'the task table', STACK_SETS),
  queueUrl: required('TASKS_QUEUE_URL', 'the task queue', STACK_SETS),
  deadLetterQueueUrl: optional(
    'TASKS_DEAD_LETTER_QUEUE_URL',
    'the dead-letter queue, which its handler drains on the sweep schedule',
    'set by the stack on that function only',
  ),
  localPrincipal: {
    env: 'TASKS_LOCAL_PRINCIPAL',
    meaning: 'owner of tasks when no authorizer identifies the caller',
    shown: '`local`',
    read: (raw) => raw || 'local',
  },
  taskTtlMs: duration('TASKS_TTL_MS', HOUR, '`ttlMs` advertised at creation; it only ever grows'),
  retentionMs: duration('TASKS_RETENTION_MS', HOUR, 'how long a finished (completed, failed or cancelled) task stays readable', {
    max: MAX_RETENTION_MS,
  }),
  pollIntervalMs: duration('TASKS_POLL_INTERVAL_MS', SECOND, '`pollIntervalMs` suggested to clients of a new task'),
  maxPollIntervalMs: duration('TASKS_MAX_POLL_INTERVAL_MS', 30 * SECOND, 'ceiling of the age-adaptive `pollIntervalMs`'),
  leaseMs: duration('TASKS_LEASE_MS', 5 * MINUTE, "a worker's lease on a running task (renewed by heartbeats)"),
  cancelCheckMs: duration(
    'TASKS_CANCEL_CHECK_MS',
    5 * SECOND,
    'how often a running handler checks for cancellation (a read, or the lease renewal once a third of the lease has passed), progress ' +
      'or not',
  ),
  progressIntervalMs: duration('TASKS_PROGRESS_INTERVAL_MS', SECOND, 'minimum time between two progress writes of a task'),
  syncBudgetMs: duration(
    'TASKS_SYNC_BUDGET_MS',
    20 * SECOND,
    'longest a tool may run inside a request (also how long a 2025-era `tasks/result` waits)',
  ),
  sweepGraceMs: duration(
    'TASKS_SWEEP_GRACE_MS',
    MINUTE,
    'how long past its next expected event (lease end, wake-up) a task may go unnoticed before the sweeper re-enqueues it',
  ),
  stepRetentionMs: duration(
    'TASKS_STEP_RETENTION_MS',
    30 * DAY,
    'how long step checkpoints are kept (the longest a step-structured job may run)',
  ),
  invocationBudgetMs: duration(
    'TASKS_INVOCATION_BUDGET_MS',
    14 * MINUTE,
    'most time one worker invocation spends on a task before handing over to a continuation',
  ),
  maxAttempts: count(
    'TASKS_MAX_ATTEMPTS',
    5,
    'runs a task may take through `RetryableError`, or through crashes and timeouts without a new step checkpoint, before it ends ' +
      '`failed` (a run that records a step starts the count again)',
  ),
  retryBaseDelayMs: duration('TASKS_RETRY_BASE_DELAY_MS', 2 * SECOND, "first retry delay, doubling per attempt (at most SQS's 15 minutes)"),
  redeliveryMs: duration(
    'TASKS_REDELIVERY_MS',
    30 * SECOND,
    "the task queue's visibility timeout: after an unexpected error the sweeper leaves the task to SQS redelivery this long",
  ),
  // A week: long enough for a person to answer across a weekend, short enough
  // that an abandoned question does not hold a task (and its index entry) for ever.
  maxInputWaitMs: duration(
    'TASKS_MAX_INPUT_WAIT_MS',
    7 * DAY,
    'the longest a task may wait for input, from when it starts waiting; past it the sweeper ends it `failed`. While it waits, the ' +
      'row itself expires at this deadline plus `TASKS_RETENTION_MS` (a backstop), and `ttlMs` advertises its age plus ' +
      '`TASKS_RETENTION_MS`, as a running task does',
    {
      deployed: '`-c maxInputWaitDays=N`, else the default',
    },
  ),
  activeIndexShards: {
    ...count(
      'TASKS_ACTIVE_INDEX_SHARDS',
      4,
      `partitions of the index of unfinished tasks (1–${MAX_INDEX_SHARDS}; each takes ~1,000 writes a second, ~500 task creations): ` +
        `may grow between deployments, never shrink`,
    ),
    deployed: '`-c activeIndexShards=N`',
    read: (raw: string | undefined): number => {
      const value = positiveInt('TASKS_ACTIVE_INDEX_SHARDS', raw, 4);
      if (value > MAX_INDEX_SHARDS) throw new Error(`TASKS_ACTIVE_INDEX_SHARDS may be at most ${MAX_INDEX_SHARDS}, got ${value}`);
      return value;
    },
  },
  toolset: {
    env: 'TASKS_TOOLSET',
    meaning: 'the tool catalogue served: `product`, `conformance`, `all`, or `test` (`all` plus the durability fixtures; local only)',
    shown: '`product`',
    deployed: 'not read: a deployment bundles its tools (`-c toolset=…` picks the modules, `McpTasks` `tools`)',
    read: (raw): Toolset => {
      if (raw === undefined || raw === '') return 'product';
      if (raw === 'product' || raw === 'conformance' || raw === 'all' || raw === 'test') return raw;
      throw new Error(`TASKS_TOOLSET must be product, conformance, all or test, got "${raw}"`);
    },
  },
  workflows: {
    env: 'TASKS_WORKFLOWS',
    meaning:
      'the Standard state machine each workflow tool starts: a JSON object of tool name to state machine ARN (see [Wrapping a ' +
      'workflow](tools.md#wrapping-a-workflow)); a workflow tool without one ends its tasks with a tool error',
    shown: 'none (`npm start` binds the machines it creates in its emulator)',
    deployed: 'set by `McpTasks` from its `workflows` bindings, on the worker and the workflow functions',
    read: (raw): WorkflowBindings => parseWorkflowBindings(raw, 'TASKS_WORKFLOWS'),
  },
  publicUrl: {
    env: 'TASKS_PUBLIC_URL',
    meaning:
      "the deployment's own base URL (`https://…`, without `/mcp`): links to the endpoint given to people and models are built " +
      "from it, never from a request's `Host` header",
    shown: 'none (`http://127.0.0.1:<port>` under `npm start`)',
    deployed: "the HTTP API's URL",
    read: (raw): string | undefined => {
      if (raw === undefined || raw === '') return undefined;
      const url = URL.canParse(raw) ? new URL(raw) : undefined;
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
        throw new Error(`TASKS_PUBLIC_URL must be an http(s) URL without query or fragment, got "${raw}"`);
      }
      return raw.replace(/\/+$/, '');
    },
  },
  eventBusName: optional(
    'TASKS_EVENT_BUS',
    'the EventBridge bus (name or ARN) the functions publish task lifecycle events to (see [Operating it](operators.md#lifecycle-events)); ' +
      'unset: no events',
    "the stack's bus, on the functions that publish (none with `-c events=off`); `npm start` prints the events instead",
  ),
  console: {
    env: 'TASKS_CONSOLE',
    meaning:
      'the console of an open endpoint (no issuer): `by-id` shows a task by its id only, as `tasks/get` does; `open` also lists every ' +
      'task, to anyone who can reach the endpoint (see [The console](console.md)). With console sign-in set, each person sees their own',
    shown: '`by-id` (`open` under `npm start` without `LOCAL_AUTH`)',
    deployed: '`-c console=open`, else the default',
    read: (raw): 'by-id' | 'open' => {
      if (raw === undefined || raw === '' || raw === 'by-id') return 'by-id';
      if (raw === 'open') return 'open';
      throw new Error(`TASKS_CONSOLE must be by-id or open, got "${raw}"`);
    },
  },
  consoleIssuer: optional(
    'TASKS_CONSOLE_ISSUER',
    "the issuer people sign in to the console with (OAuth authorization code + PKCE); it must give them the subject their MCP clients' " +
      'tokens carry',
    "the user pool's with `cognito`, else the first `authIssuer` (or `jwtIssuer`)",
  ),
  consoleClientId: optional(
    'TASKS_CONSOLE_CLIENT_ID',
    "the console's client id at that issuer; with both set, the console signs people in and lists each one's tasks",
    "the user pool's console client with `cognito`, else `-c consoleClientId=…`",
  ),
  consoleClientSecret: optional(
    'TASKS_CONSOLE_CLIENT_SECRET',
    "the Secrets Manager secret (name or ARN) holding the console client's secret, for issuers that require one (the console reads " +
      'it once per execution environment)',
    '`-c consoleClientSecret=…`',
  ),
  approvers: {
    env: 'TASKS_APPROVERS',
    meaning:
      "who may decide the questions for a person (`answeredBy: 'person'`, `approval_gate`'s) of tasks they do not own, on the " +
      'console: `group:<name>` (a `cognito:groups` or `groups` claim) and `scope:<name>` entries, comma-separated (see [The ' +
      "console](console.md#approvals)). Unset: only a task's owner decides, and a question that needs another approver is refused",
    shown: 'none',
    deployed: '`-c approvers=…`',
    read: (raw): Approvers => parseApprovers(raw, 'TASKS_APPROVERS'),
  },
  machineClaim: {
    env: 'TASKS_MACHINE_CLAIM',
    meaning:
      'which callers are machines (a client acting for itself, as with client credentials), whose questions for a person only ' +
      'approvers decide (and which fail at once without approvers): `<claim>=<value>` (the token has that claim with that value, ' +
      'e.g. `gty=client-credentials` for Auth0, `idtyp=app` for Entra ID), or `none` (see [Authorization](authorization.md#machines))',
    shown: "the token's `sub` equals its `client_id`, `azp` or `cid`",
    deployed: '`-c machineClaim=…`, else the default',
    read: (raw): MachineRule => parseMachineRule(raw, 'TASKS_MACHINE_CLAIM'),
  },
  personQuestions: {
    env: 'TASKS_PERSON_QUESTIONS',
    meaning:
      '`url`: a question for a person goes to a client that declares `elicitation.url` (with the tasks extension) as a URL-mode ' +
      "elicitation naming the task's page, where it is decided, wherever that page identifies the person (console sign-in, or a " +
      'loopback URL); `form`: always as a form, as other questions',
    shown: '`url`',
    deployed: '`-c personQuestions=form`, else the default',
    read: (raw): 'url' | 'form' => {
      if (raw === undefined || raw === '' || raw === 'url') return 'url';
      if (raw === 'form') return 'form';
      throw new Error(`TASKS_PERSON_QUESTIONS must be url or form, got "${raw}"`);
    },
  },
  allowedOrigins: {
    env: 'TASKS_ALLOWED_ORIGINS',
    meaning:
      'origins (`https://app.example.com`, comma-separated) whose browser pages may call the endpoint; a request with another `Origin` ' +
      'gets 403, one without an `Origin` is served',
    shown: 'none',
    deployed: "`-c allowedOrigins=…`, which also configures the HTTP API's CORS",
    read: origins,
  },
  stackSecretParameter: optional(
    'TASKS_STATE_KEY_PARAMETER',
    "the SSM SecureString holding the stack's secret (base64, 32 bytes or more), which seals `requestState` and from which every " +
      "purpose's key derives; the local stack keeps its own in the data directory",
    "the stack's parameter",
  ),
  maxUnfinishedTasks: {
    env: 'TASKS_MAX_UNFINISHED_TASKS',
    meaning: 'most unfinished tasks one principal may have at once (`0`: no cap; see [Limits](#limits))',
    shown: `${DEFAULT_UNFINISHED_TASK_CAP} where people sign in (an issuer), else no cap`,
    deployed: '`-c maxUnfinishedTasks=N`, else the default',
    // As set (`0` included); `loadConfig` applies the default (`unfinishedTaskCap`).
    read: (raw): number | undefined =>
      raw === undefined || raw === '' ? undefined : raw === '0' ? 0 : positiveInt('TASKS_MAX_UNFINISHED_TASKS', raw, 1),
  },
  clientFallback: {
    env: 'TASKS_CLIENT_FALLBACK',
    meaning:
      '`on`: a long call from a client that does not declare the tasks extension runs as a durable task, answered with an ordinary ' +
      'result naming it, and such clients get the `task_status`, `task_answer` and `task_cancel` tools (see [Connecting ' +
      'clients](connecting.md)); `off`: such a call runs inside the request, and a task-only tool answers `-32021`',
    shown: '`on`',
    deployed: '`-c clientFallback=off` (MCP function only)',
    read: (raw): boolean => {
      if (raw === undefined || raw === '' || raw === 'on') return true;
      if (raw === 'off') return false;
      throw new Error(`TASKS_CLIENT_FALLBACK must be on or off, got "${raw}"`);
    },
  },
  authIssuers: listed(
    'TASKS_AUTH_ISSUERS',
    'issuers whose access tokens the endpoint accepts (comma-separated); set, the endpoint is an OAuth resource server and every MCP ' +
      'request needs a token',
    '`-c authIssuer=…` (or `cognito`)',
  ),
  authResource: optional(
    'TASKS_AUTH_RESOURCE',
    "the endpoint's canonical URL: the metadata's `resource` and the audience tokens must carry; required with issuers, never taken " +
      'from the `Host` header',
    "`-c authResource=…`, else the API's `…/mcp` URL",
  ),
  authScopes: listed('TASKS_AUTH_SCOPES', 'scopes every request needs (space- or comma-separated)', '`-c authScopes=…`'),
  authServers: listed('TASKS_AUTH_SERVERS', 'advertised authorization servers, when not the issuers themselves', '`-c authServers=…`'),
  authAudiences: listed(
    'TASKS_AUTH_AUDIENCES',
    'further accepted `aud` values, for IdPs that cannot put the resource URL in `aud`',
    '`-c authAudiences=…`',
  ),
  authClientIds: listed(
    'TASKS_AUTH_CLIENT_IDS',
    'client ids whose tokens may lack `aud` altogether (Cognito without resource binding)',
    '`-c authClientIds=…`',
  ),
} as const satisfies Record<string, Setting>;

type Settings = typeof SETTINGS;
type Value<K extends keyof Settings> = ReturnType<Settings[K]['read']>;
type AuthKey = Extract<keyof Settings, `auth${string}`>;
type PlainKey = Exclude<keyof Settings, AuthKey>;
type NumericKey = { [K in keyof Settings]: Settings[K] extends Numeric<string> ? K : never }[keyof Settings];

/** Environment variable names, shared by `infra/` (which sets them) and `functions/` (which read them). */
export const ENV = Object.fromEntries(Object.entries(SETTINGS).map(([key, setting]) => [key, setting.env])) as {
  readonly [K in keyof Settings]: Settings[K]['env'];
};

/** The timing and retry settings, all numbers with a default: what the runtime parts take. */
export type TaskSettings = { [K in NumericKey]: number };

export const DEFAULT_SETTINGS: TaskSettings = Object.fromEntries(
  Object.entries(SETTINGS).flatMap(([key, setting]) => ('fallback' in setting ? [[key, setting.fallback]] : [])),
) as TaskSettings;

/** Everything the functions are configured with: one field per setting (the optional ones unset when absent), the `TASKS_AUTH_*` ones as `auth`. */
export type Config = {
  [K in PlainKey as undefined extends Value<K> ? never : K]: Value<K>;
} & {
  [K in PlainKey as undefined extends Value<K> ? K : never]?: Exclude<Value<K>, undefined>;
} & {
  /** Present when the endpoint requires tokens (`TASKS_AUTH_ISSUERS` set). */
  auth?: AuthSettings;
};

type Env = Record<string, string | undefined>;

/** Reads the configuration; a required value missing or a malformed one is an error at start, not at first use. */
export function loadConfig(env: Env = process.env): Config {
  const config: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS)) {
    if (key.startsWith('auth')) continue;
    const value = setting.read(env[setting.env]);
    if (value !== undefined) config[key] = value;
  }
  const auth = authSettings(env);
  if (auth) config.auth = auth;
  // An issuer: the endpoint's (tokens required), or the console's (people sign in to it, with its client).
  const signIn = auth !== undefined || 'consoleIssuer' in config || 'consoleClientId' in config;
  const cap = unfinishedTaskCap(config['maxUnfinishedTasks'] as number | undefined, signIn);
  if (cap === undefined) delete config['maxUnfinishedTasks'];
  else config['maxUnfinishedTasks'] = cap;
  return config as Config;
}

function authSettings(env: Env): AuthSettings | undefined {
  const read = <K extends AuthKey>(key: K): Value<K> => SETTINGS[key].read(env[SETTINGS[key].env]) as Value<K>;
  const issuers = read('authIssuers');
  if (issuers.length === 0) return undefined;
  const servers = read('authServers');
  return checkAuthSettings(
    {
      resource: read('authResource') ?? '',
      issuers,
      authorizationServers: servers.length ? servers : issuers,
      scopes: read('authScopes'),
      audiences: read('authAudiences'),
      clientIds: read('authClientIds'),
    },
    { resource: ENV.authResource, issuers: ENV.authIssuers },
  );
}
