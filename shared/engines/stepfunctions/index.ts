/**
 * The Step Functions engine, the first wing of the engine port
 * (`shared/engines/port.ts`): its adapter over `@aws-sdk/client-sfn`
 * (`engine.ts`), its ARNs (`arns.ts`), its status-change events
 * (`events.ts`) and its declaration's ASL substitutions (`asl.ts`). Nothing
 * outside this folder imports its other files, and it imports no other
 * engine's (the layout test checks both). Only the worker's entry of a
 * deployment with Step Functions tools (`functions/lib/sfn.ts`) and the local
 * stack use the adapter: any other bundle drops it and the Step Functions
 * client (both free of side effects), keeping the SDK-free parts it reads.
 */
export { executionArnOf, executionNameOf, isExecutionArn, isMachineArn } from './arns.ts';
export { withReceiver } from './asl.ts';
export { SfnWorkflowEngine } from './engine.ts';
export { END_STATUSES, endOf, MAX_OUTPUT_ON_ROW_BYTES, readExecutionEvent, STATES_SOURCE, STATUS_CHANGE_DETAIL_TYPE } from './events.ts';
