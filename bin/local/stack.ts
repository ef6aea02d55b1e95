import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createDeadLetterHandler, type DeadLetterHandler } from '../../functions/dlq/app.ts';
import type { FunctionDeps } from '../../functions/lib/deps.ts';
import { dynamoDbStore } from '../../functions/lib/dynamodb.ts';
import { sqsQueue } from '../../functions/lib/sqs.ts';
import { createMcpHandler, type McpHandler } from '../../functions/mcp/app.ts';
import { createSweeperHandler, type SweeperHandler } from '../../functions/sweeper/app.ts';
import { createWorkerHandler, type WorkerHandler } from '../../functions/worker/app.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY, WORKER_BATCH_SIZE } from '../../infra/event-sources.ts';
import { LOCAL_OUTPUTS, OPS_OUTPUTS } from '../../infra/outputs.ts';
import { METADATA_PATH } from '../../shared/auth/resource-server.ts';
import { list } from '../../shared/auth/settings.ts';
import { type Config, ENV, loadConfig } from '../../shared/config.ts';
import { errorName, jsonLog, type Log } from '../../shared/log.ts';
import type { TaskQueue } from '../../shared/queue/queue.ts';
import { SqsMessageSource } from '../../shared/queue/sqs-drain.ts';
import { bindSettings, cachedReader } from '../../shared/runtime/settings.ts';
import { sweepWindow } from '../../shared/tasks/rules.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { ensureTaskTable, startDynalite } from './dynamodb.ts';
import { LOCAL_DEFAULTS } from './environment.ts';
import { startHttpAdapter } from './http.ts';
import { type Poller, startPoller } from './poller.ts';
import { type RecoveryReport, recoverAtStart } from './recovery.ts';
import { DEFAULT_LOCAL_SETTINGS_FILE, localSettingReader } from './settings.ts';
import { LOCAL_CREDENTIALS, localSqsClient, startLocalSqs } from './sqs.ts';
import { localTools } from './tools.ts';

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
  /**
   * The environment the functions' settings (`TASKS_*`) are read from, as a
   * deployed function reads its own (default `process.env`; `TASKS_TOOLSET`
   * defaults to `all` here). Table, queue and endpoints are the stack's.
   */
  env?: Record<string, string | undefined>;
  /**
   * The tools' settings and secrets, in place of SSM and Secrets Manager (see
   * `settings.ts`): variables of `env`, else this JSON file (default
   * `settings.local.json` in the working directory).
   */
  settingsFile?: string;
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
    endpoints: { dynamodb: string; sqs: string };
  }) => void;
}

export interface LocalAuthOptions {
  /** The authorization server's port on 127.0.0.1 (0 picks a free one; the issuer, and so every principal, then changes per start). */
  port?: number;
  /** Scopes every request needs (default: `TASKS_AUTH_SCOPES` from `env`, else {@link LOCAL_AUTH_SCOPE}). */
  scopes?: string[];
  /** Other resources the authorization server also issues tokens for (their tokens must be refused here). */
  otherResources?: string[];
}

/** The endpoint-wide scope of a local stack with auth on, unless configured otherwise. */
export const LOCAL_AUTH_SCOPE = 'tasks';

export interface LocalStack {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The functions' configuration. */
  config: Config;
  /** The functions' store and queue (decorated, if asked), for tests. */
  store: TaskStore;
  queue: TaskQueue;
  /** The handlers the stack runs, as the factories built them (tests call them with events of their own). */
  handlers: { mcp: McpHandler; worker: WorkerHandler; deadLetter: DeadLetterHandler; sweeper: SweeperHandler };
  /** The embedded authorization server's issuer, when auth is on. */
  issuer?: string;
  /** What the start-up recovery found and did, and how long it took. */
  recovery: RecoveryReport & { ms: number };
  /** The worker event source's batches: in flight now, and the most at once so far. */
  workerStats(): { inFlight: number; peak: number };
  close(): Promise<void>;
}

/** The region the emulators and their clients use. */
export const REGION = 'us-east-1';

