/**
 * Workflow tools under `npm start`: the Step Functions emulator
 * (`stepfunctions/`) runs their state machines in process. Each workflow
 * tool's machine is created from its ASL file (`${ReceiverFunctionArn}`
 * standing for the local receiver), its ARN bound to the tool
 * (`TASKS_WORKFLOWS`); the emulator hands each status-change event to the
 * workflow-events handler and each invoke of the receiver to the receiver's
 * handler, both in process, and makes Wait states short
 * (`LOCAL_WORKFLOW_WAIT_MS`). Every other Task state runs by the project's
 * local handler for it (`local-states.ts`); one without fails its execution,
 * never the start. Deployed, none of this applies: the stack creates the
 * machines, the rule on the default bus and the functions.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CreateStateMachineCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { WorkflowEventsHandler } from '../../functions/workflow-events/app.ts';
import type { WorkflowReceiverHandler } from '../../functions/workflow-receiver/app.ts';
import { TaskActions } from '../../shared/actions/task-actions.ts';
import type { Config } from '../../shared/config.ts';
import { SfnWorkflowEngine, withReceiver } from '../../shared/engines/stepfunctions/index.ts';
import type { Log } from '../../shared/log.ts';
import type { TaskQueue } from '../../shared/queue/queue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import type { WorkflowBindings } from '../../shared/workflows/bindings.ts';
import type { Cleanup } from './cleanup.ts';
import { REGION } from './emulators.ts';
import { loadLocalStates } from './local-states.ts';
import { LOCAL_CREDENTIALS } from './sqs.ts';
import { type StepFunctionsEmulator, startStepFunctionsEmulator } from './stepfunctions/index.ts';
import { restartLostExecutions } from './workflow-recovery.ts';

/** What `${ReceiverFunctionArn}` stands for under `npm start`: the receiver, run in process. */
const LOCAL_RECEIVER_ARN = `arn:aws:lambda:${REGION}:000000000000:function:workflow-receiver`;

/** The key of the emulator's endpoint in the data directory's `outputs.json` (tests read it). */
export const STEP_FUNCTIONS_ENDPOINT_OUTPUT = 'StepFunctionsEndpoint';

/** Where the emulator's events and invokes go: the workflow-events and receiver functions, once composed. */
export interface WorkflowHandlers {
  workflowEvents: WorkflowEventsHandler;
  workflowReceiver: WorkflowReceiverHandler;
}

/** The running emulator, the machines bound to the tools, and the engine the worker runs them with. */
export interface LocalWorkflows {
  bindings: WorkflowBindings;
  engine: SfnWorkflowEngine;
  /** The engine's client (benchmarks count its calls). */
  client: SFNClient;
  emulator: StepFunctionsEmulator;
  endpoint: string;
  /**
   * Hands the emulator's events and invokes to `handlers`, then restarts the
   * executions an earlier life lost (`workflow-recovery.ts`): before the
   * worker runs anything.
   */
  connect(handlers: WorkflowHandlers, deps: { store: TaskStore; queue: TaskQueue }): Promise<void>;
}

/** Where the local workflows keep their journal, which tools they run, how long a `Wait` lasts, and the emulator's port (default: a free one). */
export interface LocalWorkflowsOptions {
  dataDir: string;
  waitMs: number;
  log: Log;
  tools: Iterable<ToolDefinition>;
  /** The local states module (`local-states.ts`: {@link localStatesFile}), from the project's root. */
  localStates: string;
  /** The emulator's port as `ports.stepFunctions` (default: a free one). */
  ports?: { stepFunctions?: number };
}

/**
 * The emulator for the workflow tools among `options.tools`, and the functions'
 * configuration with their machines bound (unless the environment binds others).
 */
export async function localWorkflowsFor(
  loaded: Config,
  options: LocalWorkflowsOptions,
  cleanup: Cleanup,
): Promise<{ workflows: LocalWorkflows | undefined; config: Config }> {
  const workflows = await startLocalWorkflows(options, cleanup);
  return { workflows, config: workflows ? { ...loaded, workflows: { ...workflows.bindings, ...loaded.workflows } } : loaded };
}

/**
 * Starts the emulator with a machine per workflow tool of `tools`; none
 * (`undefined`) when no tool runs a workflow, or on a Node without what the
 * interpreter needs (before 22): the workflow tools' tasks then end with a tool error.
 */
async function startLocalWorkflows(options: LocalWorkflowsOptions, cleanup: Cleanup): Promise<LocalWorkflows | undefined> {
  const workflowTools = [...options.tools].filter((tool) => tool.workflow !== undefined);
  if (workflowTools.length === 0) return undefined;
  const { log } = options;
  if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
    log({ event: 'workflows-unavailable', node: process.version, tools: workflowTools.map((tool) => tool.name) });
    return undefined;
  }
  let handlers: WorkflowHandlers | undefined;
  const connected = (): WorkflowHandlers => {
    if (!handlers) throw new Error('The local workflows are not connected to their functions yet');
    return handlers;
  };
  const localStates = await loadLocalStates({ file: options.localStates, functions: [LOCAL_RECEIVER_ARN], log });
  const emulator = await startStepFunctionsEmulator({
    dataDir: options.dataDir,
    region: REGION,
    log,
    onEvent: async (event) => void (await connected().workflowEvents(event)),
    invokeFunction: async (functionName, payload, context) => {
      if (functionName === LOCAL_RECEIVER_ARN) return connected().workflowReceiver(payload);
      const handler = localStates.functionHandler(functionName);
      if (!handler)
        throw Object.assign(new Error(`No function ${functionName} runs locally`), { name: 'Lambda.ResourceNotFoundException' });
      return handler(payload, context);
    },
    routeTask: localStates.route,
    waitMs: (seconds) => Math.min(seconds * 1000, options.waitMs),
    ...(options.ports?.stepFunctions !== undefined ? { port: options.ports.stepFunctions } : {}),
  });
  cleanup.push(emulator.stop);
  const client = new SFNClient({ endpoint: emulator.endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
  cleanup.push(async () => client.destroy());
  const bindings: Record<string, string> = {};
  for (const tool of workflowTools) bindings[tool.name] = await createMachine(client, tool);
  const engine = new SfnWorkflowEngine({ client });
  return {
    bindings,
    engine,
    client,
    emulator,
    endpoint: emulator.endpoint,
    connect: async (given, { store, queue }) => {
      handlers = given;
      const actions = new TaskActions({ store, queue, log, now: Date.now });
      await restartLostExecutions({ lost: emulator.lostExecutions(), actions, engine, log });
    },
  };
}

/**
 * The machine of a workflow tool, from its ASL file. A file that is missing or
 * not valid ASL stops the start, naming the tool and the file (what the
 * emulator does not run fails executions instead: `stepfunctions/`).
 */
async function createMachine(client: SFNClient, tool: ToolDefinition): Promise<string> {
  const { definition, name } = tool.workflow!;
  try {
    const text = await readFile(resolve(definition), 'utf8');
    const created = await client.send(
      new CreateStateMachineCommand({
        name,
        definition: withReceiver(text, LOCAL_RECEIVER_ARN),
        roleArn: 'arn:aws:iam::000000000000:role/local-workflows',
        type: 'STANDARD',
      }),
    );
    return created.stateMachineArn!;
  } catch (error) {
    throw new Error(`The workflow of ${tool.name} (${definition}): ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}
