/**
 * `npm start`'s own variables, in one table ({@link LOCAL_ENV}): each with its
 * default and meaning, read by {@link localStackEnvironment}. The local table
 * of `docs/configuration.md` is rendered from it; the functions' `TASKS_*`
 * settings are in `shared/config.ts`.
 */

import type { EmulatorPorts, LocalStackOptions } from './options.ts';
import { DEFAULT_LOCAL_SETTINGS_FILE } from './settings.ts';

/** Defaults of the local stack, also when it is started from code (tests). */
export const LOCAL_DEFAULTS = {
  port: 3000,
  dataDir: '.data',
  sweepIntervalMs: 30_000,
  visibilityTimeoutSeconds: 30,
  maxReceiveCount: 3,
  workflowWaitMs: 1000,
} as const;

/** The variables, in the order `docs/configuration.md` shows them. */
export const LOCAL_ENV = {
  port: { env: 'PORT', shown: `\`${LOCAL_DEFAULTS.port}\``, meaning: 'HTTP port on 127.0.0.1 (`0` picks a free one)' },
  dataDir: {
    env: 'LOCAL_DATA_DIR',
    shown: `\`${LOCAL_DEFAULTS.dataDir}\``,
    meaning:
      "where the task table, the stack's secret and (with `LOCAL_AUTH`) the authorization server's keys and sign-ins (`auth/`) are kept",
  },
  settingsFile: {
    env: 'LOCAL_SETTINGS_FILE',
    shown: `\`${DEFAULT_LOCAL_SETTINGS_FILE}\``,
    meaning: "the tools' settings and secrets (`<TOOL>_<KEY>` variables take precedence; see [Writing a tool](tools.md))",
  },
  sweepIntervalMs: {
    env: 'LOCAL_SWEEP_INTERVAL_MS',
    shown: `${LOCAL_DEFAULTS.sweepIntervalMs}`,
    meaning: 'how often the sweeper runs (it also runs at start-up)',
  },
  visibilityTimeoutSeconds: {
    env: 'LOCAL_VISIBILITY_TIMEOUT_SECONDS',
    shown: `${LOCAL_DEFAULTS.visibilityTimeoutSeconds}`,
    meaning: "the task queue's visibility timeout: a failed run is retried after it (also the functions' `TASKS_REDELIVERY_MS`)",
  },
  maxReceiveCount: {
    env: 'LOCAL_MAX_RECEIVE_COUNT',
    shown: `${LOCAL_DEFAULTS.maxReceiveCount}`,
    meaning: 'deliveries of a task message before it goes to the dead-letter queue',
  },
  workflowWaitMs: {
    env: 'LOCAL_WORKFLOW_WAIT_MS',
    shown: `${LOCAL_DEFAULTS.workflowWaitMs}`,
    meaning: "the longest a workflow's `Wait` state waits (ms): a `Wait` of 30 s waits this long under `npm start`",
  },
  localStates: {
    env: 'TASKS_LOCAL_STATES',
    shown: '`src/local-states.ts`',
    meaning:
      "the module of local handlers for workflows' Task states the emulator cannot run itself, from the project's root " +
      '(see [Writing a tool](tools.md#what-runs-locally)); read by the stack, also when started from code',
  },
  events: {
    env: 'LOCAL_EVENTS',
    shown: '`print`',
    meaning:
      '`off` publishes no task lifecycle events (as `-c events=off` deploys); otherwise each is printed as one line (`event: …`), ' +
      'where a deployed stack sends it to EventBridge',
  },
  auth: {
    env: 'LOCAL_AUTH',
    shown: 'off',
    meaning: '`1` requires OAuth access tokens, issued by an authorization server embedded in the stack',
  },
  dynamodbPort: {
    env: 'LOCAL_DYNAMODB_PORT',
    shown: 'a free one',
    meaning: "the local DynamoDB's (dynalite's) port on 127.0.0.1, for a client or tool of your own to reach the task table",
  },
  sqsPort: { env: 'LOCAL_SQS_PORT', shown: 'a free one', meaning: "the local SQS's (fauxqs's) port on 127.0.0.1" },
  stepFunctionsPort: {
    env: 'LOCAL_STEPFUNCTIONS_PORT',
    shown: 'a free one',
    meaning: "the local Step Functions emulator's port on 127.0.0.1 (with workflow tools only)",
  },
  authPort: {
    env: 'LOCAL_AUTH_PORT',
    shown: '`PORT` + 1 (a free one when `PORT` is 0)',
    meaning: "that authorization server's port on 127.0.0.1",
  },
  authGroups: {
    env: 'LOCAL_AUTH_GROUPS',
    shown: 'none',
    meaning:
      '`<login>=<group>[+<group>…]` entries (comma-separated): the `groups` claim that server gives those logins, e.g. `ada=approvers` ' +
      'with `TASKS_APPROVERS=group:approvers` makes `ada` an approver on the console',
  },
  otlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    shown: 'none',
    meaning:
      'an OTLP/HTTP endpoint: spans of each request, run and wait are sent there ([Tracing](tracing.md)), as ' +
      '`OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` or `http/json`), `OTEL_TRACES_SAMPLER`, `OTEL_SERVICE_NAME` and ' +
      '`OTEL_BSP_SCHEDULE_DELAY` say; unset: no tracing',
  },
  authOtherResources: {
    env: 'LOCAL_AUTH_OTHER_RESOURCES',
    shown: 'none',
    meaning: 'further resource URLs (comma-separated) that server issues tokens for: tokens this endpoint must refuse',
  },
} as const satisfies Record<string, { env: string; shown: string; meaning: string }>;