/**
 * Runs the Lambda handlers on this machine: dynalite for DynamoDB, fauxqs for
 * SQS, an HTTP API adapter for the MCP function and a poller standing in
 * for the worker's event source mapping, plus the sweeper and the dead-letter
 * handler (which drains the DLQ) on a timer, as the sweep schedule runs them. The handlers are the deployed ones, built by the same
 * factories (`functions/<name>/app.ts`) from parts composed here: a
 * configuration, emulator clients, the log sink and the local tool catalogue.
 * Nothing is read from or written to `process.env` beyond `options.env`.
 *
 * Persistence is uneven: the table is on disk, the queues are in fauxqs'
 * memory. So at start-up, before anything is served, the stack recovers from
 * its previous life (`recovery.ts`): leases that life held are voided, every
 * working task is enqueued again (sleepers at their wake-up time), and the
 * table is reconciled with its sparse index, which a kill can tear in dynalite.
 * A graceful `close()` hands back the tasks still running after `drainMs`.
 *
 * The worker's event source runs up to `workerMaxConcurrency` batches of
 * `WORKER_BATCH_SIZE` records at once, the settings the CDK stack deploys
 * (`infra/event-sources.ts`).
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const log = options.log ?? jsonLog();
  const tableName = options.tableName ?? 'tasks';
  const cleanup: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  };

  try {
    const dbPath = join(resolve(options.dataDir), 'dynamodb');
    await mkdir(dbPath, { recursive: true });
    cleanup.push(await lockDataDir(resolve(options.dataDir)));
    const dynamo = await startDynalite({ path: dbPath });
    cleanup.push(dynamo.close);
    // The emulators ignore credentials, but the SDK's signing needs some.
    const dynamodb = new DynamoDBClient({ endpoint: dynamo.endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
    cleanup.push(async () => dynamodb.destroy());
    await ensureTaskTable(dynamodb, tableName);

    const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? LOCAL_DEFAULTS.visibilityTimeoutSeconds;
    const sqs = await startLocalSqs({
      region: REGION,
      maxReceiveCount: options.maxReceiveCount ?? LOCAL_DEFAULTS.maxReceiveCount,
      visibilityTimeoutSeconds,
    });
    cleanup.push(sqs.close);

    const env = options.env ?? process.env;
    const config = loadConfig({
      ...env,
      [ENV.tableName]: tableName,
      [ENV.queueUrl]: sqs.queueUrl,
      [ENV.toolset]: env[ENV.toolset] || 'all',
      // After an unexpected error the sweeper leaves a task to SQS redelivery this long.
      [ENV.redeliveryMs]: String(visibilityTimeoutSeconds * 1000),
    });
    const functionsSqs = localSqsClient(sqs.endpoint, REGION);
    // The event source mappings' own client, not the functions'.
    const pollerSqs = localSqsClient(sqs.endpoint, REGION);
    cleanup.push(async () => {
      functionsSqs.destroy();
      pollerSqs.destroy();
    });
    options.instrument?.({ dynamodb, sqs: functionsSqs, poller: pollerSqs, endpoints: { dynamodb: dynamo.endpoint, sqs: sqs.endpoint } });

    // Leases this life takes, so that a graceful stop can hand their tasks back.
    const leases = trackLeases(dynamoDbStore(config, dynamodb));
    const deps: FunctionDeps = {
      config,
      store: options.decorate?.store?.(leases.store) ?? leases.store,
      queue: options.decorate?.queue?.(sqsQueue(config, functionsSqs)) ?? sqsQueue(config, functionsSqs),
      tools: bindSettings(
        localTools(config.toolset),
        cachedReader(localSettingReader({ file: resolve(options.settingsFile ?? DEFAULT_LOCAL_SETTINGS_FILE), env })),
      ),
      log,
    };
    const worker = createWorkerHandler(deps);
    // As deployed: no event source on the DLQ; the sweep timer drains it.
    const deadLetter = createDeadLetterHandler({
      ...deps,
      deadLetters: new SqsMessageSource({ client: functionsSqs, queueUrl: sqs.dlqUrl }),
    });
    const sweeper = createSweeperHandler(deps);

    // The queue is empty, whatever the table says: put the previous life's work back first.
    const recoveryStarted = Date.now();
    const report = await recoverAtStart({
      client: dynamodb,
      tableName,
      queue: deps.queue,
      sweepWindowMs: sweepWindow(config),
      activeIndexShards: config.activeIndexShards,
      now: deps.now?.() ?? Date.now(),
      log,
    });
    const recovery = { ...report, ms: Date.now() - recoveryStarted };
    log({ event: 'recovery', ...recovery });

    const workerPoller = startPoller({
      client: pollerSqs,
      queueUrl: sqs.queueUrl,
      queueArn: sqs.queueArn,
      region: REGION,
      handler: worker,
      batchSize: WORKER_BATCH_SIZE,
      maxConcurrency: options.workerMaxConcurrency ?? DEFAULT_WORKER_MAX_CONCURRENCY,
      log,
    });
    const pollers: Poller[] = [workerPoller];
    // Batches still running at shutdown get `drainMs` to finish; the tasks
    // still running then are handed back (lease released, due at once), so
    // the next start finds them free. Their runs go on until the process
    // ends, and every write they make after that fails on the lease.
    const drainMs = options.drainMs ?? 5000;
    cleanup.push(async () => {
      await withTimeout(Promise.all(pollers.map((poller) => poller.stop())), drainMs);
      await leases.handBack(Date.now(), log);
    });

    // The scheduled sweeper: once now (it finds nothing the recovery did not
    // take), then periodically.
    const runSweeper = () =>
      Promise.all([
        sweeper().then(
          ({ requeued, expired }) => (requeued > 0 || expired > 0) && log({ event: 'sweep', requeued, expired }),
          (error: unknown) => log({ event: 'sweep-error', error: errorName(error) }),
        ),
        deadLetter({}).catch((error: unknown) => log({ event: 'dead-letter-drain-error', error: errorName(error) })),
      ]);
    await runSweeper();
    const sweepTimer = setInterval(runSweeper, options.sweepIntervalMs ?? LOCAL_DEFAULTS.sweepIntervalMs);
    cleanup.push(async () => clearInterval(sweepTimer));

    // With auth, the canonical resource is the endpoint's own URL, known once
    // the adapter is listening (the port may be picked then): the MCP
    // function is composed right after, before any request is read.
    // The local server answers loopback pages only (DNS rebinding), and seals
    // `requestState` with a key kept in the data directory.
    let mcp: McpHandler | undefined;
    let resource = env[ENV.authResource] ?? '';
    const scopes = options.auth?.scopes ?? (env[ENV.authScopes] ? list(env[ENV.authScopes]) : [LOCAL_AUTH_SCOPE]);
    const toolScopes = [...deps.tools.values()].flatMap((tool) => tool.scopes ?? []);
    // Loaded only when asked for: oidc-provider warns about the Node version on import, which
    // `npm start` without LOCAL_AUTH would print for nothing.
    const authServer = options.auth
      ? await (await import('./auth-server.ts')).startLocalAuthServer({
          port: options.auth.port ?? 0,
          resource: () => resource,
          ...(options.auth.otherResources ? { otherResources: options.auth.otherResources } : {}),
          scopes: () => [...new Set([...scopes, ...toolScopes])],
          log,
        })
      : undefined;
    if (authServer) cleanup.push(authServer.close);
    const http = await startHttpAdapter({
      handler: (event) => mcp!(event),
      port: options.port,
      ...(authServer ? { extraPaths: [METADATA_PATH, `${METADATA_PATH}/mcp`] } : {}),
      log,
    });
    cleanup.push(http.close);
    resource ||= http.url;
    const mcpConfig = authServer
      ? loadConfig({
          ...env,
          [ENV.tableName]: tableName,
          [ENV.queueUrl]: sqs.queueUrl,
          [ENV.toolset]: config.toolset,
          [ENV.redeliveryMs]: String(config.redeliveryMs),
          [ENV.authIssuers]: authServer.issuer,
          [ENV.authResource]: resource,
          [ENV.authScopes]: scopes.join(' '),
        })
      : config;
    mcp = createMcpHandler({
      ...deps,
      config: mcpConfig,
      originPolicy: { kind: 'loopback' },
      requestStateKey: localStateKey(resolve(options.dataDir)),
    });

    // The operator commands find the local stack as they find a deployed one:
    // by its outputs (`npm run ops -- --outputs <dataDir>/outputs.json …`), plus the emulators' endpoints.
    const outputsFile = join(resolve(options.dataDir), 'outputs.json');
    await writeFile(
      outputsFile,
      JSON.stringify(
        {
          local: {
            [OPS_OUTPUTS.tableName]: tableName,
            [OPS_OUTPUTS.queueUrl]: sqs.queueUrl,
            [OPS_OUTPUTS.deadLetterQueueUrl]: sqs.dlqUrl,
            [OPS_OUTPUTS.activeIndexShards]: String(config.activeIndexShards),
            [LOCAL_OUTPUTS.dynamodbEndpoint]: dynamo.endpoint,
            [LOCAL_OUTPUTS.sqsEndpoint]: sqs.endpoint,
            [LOCAL_OUTPUTS.region]: REGION,
            McpEndpointUrl: http.url,
          },
        },
        null,
        2,
      ),
    );
    cleanup.push(() => rm(outputsFile, { force: true }));
    return {
      url: http.url,
      config: mcpConfig,
      store: deps.store,
      queue: deps.queue,
      handlers: { mcp, worker, deadLetter, sweeper },
      recovery,
      workerStats: () => workerPoller.stats(),
      ...(authServer ? { issuer: authServer.issuer } : {}),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The store, with a record of the leases taken through it and not yet given
 * up (by `finish` or `release`), so that a graceful stop can release them.
 * A proxy: every other method is the store's own.
 */
