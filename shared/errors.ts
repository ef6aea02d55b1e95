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
