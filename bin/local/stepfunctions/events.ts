/**
 * "Step Functions Execution Status Change" events, shaped as EventBridge
 * delivers them to a rule's target, and the execution records they describe.
 */
import { randomUUID } from 'node:crypto';
import type { Place } from './arns.ts';

/** An execution's status, as `DescribeExecution` and the events name it. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** What the emulator knows of an execution (and keeps in its journal). */
export interface ExecutionRecord {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  /** The input as given to `StartExecution` (JSON text). */
  input: string;
  /** Epoch milliseconds. */
  startDate: number;
  status: ExecutionStatus;
  stopDate?: number;
  /** The output (JSON text), when it succeeded. */
  output?: string;
  error?: string;
  cause?: string;
}

/** An execution status change event, as a rule's target receives it from the default bus. */
export interface ExecutionStatusChangeEvent {
  version: '0';
  id: string;
  'detail-type': 'Step Functions Execution Status Change';
  source: 'aws.states';
  account: string;
  /** ISO 8601, to the second, as EventBridge writes it. */
  time: string;
  region: string;
  resources: [string];
  detail: {
    executionArn: string;
    stateMachineArn: string;
    name: string;
    status: ExecutionStatus;
    /** Epoch milliseconds. */
    startDate: number;
    stopDate: number | null;
    /** Left out (and `inputDetails.included` false) when over {@link EVENT_DATA_LIMIT_BYTES}. */
    input?: string;
    inputDetails: { included: boolean };
    /** The output of a SUCCEEDED execution, else null; left out (and `outputDetails.included` false) when too large. */
    output?: string | null;
    outputDetails: { included: boolean } | null;
    error: string | null;
    cause: string | null;
    stateMachineVersionArn: null;
    stateMachineAliasArn: null;
    redriveCount: number;
    redriveDate: null;
    redriveStatus: RedriveStatus;
    redriveStatusReason: string | null;
  };
}

type RedriveStatus = 'REDRIVABLE' | 'NOT_REDRIVABLE';

/** How large an input or output may be and still ride in an event (EventBridge's 256 KB less the envelope): 248 KB. */
const EVENT_DATA_LIMIT_BYTES = 248 * 1024;

/** The event for `record`'s current status. */
export function statusChangeEvent(record: ExecutionRecord, place: Place): ExecutionStatusChangeEvent {
  const input = fits(record.input) ? { input: record.input, inputDetails: { included: true } } : { inputDetails: { included: false } };
  const output =
    record.status !== 'SUCCEEDED'
      ? { output: null, outputDetails: null }
      : fits(record.output ?? 'null')
        ? { output: record.output ?? 'null', outputDetails: { included: true } }
        : { outputDetails: { included: false } };
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    account: place.account,
    time: new Date(record.stopDate ?? record.startDate).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: place.region,
    resources: [record.executionArn],
    detail: {
      executionArn: record.executionArn,
      stateMachineArn: record.stateMachineArn,
      name: record.name,
      status: record.status,
      startDate: record.startDate,
      stopDate: record.stopDate ?? null,
      ...input,
      ...output,
      error: record.error ?? null,
      cause: record.cause ?? null,
      stateMachineVersionArn: null,
      stateMachineAliasArn: null,
      redriveCount: 0,
      redriveDate: null,
      ...redrive(record.status),
      redriveStatusReason: redrive(record.status).redriveStatusReason ?? null,
    },
  };
}

/**
 * The redrive status AWS reports: an execution that failed, timed out or was
 * aborted can be redriven (for 14 days); a running or succeeded one cannot.
 * The emulator itself does not redrive.
 */
export function redrive(status: ExecutionStatus): { redriveStatus: RedriveStatus; redriveStatusReason?: string } {
  if (status === 'RUNNING') return { redriveStatus: 'NOT_REDRIVABLE', redriveStatusReason: 'Execution is RUNNING and cannot be redriven' };
  if (status === 'SUCCEEDED')
    return { redriveStatus: 'NOT_REDRIVABLE', redriveStatusReason: 'Execution is SUCCEEDED and cannot be redriven' };
  return { redriveStatus: 'REDRIVABLE' };
}

function fits(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') <= EVENT_DATA_LIMIT_BYTES;
}
