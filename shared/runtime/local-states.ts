/**
 * Local handlers for the Task states of a project's workflows that the local
 * Step Functions emulator cannot run itself (another service's integration,
 * the project's own Lambda functions): types only. The module that gives
 * them (`src/local-states.ts`, or the one `TASKS_LOCAL_STATES` names) is
 * loaded by the local stack alone and never enters a bundle.
 */

/**
 * Stands in for a Task state under `npm start`: it gets the state's input
 * (after `InputPath` and `Parameters`) and returns its result (before
 * `ResultSelector` and `ResultPath`). An error it throws fails the state with
 * the error's `name` as the state's error and its `message` as the cause, so
 * `Catch` and `Retry` match it. In a `.waitForTaskToken` state it gets the
 * state's `taskToken`; its result is then ignored, and the state waits for
 * `SendTaskSuccess` / `SendTaskFailure` with that token.
 */
export type LocalStateHandler = (input: unknown, context: { stateName: string; resource: string; taskToken?: string }) => Promise<unknown>;

/**
 * The default export of the local states module (`export default { … } satisfies LocalStates`):
 * handlers by a state's name or by a resource ARN (the state's name wins). A
 * Lambda function's ARN (or name, as the state's `FunctionName` gives it)
 * stands for that function: its handler gets the payload the function would
 * get, and returns what the function would. A string value is a module path,
 * from the project's root, whose `handler` export is called the same way
 * (a Lambda handler of the project's, run as is). A function's error has
 * Lambda's `{"errorType","errorMessage"}` JSON as its cause, as in AWS.
 */
export type LocalStates = Record<string, LocalStateHandler | string>;
