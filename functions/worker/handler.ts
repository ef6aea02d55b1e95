/** Lambda entry of the worker: composed once per execution environment (see `app.ts`). */
import { loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { servedTools } from '../lib/served-tools.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { withDeployedSettings } from '../lib/tool-settings.ts';
import { createWorkerHandler } from './app.ts';

const config = loadConfig();
export const handler = createWorkerHandler({
  config,
  store: dynamoDbStore(config),
  queue: sqsQueue(config),
  tools: withDeployedSettings(servedTools()),
  log: jsonLog(),
  eventPublisher: eventBridgePublisher(config),
  // Callback URLs carry a token sealed under a key derived from the stack's secret (read on a callback's first use).
  ...(config.stackSecretParameter ? { keys: purposeKeys(ssmStackSecret(config.stackSecretParameter)) } : {}),
});
