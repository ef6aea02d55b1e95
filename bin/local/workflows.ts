/**
 * Workflow tools under `npm start`: the Step Functions emulator
 * (`stepfunctions/`) runs their state machines in process. Each workflow
 * tool's machine is created from its ASL file (`${ReceiverFunctionArn}`
 * standing for the local receiver), its ARN bound to the tool
 * (`TASKS_WORKFLOWS`); the emulator hands each status-change event to the
 * workflow-events handler and each invoke of the receiver to the receiver's
 * handler, both in process, and makes Wait states short
 * (`LOCAL_WORKFLOW_WAIT_MS`). Deployed, none of this applies: the stack
 * creates the machines, the rule on the default bus and the functions.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CreateStateMachineCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { WorkflowEventsHandler } from '../../functions/workflow-events/app.ts';
import type { WorkflowReceiverHandler } from '../../functions/workflow-receiver/app.ts';
import type { Config } from '../../shared/config.ts';
import { SfnWorkflowEngine } from '../../shared/engines/stepfunctions/index.ts';
import type { Log } from '../../shared/log.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import type { WorkflowBindings } from '../../shared/workflows/bindings.ts';
import { withReceiver } from '../../shared/workflows/declaration.ts';
import type { Cleanup } from './cleanup.ts';
import { REGION } from './emulators.ts';
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
  connect(handlers: WorkflowHandlers, store: TaskStore): Promise<void>;
}

/**
 * The emulator for the workflow tools among `options.tools`, and the functions'
 * configuration with their machines bound (unless the environment binds others).
 */
export async function localWorkflowsFor(
  loaded: Config,
  options: { dataDir: string; waitMs: number; log: Log; tools: Iterable<ToolDefinition> },
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
async function startLocalWorkflows(
  options: { dataDir: string; tools: Iterable<ToolDefinition>; waitMs: number; log: Log },
  cleanup: Cleanup,
): Promise<LocalWorkflows | undefined> {
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
  const emulator = await startStepFunctionsEmulator({
    dataDir: options.dataDir,
    region: REGION,
    log,
    onEvent: async (event) => void (await connected().workflowEvents(event)),
    invokeFunction: async (functionName, payload) => {
      if (functionName !== LOCAL_RECEIVER_ARN)
        throw Object.assign(new Error(`No function ${functionName} runs locally`), { name: 'Lambda.ResourceNotFoundException' });
      return connected().workflowReceiver(payload);
    },
    waitMs: (seconds) => Math.min(seconds * 1000, options.waitMs),
  });
  cleanup.push(emulator.stop);
  const client = new SFNClient({ endpoint: emulator.endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
  cleanup.push(async () => client.destroy());
  const bindings: Record<string, string> = {};
  for (const tool of workflowTools) {
    const text = await readFile(resolve(tool.workflow!.definition), 'utf8');
    const created = await client.send(
      new CreateStateMachineCommand({
        name: tool.workflow!.name,
        definition: withReceiver(text, LOCAL_RECEIVER_ARN),
        roleArn: 'arn:aws:iam::000000000000:role/local-workflows',
        type: 'STANDARD',
      }),
    );
    bindings[tool.name] = created.stateMachineArn!;
  }
  const engine = new SfnWorkflowEngine({ client });
  return {
    bindings,
    engine,
    client,
    emulator,
    endpoint: emulator.endpoint,
    connect: async (given, store) => {
      handlers = given;
      await restartLostExecutions({ lost: emulator.lostExecutions(), store, engine, log });
    },
  };
}
