/**
 * The Step Functions engine, the first wing of the engine port
 * (`shared/engines/port.ts`): its adapter over `@aws-sdk/client-sfn`. Nothing
 * outside this folder imports its other files, and it imports no other
 * engine's (the layout test checks both). Only the worker's entry of a
 * deployment with Step Functions tools (`functions/lib/sfn.ts`) and the local
 * stack import it, so no other bundle carries the Step Functions client.
 */
export { SfnWorkflowEngine } from './engine.ts';
