/** Lambda entry of the workflow receiver: composed once per execution environment (see `app.ts`). */
import { ENV, loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { ACTION_GROUPS, dynamoDbStore } from '../lib/dynamodb.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { createWorkflowReceiverHandler } from './app.ts';

const config = loadConfig();
if (!config.stackSecretParameter) throw new Error(`Missing required environment variable ${ENV.stackSecretParameter}`);
export const handler = createWorkflowReceiverHandler({
  config,
  store: dynamoDbStore(config, ACTION_GROUPS),
  queue: sqsQueue(config),
  log: jsonLog(),
  // Task tokens are sealed under a key derived from the stack's secret.
  keys: purposeKeys(ssmStackSecret(config.stackSecretParameter)),
});
