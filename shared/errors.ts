import { INVALID_PARAMS } from './wire.ts';

/**
 * The base of this project's own errors. Each subclass sets its `name`
 * explicitly (logs carry `errorName`, never the message, and a name must
 * survive minified bundles); `cause` carries the error it translates, such as
 * an AWS SDK exception inside an adapter. How an error reaches the wire is
 * decided in one place, `toProtocolError` in `shared/protocol/errors.ts`.
 */
export class TasksError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TasksError';
  }
}

/**
 * An error that is the client's to act on: its message is written for the
 * client and it carries its wire form, the JSON-RPC `code` (`-32602` unless
 * said otherwise) and `data`. The error mapper answers it as it is, so a
 * module that throws one never needs the mapper to know about it. Never put
 * another principal's data, arguments or answers in the message.
 */
export class ClientError extends TasksError {
  readonly code: number;
  readonly data: unknown;

  constructor(message: string, options: { code?: number; data?: unknown; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ClientError';
    this.code = options.code ?? INVALID_PARAMS;
    this.data = options.data;
  }
}
