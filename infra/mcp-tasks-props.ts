/**
 * What a deployment of {@link McpTasks} is given: its tools, and the deploy
 * parameters (the repository's CDK context keys, `infra/context.ts`, read
 * into these) as typed props with their defaults.
 */
import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { parseApprovers } from '../shared/auth/approvers.ts';
import { MAX_ACTIVE_INDEX_SHARDS } from '../shared/tasks/dynamodb/index.ts';
import type { ApiThrottle, JwtSettings } from './constructs/api.ts';
import type { ToolsSource } from './constructs/tools-module.ts';
import type { WorkflowBinding } from './constructs/workflows.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY } from './event-sources.ts';
import { throttleFor } from './sizing.ts';
import { DEFAULT_SWEEP_INTERVAL } from './timings.ts';
import { type TracingProp, type TracingTarget, tracingTarget } from './tracing.ts';

export interface McpTasksProps {
  /**
   * The tools the endpoint serves, and nothing else: a module (a path from
   * `projectRoot`, or absolute) whose `tools` export lists them, e.g.
   * `'src/tools/index.ts'`; or `{ module, export }`; or a list of these. The
   * construct generates the MCP function's and the worker's entries from it
   * and reads what the tools need (settings, permissions) at synthesis.
   */
  readonly tools: ToolsSource | readonly ToolsSource[];
  /**
   * The project the functions are bundled from (its lock file and `node_modules`); relative `tools` paths start here.
   * @default the nearest folder up from the working directory holding a lock file
   */
  readonly projectRoot?: string;
  /**
   * For the table, the user pool and the log groups; `DESTROY` only for throw-away stacks.
   * @default `RemovalPolicy.RETAIN` (the table also gets deletion protection)
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * An HTTP API JWT authorizer on `POST /mcp`; with {@link McpTasksProps.auth} only a pre-filter.
   * @default none
   */
  readonly jwt?: JwtSettings;
  /**
   * The MCP function as an OAuth resource server. Without it, `cognito` or `jwt` the endpoint is open (and synthesis says so).
   * @default none: an open endpoint
   */
  readonly auth?: ResourceServerProps;
  /**
   * A Cognito user pool the construct creates as the authorization server (added to `auth`'s issuers).
   * @default none: no user pool
   */
  readonly cognito?: CognitoProps;
  /**
   * Requests per second and burst for the whole API stage.
   * @default sized from `workerMaxConcurrency` (what the workers carry, polling included: docs/capacity.md)
   */
  readonly throttle?: ApiThrottle;
  /**
   * Retention of the functions' and the API's log groups.
   * @default `RetentionDays.ONE_MONTH`
   */
  readonly logRetention?: RetentionDays;
  /**
   * Most concurrent worker invocations the queue drives (2–1000).
   * @default 10
   */
  readonly workerMaxConcurrency?: number;
  /**
   * Partitions of the index of unfinished tasks (`TASKS_ACTIVE_INDEX_SHARDS` on every function). It may grow, never shrink.
   * @default 4
   */
  readonly activeIndexShards?: number;
  /**
   * An existing SNS topic that receives the alarms' ALARM and OK notifications.
   * @default none: the alarms only change state
   */
  readonly alarmTopicArn?: string;
  /**
   * How often the sweeper looks for stuck tasks (whole minutes; checked against the other timings in `infra/timings.ts`).
   * @default 1 minute
   */
  readonly sweepInterval?: Duration;
  /**
   * Traces of each task by the MCP semantic conventions (docs/tracing.md):
   * `'xray'` sends OpenTelemetry spans to X-Ray's OTLP endpoint, a
   * `TracingTarget` to any OTLP/HTTP endpoint; `true` (the earlier flag)
   * means `'xray'`. Off, no bundle carries OpenTelemetry.
   * @default `'off'`
   */
  readonly tracing?: TracingProp;
  /**
   * Whether to create the CloudWatch dashboard.
   * @default `false`
   */
  readonly dashboard?: boolean;
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
  /**
   * Which callers are machines (`<claim>=<value>` or `none`, `TASKS_MACHINE_CLAIM`).
   * @default `sub` equals the token's client id
   */
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
   * @default tasks by id on an open endpoint; sign-in where the deployment has an issuer
   */
  readonly console?: ConsoleProps;
  /**
   * The Standard state machine each workflow tool starts, by tool name: one
   * the construct creates (from the tool's ASL file, or built in CDK), or an
   * existing one by ARN. Every workflow tool needs one, and every binding a
   * workflow tool (synthesis fails otherwise).
   * @default none: the tools declare no workflow
   */
  readonly workflows?: Readonly<Record<string, WorkflowBinding>>;
}

