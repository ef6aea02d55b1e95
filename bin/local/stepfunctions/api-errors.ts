/**
 * The errors the emulator answers, by the names AWS gives them: the real
 * `@aws-sdk/client-sfn` turns each `__type` into its typed exception
 * (`ExecutionAlreadyExists`, `TaskTimedOut`, …).
 */

/** The Step Functions error names the emulator answers, and the generic AWS ones (unknown operation, unreadable body). */
export type ApiErrorName =
  | 'ExecutionAlreadyExists'
  | 'ExecutionDoesNotExist'
  | 'InvalidArn'
  | 'InvalidDefinition'
  | 'InvalidExecutionInput'
  | 'InvalidName'
  | 'InvalidOutput'
  | 'InvalidToken'
  | 'StateMachineAlreadyExists'
  | 'StateMachineDoesNotExist'
  | 'StateMachineTypeNotSupported'
  | 'TaskDoesNotExist'
  | 'TaskTimedOut'
  | 'ValidationException'
  | 'UnknownOperationException'
  | 'SerializationException'
  | 'InternalFailure';

/** An error answered to the caller: its AWS name, its message, and the HTTP status AWS sends it with. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly code: ApiErrorName,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Where each error name lives: Step Functions' own, or the AWS front's (`com.amazon.coral.service`). */
const COMMON_ERRORS: ReadonlySet<ApiErrorName> = new Set(['UnknownOperationException', 'SerializationException', 'InternalFailure']);

/** The body AWS JSON 1.0 sends for an error: its `__type` names the shape (namespace#Name), `message` says what is wrong. */
export function errorBody(error: ApiError): { __type: string; message: string } {
  const namespace = COMMON_ERRORS.has(error.code) ? 'com.amazon.coral.service' : 'com.amazonaws.sfn';
  return { __type: `${namespace}#${error.code}`, message: error.message };
}

/** The value of a required string member, or the ValidationException AWS answers for a missing one. */
export function requiredString(body: Record<string, unknown>, member: string): string {
  const value = body[member];
  if (typeof value !== 'string' || value === '') {
    throw new ApiError(
      'ValidationException',
      `1 validation error detected: Value null at '${member}' failed to satisfy constraint: Member must not be null`,
    );
  }
  return value;
}

/** The value of an optional string member (absent → undefined), refusing another type. */
export function optionalString(body: Record<string, unknown>, member: string): string | undefined {
  const value = body[member];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ApiError('SerializationException', `'${member}' must be a string`);
  return value;
}
