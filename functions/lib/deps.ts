/**
 * The whole composition root in one import, for tests, benchmarks and the
 * local stack: the same instances the Lambda entries use, since those import
 * the modules below by path (each entry only what it needs, so each bundle
 * carries only the SDKs its function uses).
 */
export { config } from './config.ts';
export { dynamodb } from './dynamodb-client.ts';
export { log } from './log.ts';
export { queue } from './queue.ts';
export { sqs } from './sqs-client.ts';
export { store } from './store.ts';
export { tools } from './tools.ts';
