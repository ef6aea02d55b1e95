/** Lambda entry of the MCP function: composed once per execution environment (see `app.ts`). */
import { ENV, loadConfig } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { servedTools } from '../lib/served-tools.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { withDeployedSettings } from '../lib/tool-settings.ts';
import { createMcpHandler } from './app.ts';

const config = loadConfig();
if (!config.stackSecretParameter) throw new Error(`Missing required environment variable ${ENV.stackSecretParameter}`);
export const handler = createMcpHandler({
  config,
  store: dynamoDbStore(config),
  queue: sqsQueue(config),
  tools: withDeployedSettings(servedTools()),
  log: jsonLog(),
  eventPublisher: eventBridgePublisher(config),
  stackSecret: ssmStackSecret(config.stackSecretParameter),
});
