/**
 * Names and ARNs of a durable tool's executions. An execution is named after
 * its task (the durable execution name is the task id, 1–64 characters of
 * `[A-Za-z0-9_-]`), so a retried start finds the one it started; its payload
 * is the task's arguments as canonical JSON, so a retry sends identical
 * input. Durable invocations need a qualified function ARN (a version or an
 * alias), and an execution's ARN is
 * `<function ARN>:<qualifier>/durable-execution/<name>/<id>`: its id is
 * Lambda's, so it cannot be derived from the name and is found by listing.
 *
 * No AWS SDK in here.
 */
import { canonicalJson } from '../../canonical-json.ts';
import { ClientError } from '../../errors.ts';

/** A qualified function ARN: `arn:<partition>:lambda:<region>:<account>:function:<name>:<version or alias>`. */
const QUALIFIED_FUNCTION_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]{1,64}:(\$LATEST|[A-Za-z0-9_-]{1,128})$/;

/** A durable execution's ARN: the qualified function's, then `/durable-execution/<name>/<id>`. */
const EXECUTION_ARN =
  /^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]{1,64}:(?:\$LATEST(?:\.PUBLISHED)?|[A-Za-z0-9_-]{1,128}))\/durable-execution\/([A-Za-z0-9_-]{1,64})\/([A-Za-z0-9_-]+)$/;

/** The largest asynchronous invoke's payload (256 KB): a run that may outlast 15 minutes is started asynchronously. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** Whether `arn` names a function with a version or an alias (`$LATEST` included), as a durable invoke needs. */
export function isQualifiedFunctionArn(arn: string): boolean {
  return QUALIFIED_FUNCTION_ARN.test(arn);
}

/** Whether `arn` is a durable execution's ARN. */
export function isDurableExecutionArn(arn: string): boolean {
  return EXECUTION_ARN.test(arn);
}

/** The parts of a durable execution's ARN: the qualified function, the execution's name and Lambda's id; `undefined` for anything else. */
export function partsOfExecutionArn(arn: string): { functionArn: string; name: string; id: string } | undefined {
  const match = EXECUTION_ARN.exec(arn);
  return match ? { functionArn: match[1]!, name: match[2]!, id: match[3]! } : undefined;
}

/**
 * The IAM resource covering every execution of a qualified function
 * (`…:function:<name>:<qualifier>/durable-execution/*`): what the worker may
 * get, stop and answer callbacks of, and nothing wider.
 */
export function executionsResourceOf(qualifiedFunctionArn: string): string {
  if (!isQualifiedFunctionArn(qualifiedFunctionArn)) {
    throw new Error(`A durable function is invoked by a qualified ARN (a version or an alias), not ${qualifiedFunctionArn}`);
  }
  return `${qualifiedFunctionArn}/durable-execution/*`;
}

/**
 * The payload of a task's execution: its arguments as canonical JSON
 * (identical for every retry of the start).
 * @throws {@link ClientError} (-32602) when it is larger than an asynchronous invoke takes, so the task is refused before it is created
 */
export function durablePayload(args: Record<string, unknown>): string {
  const payload = canonicalJson(args);
  const bytes = Buffer.byteLength(payload);
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new ClientError(
      `The arguments are ${bytes.toLocaleString('en')} bytes as JSON; a durable function takes at most ${MAX_PAYLOAD_BYTES.toLocaleString('en')}`,
    );
  }
  return payload;
}
