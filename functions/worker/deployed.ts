/**
 * The worker as deployed, composed once per execution environment: the Lambda
 * entry `McpTasks` generates at synthesis calls it at module scope with the
 * deployment's tools (`infra/constructs/tools-module.ts`), so a bundle holds
 * exactly the tools its deployment serves. See `app.ts` for the handler.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { validateCatalogue } from '../../shared/runtime/catalogue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { callbackWaits, failing, leases, reading, steps } from '../../shared/tasks/dynamodb/index.ts';
import { unboundWorkflows } from '../../shared/workflows/tool.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import type { EngineRuntime } from '../lib/engine-runtime.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { withDeployedSettings } from '../lib/tool-settings.ts';
import { createWorkerHandler, type WorkerHandler } from './app.ts';

/**
 * The handler running `tools` (a duplicate name or an invalid definition
 * throws here, naming the tool). `engines` (e.g. `sfnWorkflows`, from
 * `../lib/sfn.ts`) are given by the entry of a deployment with tools on
 * those engines only, so any other bundle carries no engine's client and no
 * runner of its tools.
 */
export function deployedHandler(tools: readonly ToolDefinition[], engines: readonly EngineRuntime[] = []): WorkerHandler {
  const config = loadConfig();
  const dynamodb = new DynamoDBClient({});
  const store = dynamoDbStore(config, [leases, failing, reading, steps, callbackWaits], dynamodb);
  const log = jsonLog();
  // Callback URLs and workflow task tokens are sealed under keys derived from the stack's secret (read on first use).
  const keys = config.stackSecretParameter ? purposeKeys(ssmStackSecret(config.stackSecretParameter)) : undefined;
  const catalogue = withDeployedSettings(validateCatalogue(tools));
  // A workflow tool no engine binds fails its run, naming what is missing; each engine binds its own tools.
  const bound = engines.reduce((each, engine) => engine.bind(each, keys && { config, keys, log, dynamodb }), unboundWorkflows(catalogue));
  return createWorkerHandler({
    config,
    store,
    queue: sqsQueue(config),
    tools: bound,
    log,
    eventPublisher: eventBridgePublisher(config),
    ...(keys ? { keys } : {}),
  });
}
