/** Lambda entry of the dead-letter handler: composed once per execution environment (see `app.ts`). */
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadConfig } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { SqsMessageSource } from '../../shared/queue/sqs-drain.ts';
import { failing, steps } from '../../shared/tasks/dynamodb/index.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { createDeadLetterHandler } from './app.ts';

const config = loadConfig();
const deadLetters = config.deadLetterQueueUrl
  ? new SqsMessageSource({ client: new SQSClient({ useQueueUrlAsEndpoint: false }), queueUrl: config.deadLetterQueueUrl })
  : undefined;
export const handler = createDeadLetterHandler({
  store: dynamoDbStore(config, [failing, steps]),
  log: jsonLog(),
  eventPublisher: eventBridgePublisher(config),
  ...(deadLetters ? { deadLetters } : {}),
});
