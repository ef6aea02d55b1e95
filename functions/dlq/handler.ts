/** Lambda entry of the dead-letter handler: composed once per execution environment (see `app.ts`). */
import { loadConfig } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { createDeadLetterHandler } from './app.ts';

const config = loadConfig();
export const handler = createDeadLetterHandler({ store: dynamoDbStore(config), log: jsonLog() });
