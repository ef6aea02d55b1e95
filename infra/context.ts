/**
 * The stack's parameters, in one table: {@link CONTEXT} gives each CDK context
 * key its default and meaning, {@link tasksStackPropsFromContext} reads them
 * (a malformed value fails synthesis with the key's name), and the deploy
 * parameters table of `docs/configuration.md` is rendered from it
 * (`bin/scripts/config-tables.ts`).
 * Override a key with `cdk deploy -c key=value` or in `cdk.json`.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { parseApprovers } from '../shared/auth/approvers.ts';
import { DEFAULT_SETTINGS } from '../shared/config.ts';
import { formatDuration } from '../shared/durations.ts';
import { isOrigin } from '../shared/setting-readers.ts';
import { DEFAULT_ACTIVE_INDEX_SHARDS, MAX_ACTIVE_INDEX_SHARDS } from '../shared/tasks/dynamodb/index.ts';
import type { JwtSettings } from './constructs/api.ts';
import { DEFAULT_CALLBACK_URLS } from './constructs/user-pool.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY } from './event-sources.ts';
import type { McpTasksProps } from './mcp-tasks-props.ts';
import { throttleFor } from './sizing.ts';
import { DEFAULT_SWEEP_INTERVAL, durableTimings } from './timings.ts';

/** A year: questions are not meant to wait longer (the advertised `ttlMs` covers the wait). */
const MAX_INPUT_WAIT_DAYS = 365;

/** One context key: its default (when it has a plain one) and what the docs say of it. */
export interface ContextKey {
  readonly default?: string | number | boolean;
  /** The default as documented, when not {@link ContextKey.default} itself. */
  readonly shown?: string;
  /** What it does (Markdown). */
  readonly meaning: string;
}

