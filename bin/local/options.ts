/**
 * The local stack's options and its handle: types only (and the default auth
 * scope), so that `environment.ts`, which reads options from variables, and
 * the modules composing the stack import them without importing `stack.ts`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SFNClient } from '@aws-sdk/client-sfn';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ConsoleHandler } from '../../functions/console/app.ts';
import type { DeadLetterHandler } from '../../functions/dlq/app.ts';
import type { McpHandler } from '../../functions/mcp/app.ts';
import type { SweeperHandler } from '../../functions/sweeper/app.ts';
import type { WorkerHandler } from '../../functions/worker/app.ts';
import type { WorkflowEventsHandler } from '../../functions/workflow-events/app.ts';
import type { WorkflowReceiverHandler } from '../../functions/workflow-receiver/app.ts';
import type { Config } from '../../shared/config.ts';
import type { EventPublisher } from '../../shared/events/publisher.ts';
import type { TaskEvent } from '../../shared/events/task-events.ts';
import type { Log } from '../../shared/log.ts';
import type { TaskQueue } from '../../shared/queue/queue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import type { RecoveryReport } from './recovery.ts';

/** Pinned ports of the local emulators; each one left out is a free port. */
export interface EmulatorPorts {
  dynamodb?: number;
  sqs?: number;
  stepFunctions?: number;
}

/** How to start a local stack (`startLocalStack` in `stack.ts`). */
export interface LocalStackOptions {
  /** HTTP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** Where dynalite keeps the table (under `<dataDir>/dynamodb`), so tasks survive a restart. */
  dataDir: string;
  tableName?: string;
  /** Receives before a task message is dead-lettered (default 3). */
  maxReceiveCount?: number;
  /** Visibility timeout of the task queue; a failed record is retried after it (default 30 s). */
  visibilityTimeoutSeconds?: number;
  /**
   * How long `close()` waits for batches still being handled (default 5 s);
   * tasks still running then are handed back (their leases released).
   */
  drainMs?: number;
  /** Concurrent worker batches, as the deployed event source's `maxConcurrency` (default: the stack's default). */
  workerMaxConcurrency?: number;
  /** The one log sink, for the functions' lines and the stack's own (default: JSON lines on stdout). */
  log?: Log;
  /** How often the sweeper runs (it also runs once at start-up); default 30 s. */
  sweepIntervalMs?: number;
  /** The emulators' ports on 127.0.0.1 (default: free ones). */
  emulatorPorts?: EmulatorPorts;
  /** The longest a workflow's `Wait` state waits, in ms (default 1 s): local runs need not wait out a rollout. */
  workflowWaitMs?: number;
  /**
   * The tools to serve (a project's). Default: the catalogue `TASKS_TOOLSET`
   * names from this repository's demo tools and fixtures (a checkout only).
   */
  tools?: readonly ToolDefinition[];
  /**
   * The environment the functions' settings (`TASKS_*`) are read from, as a
   * deployed function reads its own (default `process.env`; `TASKS_TOOLSET`
   * defaults to `product`, as deployed). Table, queue and endpoints are the stack's.
   */
  env?: Record<string, string | undefined>;
  /**
   * The tools' settings and secrets, in place of SSM and Secrets Manager (see
   * `settings.ts`): variables of `env`, else this JSON file (default
   * `settings.local.json` in the working directory).
   */
  settingsFile?: string;
  /**
   * Where the functions' lifecycle events go: to this publisher (`npm start`
   * prints them, `bin/local/events.ts`; a test may give the EventBridge
   * adapter on a client of its own), or nowhere (`'off'`, as `-c events=off`
   * deploys: none is published). Default: kept in memory, as
   * {@link LocalStack.events}.
   */
  events?: EventPublisher | 'off';
  /** Wraps the functions' store or queue, e.g. to inject failures or record what is sent (tests). */
  decorate?: { store?: (store: TaskStore) => TaskStore; queue?: (queue: TaskQueue) => TaskQueue };
  /**
   * Requires tokens on the MCP endpoint, issued by an authorization server
   * embedded in the stack (`auth-server.ts`); without it the endpoint is open.
   */
  auth?: LocalAuthOptions;
  /** Called with the functions' clients and the event source mappings' SQS client (benchmarks count their calls). */
  instrument?: (clients: {
    dynamodb: DynamoDBClient;
    sqs: SQSClient;
    poller: SQSClient;
    /** The workflow engine's Step Functions client, when the stack runs workflow tools. */
    stepFunctions?: SFNClient;
    endpoints: { dynamodb: string; sqs: string };
  }) => void;
}

/** The embedded authorization server of a local stack with auth on. */
export interface LocalAuthOptions {
  /** The authorization server's port on 127.0.0.1 (0 picks a free one; the issuer, and so every principal, then changes per start). */
  port?: number;
  /** Scopes every request needs (default: `TASKS_AUTH_SCOPES` from `env`, else {@link LOCAL_AUTH_SCOPE}). */
  scopes?: string[];
  /** Other resources the authorization server also issues tokens for (their tokens must be refused here). */
  otherResources?: string[];
  /** Groups by login name, as the authorization server's `groups` claim (`LOCAL_AUTH_GROUPS`). */
  groups?: Record<string, string[]>;
}

/** The endpoint-wide scope of a local stack with auth on, unless configured otherwise. */
export const LOCAL_AUTH_SCOPE = 'tasks';

/** A running local stack. */
export interface LocalStack {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The functions' configuration. */
  config: Config;
  /** The functions' store and queue (decorated, if asked), for tests. */
  store: TaskStore;
  queue: TaskQueue;
  /** The handlers the stack runs, as the factories built them (tests call them with events of their own). */
  handlers: {
    mcp: McpHandler;
    console: ConsoleHandler;
    worker: WorkerHandler;
    deadLetter: DeadLetterHandler;
    sweeper: SweeperHandler;
    /** Present when the stack runs workflow tools. */
    workflowEvents?: WorkflowEventsHandler;
    workflowReceiver?: WorkflowReceiverHandler;
  };
  /** The embedded authorization server's issuer, when auth is on. */
  issuer?: string;
  /** The Step Functions emulator's endpoint, when the stack runs workflow tools. */
  stepFunctionsEndpoint?: string;
  /** What the start-up recovery found and did, and how long it took. */
  recovery: RecoveryReport & { ms: number };
  /** The lifecycle events the functions published, when no other publisher (nor `'off'`) was given. */
  events: readonly TaskEvent[];
  /** The worker event source's batches: in flight now, and the most at once so far. */
  workerStats(): { inFlight: number; peak: number };
  close(): Promise<void>;
}
