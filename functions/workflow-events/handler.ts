/** Lambda entry of the workflow-events function: composed once per execution environment (see `app.ts`). */
import { loadConfig } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { ACTION_GROUPS, dynamoDbStore } from '../lib/dynamodb.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { createWorkflowEventsHandler } from './app.ts';

const config = loadConfig();
export const handler = createWorkflowEventsHandler({
  config,
  store: dynamoDbStore(config, ACTION_GROUPS),
  queue: sqsQueue(config),
  log: jsonLog(),
});