/** The context keys the stack reads. Keep the order: `docs/configuration.md` shows it. */
export const CONTEXT = {
  authIssuer: {
    meaning:
      "issuers (comma-separated `https` URLs, exactly as in the tokens' `iss`) whose access tokens the endpoint accepts: the MCP " +
      'function becomes an OAuth resource server (see [Authorization](authorization.md)). **Without it (or `cognito`, or ' +
      '`jwtIssuer`) the endpoint is open**: synthesis warns and the `Authentication` output says `OPEN`',
  },
  authResource: {
    shown: "the API's `…/mcp` URL",
    meaning:
      "the endpoint's canonical URL, `https://<host>/mcp` (a custom domain mapped at its root): the `resource` of the metadata and the " +
      'audience tokens must carry',
  },
  authScopes: { shown: 'none (`mcp-tasks/tasks` with `cognito`)', meaning: 'scopes every request needs' },
  authAudiences: { meaning: 'further accepted `aud` values, for IdPs that cannot put the endpoint URL in `aud`' },
  authClientIds: {
    shown: "none (the pool's clients with `cognito`)",
    meaning: 'client ids whose tokens may carry no `aud` at all (Cognito)',
  },
  authServers: { shown: 'the issuers', meaning: '`authorization_servers` advertised in the metadata, if not the issuers' },
  cognito: {
    default: false,
    meaning:
      '`true` creates a Cognito user pool (hosted domain `<prefix>.auth.<region>.amazoncognito.com`), an app client for people (code + ' +
      'PKCE) and one for scripts (client credentials), and trusts it',
  },
  cognitoDomainPrefix: {
    meaning: "the user pool's domain prefix (lowercase letters, digits, hyphens; globally unique); required with `cognito`",
  },
  cognitoCallbackUrls: {
    shown: DEFAULT_CALLBACK_URLS.map((url) => `\`${url}\``).join(', '),
    meaning: "the people client's callback URLs (comma-separated); the defaults are the CLI's and the Inspector's",
  },
  jwtIssuer: {
    meaning:
      'an API Gateway JWT authorizer on `POST /mcp` for this issuer (an `https` URL), given with `jwtAudience`. With `authIssuer` it ' +
      'is only a pre-filter (its 401 has no `resource_metadata`, so clients cannot discover the authorization server from it); ' +
      'alone, tasks are bound to its issuer + `sub`',
  },
  jwtAudience: { meaning: "the JWT authorizer's audiences (comma-separated), given with `jwtIssuer`" },
  console: {
    default: 'by-id',
    meaning:
      "an open endpoint's console (see [The console](console.md)): `by-id` shows a task's page by its id only; `open` also lists every " +
      'task, to anyone who can reach the endpoint. With an issuer people sign in and see their own tasks (refused with `open`)',
  },
  consoleClientId: {
    shown: "the user pool's own console client with `cognito`",
    meaning:
      "the console's client id at the issuer people sign in with (the first `authIssuer`, else `jwtIssuer`): a public client " +
      '(authorization code + PKCE) whose callback is the `ConsoleCallbackUrl` output. Without it, the console of an endpoint with an ' +
      'issuer shows no task',
  },
  consoleClientSecret: {
    meaning: "a Secrets Manager secret (name or ARN) holding that client's secret, only for an issuer that requires one",
  },
  toolset: { default: 'product', meaning: 'which tools the endpoint serves: `product`, `conformance` or `all`' },
  removalPolicy: {
    default: 'retain',
    meaning:
      '`retain` keeps the table (with deletion protection) and the log groups when the stack is deleted; `destroy` is for throw-away ' +
      'stacks',
  },
  throttleRateLimit: {
    shown: `sized from \`workerMaxConcurrency\` (${throttleFor(DEFAULT_WORKER_MAX_CONCURRENCY).rateLimit} with its default)`,
    meaning:
      'requests per second for the whole API stage; by default what the workers can carry, polling included (see [Capacity](capacity.md))',
  },
  throttleBurstLimit: {
    shown: `twice the rate (${throttleFor(DEFAULT_WORKER_MAX_CONCURRENCY).burstLimit})`,
    meaning: 'request burst for the whole API stage',
  },
  workerMaxConcurrency: {
    default: DEFAULT_WORKER_MAX_CONCURRENCY,
    meaning: 'most concurrent worker invocations the queue drives (2–1000)',
  },
  activeIndexShards: {
    default: DEFAULT_ACTIVE_INDEX_SHARDS,
    meaning:
      `partitions of the index of unfinished tasks (1–${MAX_ACTIVE_INDEX_SHARDS}), each good for ~500 task creations a second; ` +
      `it may grow between deployments (every reader follows it, rows written before stay found), never shrink`,
  },
  sweepIntervalMinutes: {
    default: DEFAULT_SWEEP_INTERVAL.toMinutes(),
    meaning:
      'how often the sweeper looks for stuck tasks; synthesis refuses an interval at which SQS redelivery (30 minutes) would beat it, ' +
      'so at most 24',
  },
  logRetentionDays: {
    default: RetentionDays.ONE_MONTH,
    meaning: "retention of the functions' and the API's log groups (a CloudWatch Logs retention: 1, 3, 5, 7, 14, 30, 60, 90, …)",
  },
  alarmTopicArn: { meaning: "an existing SNS topic that receives the alarms' ALARM and OK notifications" },
  dashboard: { default: false, meaning: '`true` adds the CloudWatch dashboard ($3.00 a month)' },
  tracing: {
    default: false,
    meaning:
      '`true` turns on active X-Ray tracing on every function (see the costs below: it roughly doubles the per-task cost with polling ' +
      'clients and adds about $0.43 a month at rest)',
  },
  allowedOrigins: {
    meaning:
      "origins (`https://app.example.com`, comma-separated) whose browser pages may call the endpoint: the MCP function's `Origin` " +
      "check and the HTTP API's CORS",
  },
  clientFallback: {
    default: 'on',
    meaning:
      '`off` serves clients that do not declare the tasks extension strictly (a task-only tool answers `-32021`, no `task_status` ' +
      'tools): `TASKS_CLIENT_FALLBACK` on the MCP function (see [Connecting clients](connecting.md))',
  },
  events: {
    default: 'on',
    meaning:
      '`off` publishes no task lifecycle events: no event bus, no `events:PutEvents` grant, no `TASKS_EVENT_BUS` (see [Operating ' +
      'it](operators.md#lifecycle-events))',
  },
  approvers: {
    shown: 'none',
    meaning:
      'who may decide the questions for a person of tasks they do not own, on the console: `group:<name>` (a `cognito:groups` or ' +
      '`groups` claim) and `scope:<name>` entries, comma-separated: `TASKS_APPROVERS` on every function (see [The ' +
      'console](console.md#approvals)); only with an issuer (people sign in)',
  },
  personQuestions: {
    default: 'url',
    meaning:
      "`form` offers questions for a person as forms to every client; `url` (URL-mode elicitation to the task's page, for clients " +
      'that declare it, where the page signs people in): `TASKS_PERSON_QUESTIONS` on every function',
  },
  maxUnfinishedTasks: { shown: 'no cap', meaning: 'most unfinished tasks one principal may have at once (see [Limits](#limits))' },
  maxInputWaitDays: {
    shown: formatDuration(DEFAULT_SETTINGS.maxInputWaitMs),
    meaning:
      `the longest a task may wait for input (whole days, at most ${MAX_INPUT_WAIT_DAYS}) before the sweeper ends it ` +
      `\`failed\`: \`TASKS_MAX_INPUT_WAIT_MS\` on every function`,
  },
} as const satisfies Record<string, ContextKey>;

