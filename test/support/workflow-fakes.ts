/**
 * For the unit tests of the workflow runtime: an in-memory stand-in of the
 * workflow engine port (the Step Functions adapter's own behaviour is tested
 * against the emulator), and status-change events shaped as AWS documents
 * them ("Step Functions Execution Status Change", source `aws.states`).
 */
import {
  type EngineAdapter,
  ExecutionAlreadyExistsError,
  type ExecutionDescription,
  type Failure,
  type StartedExecution,
  TaskTokenGoneError,
} from '../../shared/engines/port.ts';
import { executionArnOf, STATES_SOURCE, STATUS_CHANGE_DETAIL_TYPE } from '../../shared/engines/stepfunctions/index.ts';

export const ACCOUNT = '123456789012';
export const MACHINE = `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:deploy-release`;

interface Execution extends ExecutionDescription {
  input: string;
}

/** Every call, in order, as `[operation, argument]` (tokens included: this is a test's own engine). */
export type EngineCall = [string, string];

/** Executions in memory, with AWS's `StartExecution` rules; tokens answered are recorded, gone ones refuse. */
export class FakeWorkflowEngine implements EngineAdapter {
  readonly executions = new Map<string, Execution>();
  readonly calls: EngineCall[] = [];
  readonly answers: Array<{ token: string; output?: string; failure?: Failure }> = [];
  /** Tokens whose state no longer waits. */
  readonly goneTokens = new Set<string>();
  now = () => Date.now();

  async start(machine: string, name: string, input: string): Promise<StartedExecution> {
    this.calls.push(['start', name]);
    const executionArn = executionArnOf(machine, name);
    const existing = this.executions.get(executionArn);
    if (existing) {
      if (existing.status === 'RUNNING' && existing.input === input) return { executionArn, startDate: existing.startDate };
      throw new ExecutionAlreadyExistsError(name);
    }
    this.executions.set(executionArn, { executionArn, status: 'RUNNING', startDate: this.now(), input });
    return { executionArn, startDate: this.now() };
  }

  async describe(executionArn: string): Promise<ExecutionDescription> {
    this.calls.push(['describe', executionArn]);
    const execution = this.executions.get(executionArn);
    if (!execution) throw Object.assign(new Error('no such execution'), { name: 'ExecutionDoesNotExist' });
    const { input: _input, ...described } = execution;
    return described;
  }

  async stop(executionArn: string, failure: Failure): Promise<void> {
    this.calls.push(['stop', executionArn]);
    const execution = this.executions.get(executionArn);
    if (execution?.status === 'RUNNING') Object.assign(execution, { status: 'ABORTED', ...failure });
  }

  async answer(token: string, output: string): Promise<void> {
    this.calls.push(['answer', token]);
    if (this.goneTokens.has(token)) throw new TaskTokenGoneError('TaskTimedOut');
    this.answers.push({ token, output });
  }

  async decline(token: string, failure: Failure): Promise<void> {
    this.calls.push(['decline', token]);
    if (this.goneTokens.has(token)) throw new TaskTokenGoneError('TaskDoesNotExist');
    this.answers.push({ token, failure });
  }

  /** Ends an execution as Step Functions would (what a later describe tells). */
  end(executionArn: string, status: ExecutionDescription['status'], fields: Partial<ExecutionDescription> = {}): void {
    Object.assign(this.executions.get(executionArn)!, { status, ...fields });
  }
}

/**
 * A status-change event as EventBridge delivers it to a target (the shape the
 * AWS documentation gives, "Step Functions Execution Status Change"): input
 * and output as JSON text, with `…Details.included` false (and the value
 * null) when over 248 KB.
 */
export function statusChangeEvent(
  executionArn: string,
  status: string,
  detail: { output?: string | null; outputIncluded?: boolean; error?: string | null; cause?: string | null } = {},
): Record<string, unknown> {
  const name = executionArn.slice(executionArn.lastIndexOf(':') + 1);
  const stateMachineArn = executionArn.slice(0, executionArn.lastIndexOf(':')).replace(':execution:', ':stateMachine:');
  const ended = status !== 'RUNNING' && status !== 'PENDING_REDRIVE';
  return {
    version: '0',
    id: '315c1398-40ff-a850-213b-158f73e60175',
    'detail-type': STATUS_CHANGE_DETAIL_TYPE,
    source: STATES_SOURCE,
    account: ACCOUNT,
    time: '2026-12-01T19:42:21Z',
    region: 'us-east-1',
    resources: [executionArn],
    detail: {
      executionArn,
      stateMachineArn,
      name,
      status,
      startDate: 1_764_617_000_000,
      stopDate: ended ? 1_764_617_600_000 : null,
      input: '{"regions":["eu-west-1"],"release":"web@1.4.2"}',
      inputDetails: { included: true },
      output: detail.output ?? null,
      outputDetails: { included: detail.outputIncluded ?? true },
      redriveCount: 0,
      redriveDate: null,
      redriveStatus: status === 'SUCCEEDED' ? 'NOT_REDRIVABLE' : 'REDRIVABLE',
      redriveStatusReason: status === 'SUCCEEDED' ? 'Execution is SUCCEEDED and cannot be redriven' : null,
      error: detail.error ?? null,
      cause: detail.cause ?? null,
    },
  };
}
