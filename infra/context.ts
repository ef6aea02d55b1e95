/**
 * The stack's parameters, in one table: {@link CONTEXT} gives each CDK context
 * key its default and meaning, `tasksStackPropsFromContext` (`context-props.ts`)
 * reads them (a malformed value fails synthesis with the key's name), and the
 * deploy parameters table of `docs/configuration.md` is rendered from it
 * (`bin/scripts/config-tables.ts`).
 * Override a key with `cdk deploy -c key=value` or in `cdk.json`.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_SETTINGS, DEFAULT_UNFINISHED_TASK_CAP } from '../shared/config.ts';
import { formatDuration } from '../shared/durations.ts';
import { DEFAULT_ACTIVE_INDEX_SHARDS, MAX_ACTIVE_INDEX_SHARDS } from '../shared/tasks/dynamodb/index.ts';
import { DEFAULT_CALLBACK_URLS } from './constructs/user-pool.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY } from './event-sources.ts';
import { throttleFor } from './sizing.ts';
import { DEFAULT_SWEEP_INTERVAL } from './timings.ts';

/** A year: questions are not meant to wait longer (the advertised `ttlMs` covers the wait). */
export const MAX_INPUT_WAIT_DAYS = 365;

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
      '`true` sends one OpenTelemetry trace per task to X-Ray (the MCP function and the worker, over its OTLP endpoint: ' +
      '[Tracing](tracing.md), which says what it costs and why Transaction Search is yours to turn on)',
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
  machineClaim: {
    shown: "the token's `sub` equals its `client_id`, `azp` or `cid`",
    meaning:
      'which callers are machines, whose questions for a person only approvers decide: `<claim>=<value>` (e.g. ' +
      '`gty=client-credentials` for Auth0, `idtyp=app` for Entra ID) or `none`: `TASKS_MACHINE_CLAIM` on the MCP function (see ' +
      '[Authorization](authorization.md#machines))',
  },
  personQuestions: {
    default: 'url',
    meaning:
      "`form` offers questions for a person as forms to every client; `url` (URL-mode elicitation to the task's page, for clients " +
      'that declare it, where the page signs people in): `TASKS_PERSON_QUESTIONS` on every function',
  },
  maxUnfinishedTasks: {
    shown: `${DEFAULT_UNFINISHED_TASK_CAP} with \`authIssuer\`, \`cognito\` or \`jwtIssuer\`, else no cap`,
    meaning: 'most unfinished tasks one principal may have at once, `0` for no cap (see [Limits](#limits))',
  },
  maxInputWaitDays: {
    shown: formatDuration(DEFAULT_SETTINGS.maxInputWaitMs),
    meaning:
      `the longest a task may wait for input (whole days, at most ${MAX_INPUT_WAIT_DAYS}) before the sweeper ends it ` +
      `\`failed\`: \`TASKS_MAX_INPUT_WAIT_MS\` on every function`,
  },
} as const satisfies Record<string, ContextKey>;
