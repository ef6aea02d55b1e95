import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { FunctionDeps } from '../../functions/lib/deps.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY } from '../../infra/event-sources.ts';
import { type Config, ENV } from '../../shared/config.ts';
import { MemoryEventPublisher } from '../../shared/events/publisher.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { DeploymentLinks } from '../../shared/links.ts';
import { jsonLog, type Log } from '../../shared/log.ts';
import { sweepWindow } from '../../shared/tasks/predicates.ts';
import { tracingFromEnv } from '../../shared/tracing/otel/index.ts';
import { startSweeps, startWorkerSource } from './background.ts';
import { localCatalogue } from './catalogue.ts';
import { Cleanup } from './cleanup.ts';
import { localStackSecret, lockDataDir, writeOutputs } from './data-dir.ts';
import { type Emulators, startEmulators } from './emulators.ts';
import { LOCAL_CONSOLE_CLIENT_ID, startEndpoint } from './endpoint.ts';
import { LOCAL_DEFAULTS } from './environment.ts';
import { composeFunctions, functionsConfig } from './functions.ts';
import { startJobSystem } from './job-system.ts';
import { localStatesFile } from './local-states.ts';
import type { LocalStack, LocalStackOptions } from './options.ts';
import { type RecoveryReport, recoverAtStart } from './recovery.ts';
import { settingVariable } from './settings.ts';
import { localWorkflowsFor } from './workflows.ts';

/**
 * Runs the Lambda handlers on this machine: dynalite for DynamoDB, fauxqs for
 * SQS (`emulators.ts`), an HTTP API adapter for the MCP function
 * (`endpoint.ts`) and a poller standing in for the worker's event source
 * mapping, plus the sweeper and the dead-letter handler (which drains the
 * DLQ) on a timer, as the sweep schedule runs them (`background.ts`). The
 * handlers are the deployed ones, built by the same factories
 * (`functions/<name>/app.ts`) from parts composed here (`functions.ts`): a
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
  const dataDir = resolve(options.dataDir);
  const cleanup = new Cleanup();
  try {
    const dbPath = await lockedDataDir(dataDir, cleanup);
    const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? LOCAL_DEFAULTS.visibilityTimeoutSeconds;
    const maxReceiveCount = options.maxReceiveCount ?? LOCAL_DEFAULTS.maxReceiveCount;
    const ports = options.emulatorPorts ?? {};
    const emulators = await startEmulators({ dbPath, tableName, maxReceiveCount, visibilityTimeoutSeconds, ports }, cleanup);
    const { sqs, dynamodb, functionsSqs, pollerSqs, endpoints } = emulators;
    // The simulated job system `external_job`'s callback mode calls (unless the environment names another).
    const jobSystem = await startJobSystem(log);
    cleanup.push(jobSystem.close);
    const env = withConsoleDefaults({ [JOB_SYSTEM_VARIABLE]: jobSystem.url, ...(options.env ?? process.env) }, options.auth !== undefined);
    const loaded = functionsConfig(env, { tableName, queueUrl: sqs.queueUrl, visibilityTimeoutSeconds, port: options.port });
    // The workflow tools' machines run in an emulator (`workflows.ts`).
    const waitMs = options.workflowWaitMs ?? LOCAL_DEFAULTS.workflowWaitMs;
    const tools = await localCatalogue(options.tools, loaded.toolset);
    const localStates = localStatesFile(env, options.tools !== undefined);
    const workflowOptions = { dataDir, waitMs, log, tools: tools.values(), localStates, ports };
    const { workflows, config } = await localWorkflowsFor(loaded, workflowOptions, cleanup);
    const stepFunctions = workflows ? { stepFunctions: workflows.client } : {};
    options.instrument?.({ dynamodb, sqs: functionsSqs, poller: pollerSqs, endpoints, ...stepFunctions });
    // The stack's own URL, once its HTTP adapter listens (unless the environment names another, e.g. a tunnel's).
    let publicUrl = config.publicUrl;
    const links = new DeploymentLinks(() => publicUrl);
    // Events go to the given publisher, nowhere (`off`), or by default to memory, for tests to read.
    const recorded = new MemoryEventPublisher();
    const eventPublisher = options.events === 'off' ? undefined : (options.events ?? recorded);
    const keys = purposeKeys(localStackSecret(dataDir));
    // Spans go where the standard OpenTelemetry variables say (none: tracing off); what is pending is sent at close.
    const tracing = tracingFromEnv(env);
    if (tracing) cleanup.push(() => tracing.flush());
    const functions = { options, config, links, env, emulators, log, eventPublisher, keys, tools, workflows, tracing };
    const { deps, leases, worker, deadLetter, sweeper, workflowHandlers } = composeFunctions(functions);

    // The queue is empty, whatever the table says: put the previous life's work back first.
    const recovery = await recoverPreviousLife(emulators, tableName, config, deps, log);
    if (workflows && workflowHandlers) await workflows.connect(workflowHandlers, deps);
    const workers = startWorkerSource({
      client: pollerSqs,
      sqs,
      handler: worker,
      maxConcurrency: options.workerMaxConcurrency ?? DEFAULT_WORKER_MAX_CONCURRENCY,
      leases,
      drainMs: options.drainMs ?? 5000,
      log,
    });
    cleanup.push(workers.stop);
    const intervalMs = options.sweepIntervalMs ?? LOCAL_DEFAULTS.sweepIntervalMs;
    cleanup.push(await startSweeps({ sweeper, deadLetter, intervalMs, log }));

    const queueUrl = sqs.queueUrl;
    const endpoint = await startEndpoint({ stack: options, env, config, tableName, queueUrl, deps, dataDir, log }, cleanup);
    publicUrl = endpoint.config.publicUrl;
    const { activeIndexShards } = config;
    const stepFunctionsEndpoint = workflows ? { stepFunctionsEndpoint: workflows.endpoint } : {};
    cleanup.push(
      await writeOutputs(dataDir, { tableName, activeIndexShards, sqs, endpoints, mcpEndpointUrl: endpoint.url, ...stepFunctionsEndpoint }),
    );
    return {
      url: endpoint.url,
      config: endpoint.config,
      store: deps.store,
      queue: deps.queue,
      handlers: { mcp: endpoint.mcp, console: endpoint.console, worker, deadLetter, sweeper, ...workflowHandlers },
      recovery,
      events: recorded.events,
      workerStats: () => workers.poller.stats(),
      ...(endpoint.issuer ? { issuer: endpoint.issuer } : {}),
      ...stepFunctionsEndpoint,
      close: cleanup.close,
    };
  } catch (error) {
    await cleanup.close();
    throw error;
  }
}

/** The data folder made and locked for this life of the stack (unlocked on close); the local DynamoDB's folder in it. */
async function lockedDataDir(dataDir: string, cleanup: Cleanup): Promise<string> {
  const dbPath = join(dataDir, 'dynamodb');
  await mkdir(dbPath, { recursive: true });
  cleanup.push(await lockDataDir(dataDir));
  return dbPath;
}

