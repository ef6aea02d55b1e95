/** Lambda entry of the worker: composed once per execution environment (see `app.ts`). */
import { loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { bindWorkflows } from '../../shared/workflows/tool.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { servedTools } from '../lib/served-tools.ts';
import { sfnEngine } from '../lib/sfn.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { withDeployedSettings } from '../lib/tool-settings.ts';
import { createWorkerHandler } from './app.ts';

const config = loadConfig();
const store = dynamoDbStore(config);
const log = jsonLog();
// Callback URLs and workflow task tokens are sealed under keys derived from the stack's secret (read on first use).
const keys = config.stackSecretParameter ? purposeKeys(ssmStackSecret(config.stackSecretParameter)) : undefined;
// Fixed at build time where known (`WORKFLOWS_CONSTANT`, the toolset): a bundle without workflow tools has no Step Functions client.
const workflows =
  process.env.TASKS_RUNS_WORKFLOWS !== 'false' && process.env.TASKS_TOOLSET !== 'conformance' && keys
    ? { engine: sfnEngine(), bindings: config.workflows, store, keys, log }
    : undefined;
export const handler = createWorkerHandler({
  config,
  store,
  queue: sqsQueue(config),
  tools: bindWorkflows(withDeployedSettings(servedTools()), workflows),
  log,
  eventPublisher: eventBridgePublisher(config),
  ...(keys ? { keys } : {}),
});
