/** Lambda entry of the callbacks function: composed once per execution environment (see `app.ts`). */
import { ENV, loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { ACTION_GROUPS, dynamoDbStore } from '../lib/dynamodb.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { createCallbacksHandler } from './app.ts';

const config = loadConfig();
if (!config.stackSecretParameter) throw new Error(`Missing required environment variable ${ENV.stackSecretParameter}`);
export const handler = createCallbacksHandler({
  store: dynamoDbStore(config, ACTION_GROUPS),
  queue: sqsQueue(config),
  log: jsonLog(),
  keys: purposeKeys(ssmStackSecret(config.stackSecretParameter)),
});
