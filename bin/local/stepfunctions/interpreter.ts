/**
 * The ASL interpreter, `aws-local-stepfunctions` (MIT, Node 22): how the
 * emulator validates definitions with it and gets the one class of its that
 * it does not export.
 */
import { StateMachine } from 'aws-local-stepfunctions';
import { ApiError } from './api-errors.ts';
import type { Json } from './definition.ts';

/** What the emulator uses of the interpreter. */
export interface Interpreter {
  /** Makes a runnable machine of a prepared definition (already validated: not validated again). */
  machine(definition: Json): StateMachine;
  /**
   * A `States.Timeout` error as the interpreter's own Task states raise it.
   * Its class matters, not only its name: a `Catch` or `Retry` on
   * `States.TaskFailed` matches every task error except an instance of it,
   * as in AWS, where `States.TaskFailed` never matches a timeout.
   */
  timeoutError(): Error;
}

/**
 * Loads the interpreter. Its `States.Timeout` class is not exported, so it is
 * taken from one throwaway run whose only Task times out after 1 ms (an
 * unvalidated definition may give a fractional `TimeoutSeconds`).
 */
export async function loadInterpreter(): Promise<Interpreter> {
  if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
    throw new Error(
      `The Step Functions emulator needs Node 22 (this is ${process.version}): run it through the npm scripts, which use the node devDependency`,
    );
  }
  const probe = new StateMachine(
    {
      StartAt: 'Probe',
      States: { Probe: { Type: 'Task', Resource: 'arn:aws:states:::local:probe', TimeoutSeconds: 0.001, End: true } },
    },
    { validationOptions: { noValidate: true } },
  );
  const never = new Promise<Json>(() => {});
  const failure: unknown = await probe.run(null, { overrides: { taskResourceLocalHandlers: { Probe: () => never } } }).result.then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.cause : undefined),
  );
  if (!(failure instanceof Error) || failure.name !== 'States.Timeout') {
    throw new Error('aws-local-stepfunctions did not time out its probe task with States.Timeout: is it still 3.0.0?');
  }
  const TimeoutError = failure.constructor as new () => Error;
  return {
    machine: (definition) => new StateMachine(definition as never, { validationOptions: { noValidate: true } }),
    timeoutError: () => new TimeoutError(),
  };
}

/** Checks a definition against the States language (the interpreter's validator), or `InvalidDefinition` naming what is wrong. */
export function validateDefinition(definition: Json): void {
  try {
    new StateMachine(definition as never, { validationOptions: { checkArn: true, checkPaths: true } });
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/\s+/g, ' ').trim() : 'invalid';
    throw new ApiError('InvalidDefinition', `Invalid State Machine Definition: '${detail}'`);
  }
}

/**
 * A `States.Runtime` error: the execution fails with it whatever its `Catch`
 * and `Retry` say, as in AWS.
 */
export function statesRuntimeError(message: string): Error {
  return statesError('States.Runtime', message);
}

/**
 * An error named `name` that fails the execution whatever its `Catch` and
 * `Retry` say (the interpreter reads `isCatchable` and `isRetryable` off the
 * error).
 */
export function statesError(name: string, message: string): Error {
  const error = Object.assign(new Error(message), { isCatchable: false, isRetryable: false });
  error.name = name;
  return error;
}