/** The user pool the construct creates (see docs/authorization.md). */
export interface CognitoProps {
  /** The hosted domain's prefix, `<prefix>.auth.<region>.amazoncognito.com`: lowercase letters, digits, hyphens; globally unique. */
  readonly domainPrefix: string;
  /**
   * The people client's callback URLs.
   * @default the CLI's and the MCP Inspector's loopback callbacks (`http://127.0.0.1:33418/callback`, `http://localhost:6274/oauth/callback`)
   */
  readonly callbackUrls?: string[];
}

/** The console's settings (see docs/console.md). */
export interface ConsoleProps {
  /**
   * An open endpoint's console lists every task (`-c console=open`). Only without an issuer.
   * @default `false`
   */
  readonly open?: boolean;
  /**
   * The console's client id at the issuer people sign in with (the first `auth` issuer, else `jwt`'s); the user pool makes its own.
   * @default the user pool's console client, when the construct makes one
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

/** {@link McpTasksProps} with every default applied. */
export type ResolvedProps = McpTasksProps &
  Required<
    Pick<
      McpTasksProps,
      'removalPolicy' | 'throttle' | 'logRetention' | 'workerMaxConcurrency' | 'sweepInterval' | 'dashboard' | 'allowedOrigins'
    >
  > & {
    /** Lambda's and Step Functions' own X-Ray tracing: off, the task's one trace (`traced`) replaces it. */
    tracing: false;
    /** Where the MCP function's and the worker's spans go (`undefined`: tracing off). */
    traced: TracingTarget | undefined;
  };

/** The props with their documented defaults. */
export function withDefaults(props: McpTasksProps): ResolvedProps {
  const workerMaxConcurrency = props.workerMaxConcurrency ?? DEFAULT_WORKER_MAX_CONCURRENCY;
  if (!Number.isSafeInteger(workerMaxConcurrency) || workerMaxConcurrency < 2 || workerMaxConcurrency > 1000) {
    throw new Error(`McpTasks: workerMaxConcurrency must be between 2 and 1000 (the SQS event source limits), got ${workerMaxConcurrency}`);
  }
  const shards = props.activeIndexShards;
  if (shards !== undefined && (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_ACTIVE_INDEX_SHARDS)) {
    throw new Error(`McpTasks: activeIndexShards must be between 1 and ${MAX_ACTIVE_INDEX_SHARDS}, got ${shards}`);
  }
  if (props.approvers) {
    parseApprovers(props.approvers, 'McpTasks: approvers');
    // On an open endpoint nobody signs in, so nobody could be an approver: a four-eyes question would wait for nothing.
    if (!props.auth && !props.cognito && !props.jwt)
      throw new Error('McpTasks: approvers need people to sign in: give auth, cognito or jwt too');
  }
  return {
    ...props,
    removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    throttle: props.throttle ?? throttleFor(workerMaxConcurrency),
    logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
    workerMaxConcurrency,
    sweepInterval: props.sweepInterval ?? DEFAULT_SWEEP_INTERVAL,
    tracing: false,
    traced: tracingTarget(props.tracing),
    dashboard: props.dashboard ?? false,
    allowedOrigins: props.allowedOrigins ?? [],
  };
}