/** The local stack's options that {@link localStackEnvironment} reads from the variables. */
export type LocalStackEnvironment = Pick<
  LocalStackOptions,
  | 'port'
  | 'dataDir'
  | 'settingsFile'
  | 'sweepIntervalMs'
  | 'visibilityTimeoutSeconds'
  | 'maxReceiveCount'
  | 'workflowWaitMs'
  | 'auth'
  | 'emulatorPorts'
> & { events?: 'off' };

/** Reads the variables of {@link LOCAL_ENV}; a malformed value throws, naming the variable. */
export function localStackEnvironment(env: Record<string, string | undefined>): LocalStackEnvironment {
  const value = (key: keyof typeof LOCAL_ENV): string | undefined => env[LOCAL_ENV[key].env] || undefined;
  const integer = (key: keyof typeof LOCAL_ENV, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    const raw = value(key);
    if (raw === undefined) return undefined;
    const number = Number(raw);
    if (!Number.isSafeInteger(number) || number < min || number > max)
      throw new Error(`${LOCAL_ENV[key].env} must be an integer from ${min} to ${max}, got "${raw}"`);
    return number;
  };
  const port = integer('port', 0, 65535) ?? LOCAL_DEFAULTS.port;
  const authOn = ['1', 'true', 'on'].includes((value('auth') ?? '').toLowerCase());
  const settingsFile = value('settingsFile');
  const sweepIntervalMs = integer('sweepIntervalMs', 1);
  const visibilityTimeoutSeconds = integer('visibilityTimeoutSeconds', 0, 43_200);
  const maxReceiveCount = integer('maxReceiveCount', 1, 1000);
  const workflowWaitMs = integer('workflowWaitMs', 0);
  const emulatorPorts = {
    dynamodb: integer('dynamodbPort', 0, 65535),
    sqs: integer('sqsPort', 0, 65535),
    stepFunctions: integer('stepFunctionsPort', 0, 65535),
  };
  const events = (value('events') ?? 'print').toLowerCase();
  if (events !== 'print' && events !== 'off') throw new Error(`${LOCAL_ENV.events.env} must be print or off, got "${value('events')}"`);
  return {
    ...(events === 'off' ? { events: 'off' as const } : {}),
    port,
    dataDir: value('dataDir') ?? LOCAL_DEFAULTS.dataDir,
    ...(settingsFile ? { settingsFile } : {}),
    ...(sweepIntervalMs !== undefined ? { sweepIntervalMs } : {}),
    ...(visibilityTimeoutSeconds !== undefined ? { visibilityTimeoutSeconds } : {}),
    ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
    ...(workflowWaitMs !== undefined ? { workflowWaitMs } : {}),
    ...(Object.values(emulatorPorts).some((p) => p !== undefined) ? { emulatorPorts: definedPorts(emulatorPorts) } : {}),
    ...(authOn
      ? {
          auth: {
            port: integer('authPort', 0, 65535) ?? (port === 0 ? 0 : port + 1),
            otherResources: (value('authOtherResources') ?? '')
              .split(',')
              .map((item) => item.trim())
              .filter(Boolean),
            ...(value('authGroups') ? { groups: accountGroups(value('authGroups')!) } : {}),
          },
        }
      : {}),
  };
}

/** The ports given, without the others. */
function definedPorts(ports: Record<keyof EmulatorPorts, number | undefined>): EmulatorPorts {
  return Object.fromEntries(Object.entries(ports).filter(([, port]) => port !== undefined)) as EmulatorPorts;
}

/** `LOCAL_AUTH_GROUPS`: `<login>=<group>[+<group>…]`, comma-separated. */
function accountGroups(raw: string): Record<string, string[]> {
  const groups: Record<string, string[]> = {};
  for (const entry of raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const [login, names] = entry.split('=');
    const list = (names ?? '').split('+').filter(Boolean);
    if (!login || list.length === 0)
      throw new Error(`${LOCAL_ENV.authGroups.env} must list <login>=<group>[+<group>] entries, got "${entry}"`);
    groups[login] = list;
  }
  return groups;
}
