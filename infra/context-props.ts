/**
 * The repository's deploy parameters read from CDK context into the
 * construct's props ({@link tasksStackPropsFromContext}): each key of
 * {@link CONTEXT} (`context.ts`) with its default, a malformed value failing
 * synthesis with the key's name.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { parseApprovers } from '../shared/auth/approvers.ts';
import { parseMachineRule } from '../shared/auth/machine.ts';
import { unfinishedTaskCap } from '../shared/config.ts';
import { isOrigin } from '../shared/setting-readers.ts';
import { MAX_ACTIVE_INDEX_SHARDS } from '../shared/tasks/dynamodb/index.ts';
import type { JwtSettings } from './constructs/api.ts';
import { DEFAULT_CALLBACK_URLS } from './constructs/user-pool.ts';
import { CONTEXT, MAX_INPUT_WAIT_DAYS } from './context.ts';
import type { McpTasksProps } from './mcp-tasks-props.ts';
import { throttleFor } from './sizing.ts';
import { durableTimings } from './timings.ts';

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
  const machineClaim = read.text('machineClaim');
  parseMachineRule(machineClaim, 'Context "machineClaim"');
  const alarmTopicArn = read.text('alarmTopicArn');
  const maxUnfinished = read.has('maxUnfinishedTasks') ? read.count('maxUnfinishedTasks') : undefined;
  return {
    ...choices,
    ...scalingFromContext(read),
    tracing: read.flag('tracing'),
    dashboard: read.flag('dashboard'),
    ...jwt,
    ...auth,
    ...(alarmTopicArn ? { alarmTopicArn } : {}),
    ...unfinishedCap(maxUnfinished, jwt.jwt !== undefined || auth.auth !== undefined || auth.cognito !== undefined),
    ...(approvers ? { approvers } : {}),
    ...(machineClaim ? { machineClaim } : {}),
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

/**
 * `maxUnfinishedTasks` for the stack: the cap `unfinishedTaskCap` derives
 * (100 where people sign in), and `0` where there is an issuer but no cap,
 * so that the functions, which derive the same default, are told there is
 * none. An open endpoint without the setting passes nothing.
 */
function unfinishedCap(setting: number | undefined, hasIssuer: boolean): Pick<ContextProps, 'maxUnfinishedTasks'> {
  const cap = unfinishedTaskCap(setting, hasIssuer);
  return cap !== undefined || hasIssuer ? { maxUnfinishedTasks: cap ?? 0 } : {};
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
    /** A whole number, `0` included. */
    count(key: Key): number {
      const value = raw(key) ?? fallback(key);
      return value === 0 || value === '0' ? 0 : this.integer(key);
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