type Key = keyof typeof CONTEXT;

/** What the repository's app deploys: the toolset it serves and the construct's props (all but `tools`). */
export interface ContextProps extends Omit<McpTasksProps, 'tools'> {
  /** Which tool catalogue the endpoint serves (`infra/app.ts` maps it to the tools modules). */
  readonly toolset: 'product' | 'conformance' | 'all';
}

/** Reads {@link ContextProps} from context; a malformed value fails synthesis with the key's name. */
export function tasksStackPropsFromContext(node: Node): ContextProps {
  const read = contextReader(node);
  const choices = choicesFromContext(read);
  const jwt = jwtFromContext(read);
  const auth = authFromContext(read);
  const approvers = read.list('approvers').join(',');
  parseApprovers(approvers, 'Context "approvers"');
  // On an open endpoint nobody signs in, so nobody could be an approver: a four-eyes question would wait for nothing.
  if (approvers && !jwt.jwt && !auth.auth && !auth.cognito) {
    throw new Error('Context "approvers" needs people to sign in to the console: give authIssuer, cognito=true or jwtIssuer too');
  }
  const alarmTopicArn = read.text('alarmTopicArn');
  const maxUnfinished = read.has('maxUnfinishedTasks') ? read.integer('maxUnfinishedTasks') : undefined;
  return {
    ...choices,
    ...scalingFromContext(read),
    tracing: read.flag('tracing'),
    dashboard: read.flag('dashboard'),
    ...jwt,
    ...auth,
    ...(alarmTopicArn ? { alarmTopicArn } : {}),
    ...(maxUnfinished ? { maxUnfinishedTasks: maxUnfinished } : {}),
    ...(approvers ? { approvers } : {}),
  };
}

/** The keys that choose among named values (and the origins): each checked against its choices. */
function choicesFromContext(read: Reader) {
  const oneOf = <T extends string>(key: Key, choices: readonly T[]): T => {
    const value = read.text(key);
    if (!choices.includes(value as T))
      throw new Error(`Context "${key}" must be ${choices.join(', ').replace(/, ([^,]*)$/, ' or $1')}, got "${value}"`);
    return value as T;
  };
  const toolset = oneOf('toolset', ['product', 'conformance', 'all'] as const);
  const removal = oneOf('removalPolicy', ['retain', 'destroy'] as const);
  const clientFallback = oneOf('clientFallback', ['on', 'off'] as const);
  const events = oneOf('events', ['on', 'off'] as const);
  const personQuestions = oneOf('personQuestions', ['url', 'form'] as const);
  const consoleMode = oneOf('console', ['by-id', 'open'] as const);
  const allowedOrigins = read.list('allowedOrigins');
  for (const origin of allowedOrigins) {
    if (!isOrigin(origin)) throw new Error(`Context "allowedOrigins" must list origins like https://app.example.com, got "${origin}"`);
  }
  const consoleClientId = read.text('consoleClientId');
  const consoleClientSecret = read.text('consoleClientSecret');
  return {
    toolset,
    removalPolicy: removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    ...(allowedOrigins.length > 0 ? { allowedOrigins } : {}),
    ...(personQuestions === 'form' ? { personQuestions } : {}),
    ...(clientFallback === 'off' ? { clientFallback: false } : {}),
    ...(events === 'off' ? { events: false } : {}),
    console: {
      ...(consoleMode === 'open' ? { open: true } : {}),
      ...(consoleClientId ? { clientId: consoleClientId } : {}),
      ...(consoleClientSecret ? { clientSecret: consoleClientSecret } : {}),
    },
  };
}