function trackLeases(store: TaskStore): { store: TaskStore; handBack(now: number, log: Log): Promise<void> } {
  const held = new Map<string, string>();
  const tracked: Partial<TaskStore> = {
    claim: async (taskId, leaseOwner, now, leaseMs) => {
      const task = await store.claim(taskId, leaseOwner, now, leaseMs);
      if (task) held.set(taskId, leaseOwner);
      return task;
    },
    finish: (task, leaseOwner, outcome, now) => store.finish(task, leaseOwner, outcome, now).finally(() => held.delete(task.taskId)),
    release: (taskId, leaseOwner, resumeAt, options) =>
      store.release(taskId, leaseOwner, resumeAt, options).finally(() => held.delete(taskId)),
  };
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === 'string' && Object.hasOwn(tracked, property)) return tracked[property as keyof TaskStore];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    store: proxy,
    async handBack(now, log) {
      for (const [taskId, leaseOwner] of [...held]) {
        held.delete(taskId);
        // Stopping is a clean hand-over: it does not count as a failed attempt.
        await store.release(taskId, leaseOwner, now, { handedOver: true }).then(
          () => log({ event: 'handed-back', taskId }),
          (error: unknown) => log({ event: 'hand-back-failed', taskId, error: errorName(error) }),
        );
      }
    },
  };
}

/**
 * Claims the data directory for this process. LevelDB allows one opener, and
 * dynalite turns a second one into an uncaught "Database is closed" on the
 * first request; this says what is wrong instead.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, 'local-stack.pid');
  const holder = Number(await readFile(file, 'utf8').catch(() => ''));
  if (holder && holder !== process.pid && isRunning(holder)) {
    throw new Error(`${dataDir} is in use by another local stack (pid ${holder}); stop it or set LOCAL_DATA_DIR`);
  }
  await writeFile(file, String(process.pid));
  return () => rm(file, { force: true });
}

/**
 * The local `requestState` key: 32 random bytes in `<dataDir>/request-state.key`
 * (mode 0600), made on first start and kept across restarts so answers in
 * flight survive them. Delete the file to rotate it.
 */
function localStateKey(dataDir: string): () => Promise<Uint8Array> {
  const file = join(dataDir, 'request-state.key');
  let key: Promise<Uint8Array> | undefined;
  return () =>
    (key ??= (async () => {
      try {
        await writeFile(file, randomBytes(32), { flag: 'wx', mode: 0o600 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      return readFile(file);
    })());
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
