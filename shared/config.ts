/**
 * Configuration, read once at start-up from the environment and passed down.
 *
 * {@link SETTINGS} is the one table of the functions' settings: each entry
 * names its variable, default and bounds, and how it is read. `ENV`, `Config`,
 * `DEFAULT_SETTINGS` and `loadConfig` are derived from it, and the stack sets
 * the variables by their `ENV` names. What the docs say of each setting (its
 * meaning, what the stack sets) is in `config-docs.ts`, which no function
 * imports: the settings table of `docs/configuration.md` is rendered from both
 * (`bin/scripts/config-tables.ts`; a test keeps it current).
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

/** The longest retention that may be configured, in days: results are not an archive. */
const MAX_RETENTION_DAYS = 30;
const MAX_RETENTION_MS = MAX_RETENTION_DAYS * DAY;

/** The most index shards (`MAX_ACTIVE_INDEX_SHARDS` of the DynamoDB layout, which a test keeps equal). */
export const MAX_INDEX_SHARDS = 64;

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

/** The functions' settings. Keep the order: `docs/configuration.md` shows it (and each has its entry in `config-docs.ts`). */
export const SETTINGS = {
  tableName: required('TASKS_TABLE_NAME'),
  queueUrl: required('TASKS_QUEUE_URL'),
  deadLetterQueueUrl: optional('TASKS_DEAD_LETTER_QUEUE_URL'),
  localPrincipal: {
    env: 'TASKS_LOCAL_PRINCIPAL',
    read: (raw) => raw || 'local',
  },
  taskTtlMs: duration('TASKS_TTL_MS', HOUR),
  retentionMs: {
    ...duration('TASKS_RETENTION_MS', HOUR),
    // The bound in days written out: no duration formatter in the functions' bundles for one message.
    read: (raw: string | undefined): number => {
      const value = positiveInt('TASKS_RETENTION_MS', raw, HOUR);
      if (value > MAX_RETENTION_MS) throw new Error(`TASKS_RETENTION_MS may be at most ${MAX_RETENTION_MS} (${MAX_RETENTION_DAYS} days)`);
      return value;
    },
  },
  pollIntervalMs: duration('TASKS_POLL_INTERVAL_MS', SECOND),
  maxPollIntervalMs: duration('TASKS_MAX_POLL_INTERVAL_MS', 30 * SECOND),
  leaseMs: duration('TASKS_LEASE_MS', 5 * MINUTE),
  cancelCheckMs: duration('TASKS_CANCEL_CHECK_MS', 5 * SECOND),
  progressIntervalMs: duration('TASKS_PROGRESS_INTERVAL_MS', SECOND),
  syncBudgetMs: duration('TASKS_SYNC_BUDGET_MS', 20 * SECOND),
  sweepGraceMs: duration('TASKS_SWEEP_GRACE_MS', MINUTE),
  stepRetentionMs: duration('TASKS_STEP_RETENTION_MS', 30 * DAY),
  invocationBudgetMs: duration('TASKS_INVOCATION_BUDGET_MS', 14 * MINUTE),
  maxAttempts: count('TASKS_MAX_ATTEMPTS', 5),
  retryBaseDelayMs: duration('TASKS_RETRY_BASE_DELAY_MS', 2 * SECOND),
  redeliveryMs: duration('TASKS_REDELIVERY_MS', 30 * SECOND),
  // A week: long enough for a person to answer across a weekend, short enough
  // that an abandoned question does not hold a task (and its index entry) for ever.
  maxInputWaitMs: duration('TASKS_MAX_INPUT_WAIT_MS', 7 * DAY),
  activeIndexShards: {
    ...count('TASKS_ACTIVE_INDEX_SHARDS', 4),
    read: (raw: string | undefined): number => {
      const value = positiveInt('TASKS_ACTIVE_INDEX_SHARDS', raw, 4);
      if (value > MAX_INDEX_SHARDS) throw new Error(`TASKS_ACTIVE_INDEX_SHARDS may be at most ${MAX_INDEX_SHARDS}, got ${value}`);
      return value;
    },
  },
  toolset: {
    env: 'TASKS_TOOLSET',
    read: (raw): Toolset => {
      if (raw === undefined || raw === '') return 'product';
      if (raw === 'product' || raw === 'conformance' || raw === 'all' || raw === 'test') return raw;
      throw new Error(`TASKS_TOOLSET must be product, conformance, all or test, got "${raw}"`);
    },
  },
  workflows: {
    env: 'TASKS_WORKFLOWS',
    read: (raw): WorkflowBindings => parseWorkflowBindings(raw, 'TASKS_WORKFLOWS'),
  },
  publicUrl: {
    env: 'TASKS_PUBLIC_URL',
    read: (raw): string | undefined => {
      if (raw === undefined || raw === '') return undefined;
      const url = URL.canParse(raw) ? new URL(raw) : undefined;
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
        throw new Error(`TASKS_PUBLIC_URL must be an http(s) URL without query or fragment, got "${raw}"`);
      }
      return raw.replace(/\/+$/, '');
    },
  },
  eventBusName: optional('TASKS_EVENT_BUS'),
  console: {
    env: 'TASKS_CONSOLE',
    read: (raw): 'by-id' | 'open' => {
      if (raw === undefined || raw === '' || raw === 'by-id') return 'by-id';
      if (raw === 'open') return 'open';
      throw new Error(`TASKS_CONSOLE must be by-id or open, got "${raw}"`);
    },
  },
  consoleIssuer: optional('TASKS_CONSOLE_ISSUER'),
  consoleClientId: optional('TASKS_CONSOLE_CLIENT_ID'),
  consoleClientSecret: optional('TASKS_CONSOLE_CLIENT_SECRET'),
  approvers: {
    env: 'TASKS_APPROVERS',
    read: (raw): Approvers => parseApprovers(raw, 'TASKS_APPROVERS'),
  },
  machineClaim: {
    env: 'TASKS_MACHINE_CLAIM',
    read: (raw): MachineRule => parseMachineRule(raw, 'TASKS_MACHINE_CLAIM'),
  },
  personQuestions: {
    env: 'TASKS_PERSON_QUESTIONS',
    read: (raw): 'url' | 'form' => {
      if (raw === undefined || raw === '' || raw === 'url') return 'url';
      if (raw === 'form') return 'form';
      throw new Error(`TASKS_PERSON_QUESTIONS must be url or form, got "${raw}"`);
    },
  },
  allowedOrigins: {
    env: 'TASKS_ALLOWED_ORIGINS',
    read: origins,
  },
  stackSecretParameter: optional('TASKS_STATE_KEY_PARAMETER'),
  maxUnfinishedTasks: {
    env: 'TASKS_MAX_UNFINISHED_TASKS',
    // As set (`0` included); `loadConfig` applies the default (`unfinishedTaskCap`).
    read: (raw): number | undefined =>
      raw === undefined || raw === '' ? undefined : raw === '0' ? 0 : positiveInt('TASKS_MAX_UNFINISHED_TASKS', raw, 1),
  },
  clientFallback: {
    env: 'TASKS_CLIENT_FALLBACK',
    read: (raw): boolean => {
      if (raw === undefined || raw === '' || raw === 'on') return true;
      if (raw === 'off') return false;
      throw new Error(`TASKS_CLIENT_FALLBACK must be on or off, got "${raw}"`);
    },
  },
  authIssuers: listed('TASKS_AUTH_ISSUERS'),
  authResource: optional('TASKS_AUTH_RESOURCE'),
  authScopes: listed('TASKS_AUTH_SCOPES'),
  authServers: listed('TASKS_AUTH_SERVERS'),
  authAudiences: listed('TASKS_AUTH_AUDIENCES'),
  authClientIds: listed('TASKS_AUTH_CLIENT_IDS'),
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
