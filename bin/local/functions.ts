/**
 * The local stack's functions, composed from the parts a deployed function
 * composes in its `handler.ts`: a configuration, the store and queue on the
 * emulators' clients, the tools it serves with their settings, the log sink.
 */
import { resolve } from 'node:path';
import { createDeadLetterHandler, type DeadLetterHandler } from '../../functions/dlq/app.ts';
import type { FunctionDeps } from '../../functions/lib/deps.ts';
import { storePolicy } from '../../functions/lib/dynamodb.ts';
import { sqsQueue } from '../../functions/lib/sqs.ts';
import { createSweeperHandler, type SweeperHandler } from '../../functions/sweeper/app.ts';
import { createWorkerHandler, type WorkerHandler } from '../../functions/worker/app.ts';
import { createWorkflowEventsHandler } from '../../functions/workflow-events/app.ts';
import { createWorkflowReceiverHandler } from '../../functions/workflow-receiver/app.ts';
import type { CallbackKeys } from '../../shared/callback-tokens.ts';
import { type Config, ENV, loadConfig } from '../../shared/config.ts';
import type { EventPublisher } from '../../shared/events/publisher.ts';
import type { DeploymentLinks } from '../../shared/links.ts';
import type { Log } from '../../shared/log.ts';
import { SqsMessageSource } from '../../shared/queue/sqs-drain.ts';
import { bindSettings, cachedReader } from '../../shared/runtime/settings.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb/index.ts';
import type { Tracing } from '../../shared/tracing/tracing.ts';
import { bindWorkflows } from '../../shared/workflows/tool.ts';
import type { Emulators } from './emulators.ts';
import { type TrackedLeases, trackLeases } from './leases.ts';
import type { LocalStackOptions } from './options.ts';
import { DEFAULT_LOCAL_SETTINGS_FILE, localSettingReader } from './settings.ts';
import type { LocalWorkflows, WorkflowHandlers } from './workflows.ts';

/** What {@link composeFunctions} reads: the stack's options, the configuration, the emulators, the settings' environment. */
export interface FunctionsOptions {
  options: Pick<LocalStackOptions, 'decorate' | 'settingsFile'>;
  /** Where the functions' lifecycle events go; none: events off. */
  eventPublisher: EventPublisher | undefined;
  config: Config;
  /** Links to the stack, whose URL is known once its HTTP adapter listens. */
  links: DeploymentLinks;
  env: Record<string, string | undefined>;
  emulators: Emulators;
  log: Log;
  /** The keys per purpose, from the secret in the data directory (callback and workflow task tokens). */
  keys: CallbackKeys;
  /** The tools the functions serve (`catalogue.ts`). */
  tools: ReadonlyMap<string, ToolDefinition>;
  /** The emulator that runs the workflow tools' machines, when any is served (`workflows.ts`). */
  workflows?: LocalWorkflows | undefined;
  /** Spans, when `OTEL_EXPORTER_OTLP_ENDPOINT` names where to send them. */
  tracing?: Tracing | undefined;
}

/** The functions' parts and the handlers the stack runs without a request (the MCP function is the endpoint's). */
export interface LocalFunctions {
  deps: FunctionDeps;
  /** The leases taken through {@link LocalFunctions.deps}' store, for the hand-back at stop. */
  leases: TrackedLeases;
  worker: WorkerHandler;
  deadLetter: DeadLetterHandler;
  sweeper: SweeperHandler;
  /** The workflow-events and receiver functions, when the stack runs workflow tools. */
  workflowHandlers?: WorkflowHandlers;
}

/**
 * The functions' configuration: their settings from `env`, the stack's
 * table and queue. `TASKS_TOOLSET` defaults to `product`, as deployed: the
 * conformance fixtures are served only when it asks for them (`all`).
 * `TASKS_PUBLIC_URL` defaults to the endpoint's own origin when its port is
 * fixed, so the links in the worker's events name it; with port 0 the port
 * is known only once the endpoint listens, after the worker starts, and the
 * worker's events carry a link only when `TASKS_PUBLIC_URL` is given.
 */
export function functionsConfig(
  env: Record<string, string | undefined>,
  stack: { tableName: string; queueUrl: string; visibilityTimeoutSeconds: number; port: number },
): Config {
  return loadConfig({
    ...(stack.port === 0 ? {} : { [ENV.publicUrl]: `http://127.0.0.1:${stack.port}` }),
    ...env,
    [ENV.tableName]: stack.tableName,
    [ENV.queueUrl]: stack.queueUrl,
    // After an unexpected error the sweeper leaves a task to SQS redelivery this long.
    [ENV.redeliveryMs]: String(stack.visibilityTimeoutSeconds * 1000),
  });
}

/** Builds the worker, the dead-letter handler and the sweeper, and the parts they share with the MCP function. */
export function composeFunctions(functions: FunctionsOptions): LocalFunctions {
  const { options, config, links, env, emulators, log, eventPublisher, keys, tools, workflows, tracing } = functions;
  const { sqs, functionsSqs } = emulators;
  // Leases this life takes, so that a graceful stop can hand their tasks back.
  const leases = trackLeases(
    new DynamoDbTaskStore({ client: emulators.dynamodb, tableName: config.tableName, policy: storePolicy(config) }),
  );
  const store = options.decorate?.store?.(leases.store) ?? leases.store;
  const settled = bindSettings(
    tools,
    cachedReader(localSettingReader({ file: resolve(options.settingsFile ?? DEFAULT_LOCAL_SETTINGS_FILE), env })),
  );
  const deps: FunctionDeps = {
    config,
    store,
    queue: options.decorate?.queue?.(sqsQueue(config, functionsSqs)) ?? sqsQueue(config, functionsSqs),
    // The workflow tools run on the emulator's machines (none: their tasks end with a tool error).
    tools: bindWorkflows(settled, workflows && { engine: workflows.engine, bindings: workflows.bindings, store, keys, log }),
    log,
    eventPublisher,
    links,
    keys,
    ...(tracing ? { tracing } : {}),
  };
  return {
    deps,
    leases,
    worker: createWorkerHandler(deps),
    // As deployed: no event source on the DLQ; the sweep timer drains it.
    deadLetter: createDeadLetterHandler({
      ...deps,
      deadLetters: new SqsMessageSource({ client: functionsSqs, queueUrl: sqs.dlqUrl }),
    }),
    sweeper: createSweeperHandler(deps),
    ...(workflows
      ? {
          workflowHandlers: {
            workflowEvents: createWorkflowEventsHandler(deps),
            workflowReceiver: createWorkflowReceiverHandler({ ...deps, keys }),
          },
        }
      : {}),
  };
}
