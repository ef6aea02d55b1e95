/**
 * The MCP function as deployed, composed once per execution environment: the
 * Lambda entry `McpTasks` generates at synthesis calls it at module scope with
 * the deployment's tools (`infra/constructs/tools-module.ts`), so a bundle
 * holds exactly the tools its deployment serves. See `app.ts` for the handler.
 */
import { ENV, loadConfig } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { validateCatalogue } from '../../shared/runtime/catalogue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { ACTION_GROUPS, dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { withDeployedSettings } from '../lib/tool-settings.ts';
import { createMcpHandler, type McpHandler } from './app.ts';

/** The handler serving `tools` (a duplicate name or an invalid definition throws here, naming the tool). */
export function deployedHandler(tools: readonly ToolDefinition[]): McpHandler {
  const config = loadConfig();
  if (!config.stackSecretParameter) throw new Error(`Missing required environment variable ${ENV.stackSecretParameter}`);
  return createMcpHandler({
    config,
    store: dynamoDbStore(config, ACTION_GROUPS),
    queue: sqsQueue(config),
    tools: withDeployedSettings(validateCatalogue(tools)),
    log: jsonLog(),
    eventPublisher: eventBridgePublisher(config),
    stackSecret: ssmStackSecret(config.stackSecretParameter),
  });
}
