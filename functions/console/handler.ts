/** Lambda entry of the console function: composed once per execution environment (see `app.ts`). */
import { ENV, loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { signInNames, signOuts } from '../../shared/tasks/dynamodb/index.ts';
import { ACTION_GROUPS, dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { secretsManagerFetcher } from '../lib/secrets-manager.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { createConsoleHandler } from './app.ts';

const config = loadConfig();
if (!config.stackSecretParameter) throw new Error(`Missing required environment variable ${ENV.stackSecretParameter}`);
if (!config.publicUrl) throw new Error(`Missing required environment variable ${ENV.publicUrl}`);
const secretId = config.consoleClientSecret;
export const handler = createConsoleHandler({
  config,
  store: dynamoDbStore(config, [...ACTION_GROUPS, signOuts, signInNames]),
  queue: sqsQueue(config),
  log: jsonLog(),
  eventPublisher: eventBridgePublisher(config),
  keys: purposeKeys(ssmStackSecret(config.stackSecretParameter)),
  // The stack sets this flag at build time (esbuild `define`) only when the console has a client secret:
  // otherwise the Secrets Manager client is not bundled.
  // (The sign-in reads it once, with the issuer's metadata, and again only after a failure.)
  ...(process.env.TASKS_READS_SECRETS_MANAGER === 'true' && secretId ? { clientSecret: () => secretsManagerFetcher()(secretId) } : {}),
});
