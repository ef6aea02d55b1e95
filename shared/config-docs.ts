/**
 * What `docs/configuration.md` says of each setting of {@link SETTINGS}
 * (`config.ts`): its meaning, what the stack sets, and its default where the
 * reader does not tell it. Only `bin/scripts/config-tables.ts` reads this
 * module, so the functions' bundles never carry its text
 * (`test/infra/bundles.test.ts` checks); the type makes every setting have
 * its entry and every entry name a setting.
 */
import { DEFAULT_UNFINISHED_TASK_CAP, MAX_INDEX_SHARDS, type SETTINGS } from './config.ts';

/** A setting as the docs show it. */
export interface SettingDocs {
  /** What it does, one line (Markdown). */
  readonly meaning: string;
  /** The default as documented, when the reader does not give it (a required setting, none, a number or a duration). */
  readonly shown?: string;
  /** What the stack sets on AWS, when neither the default nor a timing of `infra/timings.ts`. */
  readonly deployed?: string;
}

const STACK_SETS = 'set by the stack';

/** The documentation of every setting, in the order of `SETTINGS`. */
export const SETTING_DOCS: { readonly [K in keyof typeof SETTINGS]: SettingDocs } = {
  tableName: { meaning: 'the task table', deployed: STACK_SETS },
  queueUrl: { meaning: 'the task queue', deployed: STACK_SETS },
  deadLetterQueueUrl: {
    meaning: 'the dead-letter queue, which its handler drains on the sweep schedule',
    deployed: 'set by the stack on that function only',
  },
  localPrincipal: { meaning: 'owner of tasks when no authorizer identifies the caller', shown: '`local`' },
  taskTtlMs: { meaning: '`ttlMs` advertised at creation; it only ever grows' },
  retentionMs: { meaning: 'how long a finished (completed, failed or cancelled) task stays readable' },
  pollIntervalMs: { meaning: '`pollIntervalMs` suggested to clients of a new task' },
  maxPollIntervalMs: { meaning: 'ceiling of the age-adaptive `pollIntervalMs`' },
  leaseMs: { meaning: "a worker's lease on a running task (renewed by heartbeats)" },
  cancelCheckMs: {
    meaning:
      'how often a running handler checks for cancellation (a read, or the lease renewal once a third of the lease has passed), progress ' +
      'or not',
  },
  progressIntervalMs: { meaning: 'minimum time between two progress writes of a task' },
  syncBudgetMs: { meaning: 'longest a tool may run inside a request (also how long a 2025-era `tasks/result` waits)' },
  sweepGraceMs: {
    meaning: 'how long past its next expected event (lease end, wake-up) a task may go unnoticed before the sweeper re-enqueues it',
  },
  stepRetentionMs: { meaning: 'how long step checkpoints are kept (the longest a step-structured job may run)' },
  invocationBudgetMs: { meaning: 'most time one worker invocation spends on a task before handing over to a continuation' },
  maxAttempts: {
    meaning:
      'runs a task may take through `RetryableError`, or through crashes and timeouts without a new step checkpoint, before it ends ' +
      '`failed` (a run that records a step starts the count again)',
  },
  retryBaseDelayMs: { meaning: "first retry delay, doubling per attempt (at most SQS's 15 minutes)" },
  redeliveryMs: {
    meaning: "the task queue's visibility timeout: after an unexpected error the sweeper leaves the task to SQS redelivery this long",
  },
  maxInputWaitMs: {
    meaning:
      'the longest a task may wait for input, from when it starts waiting; past it the sweeper ends it `failed`. While it waits, the ' +
      'row itself expires at this deadline plus `TASKS_RETENTION_MS` (a backstop), and `ttlMs` advertises its age plus ' +
      '`TASKS_RETENTION_MS`, as a running task does',
    deployed: '`-c maxInputWaitDays=N`, else the default',
  },
  activeIndexShards: {
    meaning:
      `partitions of the index of unfinished tasks (1–${MAX_INDEX_SHARDS}; each takes ~1,000 writes a second, ~500 task creations): ` +
      `may grow between deployments, never shrink`,
    deployed: '`-c activeIndexShards=N`',
  },
  toolset: {
    meaning: 'the tool catalogue served: `product`, `conformance`, `all`, or `test` (`all` plus the durability fixtures; local only)',
    shown: '`product`',
    deployed: 'not read: a deployment bundles its tools (`-c toolset=…` picks the modules, `McpTasks` `tools`)',
  },
  workflows: {
    meaning:
      'the Standard state machine each workflow tool starts: a JSON object of tool name to state machine ARN (see [Wrapping a ' +
      'workflow](tools.md#wrapping-a-workflow)); a workflow tool without one ends its tasks with a tool error',
    shown: 'none (`npm start` binds the machines it creates in its emulator)',
    deployed: 'set by `McpTasks` from its `workflows` bindings, on the worker and the workflow functions',
  },
  publicUrl: {
    meaning:
      "the deployment's own base URL (`https://…`, without `/mcp`): links to the endpoint given to people and models are built " +
      "from it, never from a request's `Host` header",
    shown: 'none (`http://127.0.0.1:<port>` under `npm start`)',
    deployed: "the HTTP API's URL",
  },
  eventBusName: {
    meaning:
      'the EventBridge bus (name or ARN) the functions publish task lifecycle events to (see [Operating it](operators.md#lifecycle-events)); ' +
      'unset: no events',
    deployed: "the stack's bus, on the functions that publish (none with `-c events=off`); `npm start` prints the events instead",
  },
  console: {
    meaning:
      'the console of an open endpoint (no issuer): `by-id` shows a task by its id only, as `tasks/get` does; `open` also lists every ' +
      'task, to anyone who can reach the endpoint (see [The console](console.md)). With console sign-in set, each person sees their own',
    shown: '`by-id` (`open` under `npm start` without `LOCAL_AUTH`)',
    deployed: '`-c console=open`, else the default',
  },
  consoleIssuer: {
    meaning:
      "the issuer people sign in to the console with (OAuth authorization code + PKCE); it must give them the subject their MCP clients' " +
      'tokens carry',
    deployed: "the user pool's with `cognito`, else the first `authIssuer` (or `jwtIssuer`)",
  },
  consoleClientId: {
    meaning: "the console's client id at that issuer; with both set, the console signs people in and lists each one's tasks",
    deployed: "the user pool's console client with `cognito`, else `-c consoleClientId=…`",
  },
  consoleClientSecret: {
    meaning:
      "the Secrets Manager secret (name or ARN) holding the console client's secret, for issuers that require one (the console reads " +
      'it once per execution environment)',
    deployed: '`-c consoleClientSecret=…`',
  },
  approvers: {
    meaning:
      "who may decide the questions for a person (`answeredBy: 'person'`, `approval_gate`'s) of tasks they do not own, on the " +
      'console: `group:<name>` (a `cognito:groups` or `groups` claim) and `scope:<name>` entries, comma-separated (see [The ' +
      "console](console.md#approvals)). Unset: only a task's owner decides, and a question that needs another approver is refused",
    deployed: '`-c approvers=…`',
  },
  machineClaim: {
    meaning:
      'which callers are machines (a client acting for itself, as with client credentials), whose questions for a person only ' +
      'approvers decide (and which fail at once without approvers): `<claim>=<value>` (the token has that claim with that value, ' +
      'e.g. `gty=client-credentials` for Auth0, `idtyp=app` for Entra ID), or `none` (see [Authorization](authorization.md#machines))',
    shown: "the token's `sub` equals its `client_id`, `azp` or `cid`",
    deployed: '`-c machineClaim=…`, else the default',
  },
  personQuestions: {
    meaning:
      '`url`: a question for a person goes to a client that declares `elicitation.url` (with the tasks extension) as a URL-mode ' +
      "elicitation naming the task's page, where it is decided, wherever that page identifies the person (console sign-in, or a " +
      'loopback URL); `form`: always as a form, as other questions',
    shown: '`url`',
    deployed: '`-c personQuestions=form`, else the default',
  },
  allowedOrigins: {
    meaning:
      'origins (`https://app.example.com`, comma-separated) whose browser pages may call the endpoint; a request with another `Origin` ' +
      'gets 403, one without an `Origin` is served',
    deployed: "`-c allowedOrigins=…`, which also configures the HTTP API's CORS",
  },
  stackSecretParameter: {
    meaning:
      "the SSM SecureString holding the stack's secret (base64, 32 bytes or more), which seals `requestState` and from which every " +
      "purpose's key derives; the local stack keeps its own in the data directory",
    deployed: "the stack's parameter",
  },
  maxUnfinishedTasks: {
    meaning: 'most unfinished tasks one principal may have at once (`0`: no cap; see [Limits](#limits))',
    shown: `${DEFAULT_UNFINISHED_TASK_CAP} where people sign in (an issuer), else no cap`,
    deployed: '`-c maxUnfinishedTasks=N`, else the default',
  },
  clientFallback: {
    meaning:
      '`on`: a long call from a client that does not declare the tasks extension runs as a durable task, answered with an ordinary ' +
      'result naming it, and such clients get the `task_status`, `task_answer` and `task_cancel` tools (see [Connecting ' +
      'clients](connecting.md)); `off`: such a call runs inside the request, and a task-only tool answers `-32021`',
    shown: '`on`',
    deployed: '`-c clientFallback=off` (MCP function only)',
  },
  authIssuers: {
    meaning:
      'issuers whose access tokens the endpoint accepts (comma-separated); set, the endpoint is an OAuth resource server and every MCP ' +
      'request needs a token',
    deployed: '`-c authIssuer=…` (or `cognito`)',
  },
  authResource: {
    meaning:
      "the endpoint's canonical URL: the metadata's `resource` and the audience tokens must carry; required with issuers, never taken " +
      'from the `Host` header',
    deployed: "`-c authResource=…`, else the API's `…/mcp` URL",
  },
  authScopes: { meaning: 'scopes every request needs (space- or comma-separated)', deployed: '`-c authScopes=…`' },
  authServers: { meaning: 'advertised authorization servers, when not the issuers themselves', deployed: '`-c authServers=…`' },
  authAudiences: {
    meaning: 'further accepted `aud` values, for IdPs that cannot put the resource URL in `aud`',
    deployed: '`-c authAudiences=…`',
  },
  authClientIds: {
    meaning: 'client ids whose tokens may lack `aud` altogether (Cognito without resource binding)',
    deployed: '`-c authClientIds=…`',
  },
};
