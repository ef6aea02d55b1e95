/**
 * The Lambda durable functions engine, a wing of the engine port
 * (`shared/engines/port.ts`): its adapter over `@aws-sdk/client-lambda`, the
 * reading of its "Durable Execution Status Change" events, and its names.
 * Nothing outside this folder imports its other files, and it imports no
 * other engine's (the layout test checks both). Only a worker's entry of a
 * deployment with durable tools and the local stack import the adapter, so
 * no other bundle carries the Lambda client.
 */
export { DurableEngine, DurableExecutionClosedError, splitQualifier } from './engine.ts';
export { DURABLE_STATUS_CHANGE_DETAIL_TYPE, type DurableExecutionEvent, LAMBDA_SOURCE, readDurableEvent } from './events.ts';
export {
  durablePayload,
  executionsResourceOf,
  isDurableExecutionArn,
  isQualifiedFunctionArn,
  MAX_PAYLOAD_BYTES,
  partsOfExecutionArn,
} from './names.ts';