/** The variable of `external_job`'s `jobSystemUrl` setting (`settings.ts`). */
const JOB_SYSTEM_VARIABLE = settingVariable('external_job', 'jobSystemUrl');

/**
 * The console under `npm start`: open (it lists every task, to this machine
 * only: the server answers loopback pages) without auth; with auth, people
 * sign in at the embedded authorization server (`endpoint.ts` registers the
 * console's client there), which the functions that create tasks know from
 * its client id. The environment may say otherwise.
 */
function withConsoleDefaults(env: Record<string, string | undefined>, auth: boolean): Record<string, string | undefined> {
  return auth ? { [ENV.consoleClientId]: LOCAL_CONSOLE_CLIENT_ID, ...env } : { [ENV.console]: 'open', ...env };
}

/** The start-up recovery (`recovery.ts`), timed and logged. */
async function recoverPreviousLife(
  emulators: Emulators,
  tableName: string,
  config: Config,
  deps: FunctionDeps,
  log: Log,
): Promise<RecoveryReport & { ms: number }> {
  const started = Date.now();
  const report = await recoverAtStart({
    client: emulators.dynamodb,
    tableName,
    queue: deps.queue,
    sweepWindowMs: sweepWindow(config),
    activeIndexShards: config.activeIndexShards,
    now: deps.now?.() ?? Date.now(),
    log,
  });
  const recovery = { ...report, ms: Date.now() - started };
  log({ event: 'recovery', ...recovery });
  return recovery;
}
