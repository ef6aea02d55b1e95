/**
 * The worker as deployed, composed once per execution environment: the Lambda
 * entry `McpTasks` generates at synthesis calls it at module scope with the
 * deployment's tools (`infra/constructs/tools-module.ts`), so a bundle holds
 * exactly the tools its deployment serves. See `app.ts` for the handler.
 */
import { loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { validateCatalogue } from '../../shared/runtime/catalogue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { withDeployedSettings } from '../lib/tool-settings.ts';
import { createWorkerHandler, type WorkerHandler } from './app.ts';

/** The handler running `tools` (a duplicate name or an invalid definition throws here, naming the tool). */
export function deployedHandler(tools: readonly ToolDefinition[]): WorkerHandler {
  const config = loadConfig();
  return createWorkerHandler({
    config,
    store: dynamoDbStore(config),
    queue: sqsQueue(config),
    tools: withDeployedSettings(validateCatalogue(tools)),
    log: jsonLog(),
    eventPublisher: eventBridgePublisher(config),
    // Callback URLs carry a token sealed under a key derived from the stack's secret (read on a callback's first use).
    ...(config.stackSecretParameter ? { keys: purposeKeys(ssmStackSecret(config.stackSecretParameter)) } : {}),
  });
}