/** The keys that size the deployment: retention, concurrency, index partitions, throttle, sweep interval, input wait. */
function scalingFromContext(
  read: Reader,
): Pick<ContextProps, 'logRetention' | 'workerMaxConcurrency' | 'activeIndexShards' | 'throttle' | 'sweepInterval' | 'maxInputWait'> {
  const logRetention = read.integer('logRetentionDays') as RetentionDays;
  if (!Object.values(RetentionDays).includes(logRetention)) {
    throw new Error(`Context "logRetentionDays" must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, …), got ${logRetention}`);
  }
  const workerMaxConcurrency = read.integer('workerMaxConcurrency');
  if (workerMaxConcurrency < 2 || workerMaxConcurrency > 1000) {
    throw new Error('Context "workerMaxConcurrency" must be between 2 and 1000 (the SQS event source limits)');
  }
  const activeIndexShards = read.integer('activeIndexShards');
  if (activeIndexShards > MAX_ACTIVE_INDEX_SHARDS) {
    throw new Error(`Context "activeIndexShards" must be between 1 and ${MAX_ACTIVE_INDEX_SHARDS}, got ${activeIndexShards}`);
  }
  const sized = throttleFor(workerMaxConcurrency);
  const rateLimit = read.has('throttleRateLimit') ? read.integer('throttleRateLimit') : sized.rateLimit;
  const burstLimit = read.has('throttleBurstLimit') ? read.integer('throttleBurstLimit') : 2 * rateLimit;
  const sweepInterval = Duration.minutes(read.integer('sweepIntervalMinutes'));
  try {
    durableTimings(sweepInterval);
  } catch (error) {
    throw new Error(`Context "sweepIntervalMinutes" does not fit the other timings: ${(error as Error).message}`);
  }
  const maxInputWaitDays = read.has('maxInputWaitDays') ? read.integer('maxInputWaitDays') : undefined;
  if (maxInputWaitDays !== undefined && maxInputWaitDays > MAX_INPUT_WAIT_DAYS) {
    throw new Error(`Context "maxInputWaitDays" must be at most ${MAX_INPUT_WAIT_DAYS}, got ${maxInputWaitDays}`);
  }
  return {
    logRetention,
    workerMaxConcurrency,
    activeIndexShards,
    throttle: { rateLimit, burstLimit },
    sweepInterval,
    ...(maxInputWaitDays ? { maxInputWait: Duration.days(maxInputWaitDays) } : {}),
  };
}

type Reader = ReturnType<typeof contextReader>;

