/**
 * The "Step Functions Execution Status Change" event (source `aws.states`),
 * as EventBridge delivers it to the workflow-events function: what of it
 * ends a task. Standard workflows send one per status change, best effort;
 * RUNNING and PENDING_REDRIVE change nothing, and input and output ride in
 * the event only up to 248 KB (`inputDetails`/`outputDetails.included`).
 *
 * No AWS SDK in here: the workflow-events function reads events with it.
 */
import type { WorkflowEnd, WorkflowEndStatus } from '../../tasks/workflows-model.ts';
import { taskOfExecution } from '../names.ts';
import { isExecutionArn } from './arns.ts';

export const STATUS_CHANGE_DETAIL_TYPE = 'Step Functions Execution Status Change';
export const STATES_SOURCE = 'aws.states';

/** The statuses that end an execution. */
export const END_STATUSES: readonly WorkflowEndStatus[] = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'];

/** The largest output kept on the row with the end (JSON text); a larger one is read with one `DescribeExecution` when the task resumes. */
export const MAX_OUTPUT_ON_ROW_BYTES = 32 * 1024;

/** How much of an error and of a cause is kept. */
const MAX_ERROR_CHARS = 256;
const MAX_CAUSE_CHARS = 4096;

/** What an event says: an execution of a task ended, or why it changes nothing. */
export type ExecutionEvent =
  | { kind: 'end'; taskId: string; machine: string; end: WorkflowEnd }
  | { kind: 'ignored'; reason: 'malformed' | 'not-a-status-change' | 'not-an-end'; status?: string };

/** Reads an EventBridge event (anything else is `malformed`). */
export function readExecutionEvent(event: unknown): ExecutionEvent {
  if (!isObject(event) || !isObject(event['detail'])) return { kind: 'ignored', reason: 'malformed' };
  if (event['source'] !== STATES_SOURCE || event['detail-type'] !== STATUS_CHANGE_DETAIL_TYPE) {
    return { kind: 'ignored', reason: 'not-a-status-change' };
  }
  const detail = event['detail'];
  const { executionArn, stateMachineArn, name, status } = detail;
  if (typeof executionArn !== 'string' || !isExecutionArn(executionArn) || typeof name !== 'string' || typeof status !== 'string') {
    return { kind: 'ignored', reason: 'malformed' };
  }
  if (!END_STATUSES.includes(status as WorkflowEndStatus)) return { kind: 'ignored', reason: 'not-an-end', status };
  const machine = typeof stateMachineArn === 'string' ? stateMachineArn : '';
  return { kind: 'end', taskId: taskOfExecution(name).taskId, machine, end: endOf(executionArn, status as WorkflowEndStatus, detail) };
}

/** An execution's end from its description or its event's detail (`output` as the JSON text Step Functions gives). */
export function endOf(
  execution: string,
  status: WorkflowEndStatus,
  detail: { output?: unknown; outputDetails?: unknown; error?: unknown; cause?: unknown },
): WorkflowEnd {
  if (status === 'SUCCEEDED') {
    const included = !isObject(detail.outputDetails) || detail.outputDetails['included'] !== false;
    const text = typeof detail.output === 'string' ? detail.output : undefined;
    const output = included && text !== undefined && Buffer.byteLength(text) <= MAX_OUTPUT_ON_ROW_BYTES ? parsed(text) : undefined;
    return output === undefined ? { status, execution, outputOmitted: true } : { status, execution, output: output.value };
  }
  return {
    status,
    execution,
    ...(typeof detail.error === 'string' && detail.error !== '' ? { error: detail.error.slice(0, MAX_ERROR_CHARS) } : {}),
    ...(typeof detail.cause === 'string' && detail.cause !== '' ? { cause: detail.cause.slice(0, MAX_CAUSE_CHARS) } : {}),
  };
}

function parsed(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined; // not JSON (never from Step Functions): read it with DescribeExecution instead
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
