/** Lambda entry of the sweeper: composed once per execution environment (see `app.ts`). */
import { loadConfig } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { sweeping } from '../../shared/tasks/dynamodb/index.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { createSweeperHandler } from './app.ts';

const config = loadConfig();
export const handler = createSweeperHandler({
  config,
  store: dynamoDbStore(config, [sweeping]),
  queue: sqsQueue(config),
  log: jsonLog(),
  eventPublisher: eventBridgePublisher(config),
});