/** Typed reads of the keys of {@link CONTEXT}, with its defaults; `-c key=value` gives strings, `cdk.json` may give numbers, booleans and lists. */
function contextReader(node: Node) {
  const raw = (key: Key): unknown => {
    const value: unknown = node.tryGetContext(key);
    return value === null || value === '' ? undefined : value;
  };
  const fallback = (key: Key): unknown => ('default' in CONTEXT[key] ? CONTEXT[key].default : undefined);
  return {
    has: (key: Key): boolean => raw(key) !== undefined,
    text(key: Key): string | undefined {
      const value = raw(key) ?? fallback(key);
      if (value !== undefined && typeof value !== 'string') throw new Error(`Context "${key}" must be a string`);
      return value;
    },
    integer(key: Key): number {
      const value = raw(key) ?? fallback(key);
      const number = typeof value === 'number' ? value : Number(value);
      if (!Number.isSafeInteger(number) || number <= 0)
        throw new Error(`Context "${key}" must be a positive integer, got ${JSON.stringify(value)}`);
      return number;
    },
    flag(key: Key): boolean {
      const value = raw(key) ?? fallback(key);
      if (value === true || value === 'true') return true;
      if (value === false || value === 'false' || value === undefined) return false;
      throw new Error(`Context "${key}" must be true or false, got ${JSON.stringify(value)}`);
    },
    /** A list given as an array or as one string split on commas (and, with `spaces`, whitespace). */
    list(key: Key, spaces = false): string[] {
      const value = raw(key);
      const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(spaces ? /[\s,]+/ : ',') : [];
      return items.map((item: unknown) => String(item).trim()).filter((item) => item !== '');
    },
  };
}

/** `jwtIssuer` and `jwtAudience` (a list, or one comma-separated string) come together or not at all. */
function jwtFromContext(read: Reader): { jwt?: JwtSettings } {
  const issuer = read.list('jwtIssuer')[0];
  const audience = read.list('jwtAudience');
  if (issuer === undefined && audience.length === 0) return {};
  if (issuer === undefined || audience.length === 0) throw new Error('Context "jwtIssuer" and "jwtAudience" must be given together');
  if (!/^https:\/\/\S+$/.test(issuer)) throw new Error('Context "jwtIssuer" must be an https URL');
  return { jwt: { issuer, audience } };
}

/**
 * The resource server from context: `authIssuer` (comma-separated) turns it
 * on; `cognito=true` adds a user pool (with `cognitoDomainPrefix`). The other
 * `auth*` keys are lists too. Checked here so a bad value fails synthesis.
 */
function authFromContext(read: Reader): Pick<McpTasksProps, 'auth' | 'cognito'> {
  const listOf = (key: Key) => read.list(key, true);
  const issuers = listOf('authIssuer');
  for (const issuer of issuers) {
    if (!/^https:\/\/\S+$/.test(issuer)) throw new Error(`Context "authIssuer" must hold https URLs, got "${issuer}"`);
  }
  const resource = listOf('authResource')[0];
  if (resource !== undefined) {
    if (!URL.canParse(resource)) throw new Error(`Context "authResource" must be a URL, got "${resource}"`);
    const url = new URL(resource);
    // The metadata routes are at the path of /mcp; a custom domain must map the API at its root.
    if (url.protocol !== 'https:' || url.pathname !== '/mcp' || url.search || url.hash) {
      throw new Error(`Context "authResource" must be https://<host>/mcp, got "${resource}"`);
    }
  }
  const cognitoOn = read.flag('cognito');
  const result: { -readonly [K in 'auth' | 'cognito']?: McpTasksProps[K] } = {};
  if (issuers.length) {
    result.auth = {
      issuers,
      ...(resource ? { resource } : {}),
      scopes: listOf('authScopes'),
      audiences: listOf('authAudiences'),
      clientIds: listOf('authClientIds'),
      authorizationServers: listOf('authServers'),
    };
  } else if (
    (['authResource', 'authScopes', 'authAudiences', 'authClientIds', 'authServers'] as const).some((key) => listOf(key).length) &&
    !cognitoOn
  ) {
    throw new Error('Context "authIssuer" (or "cognito=true") is required with the other auth* settings');
  }
  if (cognitoOn) {
    const domainPrefix = listOf('cognitoDomainPrefix')[0];
    if (!domainPrefix || !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(domainPrefix)) {
      throw new Error(
        'Context "cognitoDomainPrefix" (lowercase letters, digits, hyphens; globally unique) is required with "cognito=true"',
      );
    }
    const callbackUrls = listOf('cognitoCallbackUrls');
    result.cognito = { domainPrefix, callbackUrls: callbackUrls.length ? callbackUrls : [...DEFAULT_CALLBACK_URLS] };
  }
  return result;
}
