/**
 * The "Durable Execution Status Change" event (source `aws.lambda`), as
 * EventBridge delivers it to the end-event consumer: what of it ends a task.
 * The event carries no result, so a SUCCEEDED end is marked `outputOmitted`
 * and its run reads the result with one `GetDurableExecution`. The task is
 * the execution's name, read from its ARN (`…/durable-execution/<name>/<id>`),
 * which every event carries. RUNNING changes nothing. STOPPED is the port's
 * `ABORTED`: the run ends the task cancelled, naming who stopped it.
 *
 * No AWS SDK in here.
 */
import type { WorkflowEnd, WorkflowEndStatus } from '../../tasks/workflows-model.ts';
import { partsOfExecutionArn } from './names.ts';

export const DURABLE_STATUS_CHANGE_DETAIL_TYPE = 'Durable Execution Status Change';
export const LAMBDA_SOURCE = 'aws.lambda';

/** A durable execution's end statuses and the port's name for each. */
const END_STATUSES: Readonly<Record<string, WorkflowEndStatus>> = {
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  TIMED_OUT: 'TIMED_OUT',
  STOPPED: 'ABORTED',
};

/** How much of an error's type and message is kept on the row. */
const MAX_ERROR_CHARS = 256;
const MAX_CAUSE_CHARS = 4096;

/** What an event says: an execution of a task ended, or why it changes nothing. */
export type DurableExecutionEvent =
  | { kind: 'end'; taskId: string; functionArn: string; end: WorkflowEnd }
  | { kind: 'ignored'; reason: 'malformed' | 'not-a-status-change' | 'not-an-end'; status?: string };

/** The port's end status of a durable execution's status, `undefined` while it runs (RUNNING, PAUSED, …). */
export function endStatusOf(status: string): WorkflowEndStatus | undefined {
  return Object.hasOwn(END_STATUSES, status) ? END_STATUSES[status] : undefined;
}

/** Reads an EventBridge event (anything else is `malformed`). */
export function readDurableEvent(event: unknown): DurableExecutionEvent {
  if (!isObject(event) || !isObject(event['detail'])) return { kind: 'ignored', reason: 'malformed' };
  if (event['source'] !== LAMBDA_SOURCE || event['detail-type'] !== DURABLE_STATUS_CHANGE_DETAIL_TYPE) {
    return { kind: 'ignored', reason: 'not-a-status-change' };
  }
  const { detail } = event;
  const arn = detail['durableExecutionArn'];
  const status = detail['status'];
  const parts = typeof arn === 'string' ? partsOfExecutionArn(arn) : undefined;
  if (parts === undefined || typeof arn !== 'string' || typeof status !== 'string') return { kind: 'ignored', reason: 'malformed' };
  const endStatus = endStatusOf(status);
  if (endStatus === undefined) return { kind: 'ignored', reason: 'not-an-end', status };
  const taskId = taskOfName(parts.name);
  if (endStatus === 'SUCCEEDED')
    return { kind: 'end', taskId, functionArn: parts.functionArn, end: { status: endStatus, execution: arn, outputOmitted: true } };
  return { kind: 'end', taskId, functionArn: parts.functionArn, end: { status: endStatus, execution: arn, ...failureOf(detail['error']) } };
}

/**
 * The error and cause of a durable execution's error object (`ErrorType`,
 * `ErrorMessage`, as `GetDurableExecution` and `StopDurableExecution` spell
 * them; an event's camel-cased `errorType`, `errorMessage` likewise), cut to fit the row.
 */
export function failureOf(error: unknown): { error?: string; cause?: string } {
  if (!isObject(error)) return {};
  const type = error['ErrorType'] ?? error['errorType'];
  const message = error['ErrorMessage'] ?? error['errorMessage'];
  return {
    ...(typeof type === 'string' && type !== '' ? { error: type.slice(0, MAX_ERROR_CHARS) } : {}),
    ...(typeof message === 'string' && message !== '' ? { cause: message.slice(0, MAX_CAUSE_CHARS) } : {}),
  };
}

/** The task an execution name belongs to: the name is the task id, or `<taskId>--restart-<n>` for a local restart. */
function taskOfName(name: string): string {
  const at = name.lastIndexOf('--restart-');
  return at > 0 && /^\d+$/.test(name.slice(at + '--restart-'.length)) ? name.slice(0, at) : name;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
