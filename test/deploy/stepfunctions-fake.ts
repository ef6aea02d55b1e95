/**
 * Step Functions for the deployment lane: a fake of the API calls the worker
 * makes (`StartExecution`, `DescribeExecution`, `StopExecution`,
 * `SendTaskSuccess`, `SendTaskFailure`), answering with the shapes AWS JSON
 * 1.0 gives them (dates in epoch seconds, errors as `__type` `com.amazonaws.sfn#…`),
 * and what the service does around them, played by the lane's test: a
 * task-token state entered (a fresh token, the receiver invoked with the
 * state's payload from the template's definition), an execution ended (its
 * status-change event, as EventBridge delivers it to the rule's target).
 *
 * No ASL runs here: the states are played by hand. The machines are the
 * template's (`AWS::StepFunctions::StateMachine`); an imported one's ARN is
 * known from the rule's pattern.
 */
import { randomBytes } from 'node:crypto';
import { statusChangeEvent } from '../support/workflow-fakes.ts';
import { type Json, resourcesOf } from './assembly.ts';
import { ACCOUNT, REGION } from './resolve.ts';

interface Execution {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
}

/** What the worker sent back to a task-token state. */
export interface TaskAnswer {
  execution: string;
  output?: unknown;
  error?: string;
  cause?: string;
}

const seconds = (epochMs: number) => epochMs / 1000;
const fail = (code: string, message: string) => ({ status: 400, body: { __type: `com.amazonaws.sfn#${code}`, message } });

export class StepFunctionsFake {
  readonly executions = new Map<string, Execution>();
  /** Each token minted, with its execution, and what answered it. */
  readonly tokens = new Map<string, { execution: string; answer?: TaskAnswer }>();

  constructor(readonly machines: ReadonlySet<string>) {}

  /** The resource a call is authorized on: the machine (start; a token's, for answers), or the execution. */
  resourceOf(operation: string, body: Json): string {
    if (operation === 'StartExecution') return String(body['stateMachineArn']);
    if (operation.startsWith('SendTask')) {
      const execution = this.executions.get(this.tokens.get(String(body['taskToken']))?.execution ?? '');
      return execution?.stateMachineArn ?? `unknown-token`;
    }
    return String(body['executionArn'] ?? '*');
  }

  /** Answers a Step Functions request as the service would, for the calls the functions make. */
  answer(operation: string, body: Json): { status: number; body: Json } {
    switch (operation) {
      case 'StartExecution':
        return this.#start(body);
      case 'DescribeExecution': {
        const execution = this.executions.get(String(body['executionArn']));
        if (!execution) return fail('ExecutionDoesNotExist', `Execution Does Not Exist: '${body['executionArn']}'`);
        const { startDate, stopDate, ...rest } = execution;
        return { status: 200, body: { ...rest, startDate: seconds(startDate), ...(stopDate ? { stopDate: seconds(stopDate) } : {}) } };
      }
      case 'StopExecution': {
        const execution = this.executions.get(String(body['executionArn']));
        if (!execution) return fail('ExecutionDoesNotExist', `Execution Does Not Exist: '${body['executionArn']}'`);
        if (execution.status === 'RUNNING') {
          Object.assign(execution, { status: 'ABORTED', stopDate: Date.now(), error: body['error'], cause: body['cause'] });
        }
        return { status: 200, body: { stopDate: seconds(execution.stopDate ?? Date.now()) } };
      }
      case 'SendTaskSuccess':
      case 'SendTaskFailure': {
        const minted = this.tokens.get(String(body['taskToken']));
        if (!minted) return fail('InvalidToken', 'Invalid Token');
        if (minted.answer || this.executions.get(minted.execution)?.status !== 'RUNNING')
          return fail('TaskDoesNotExist', 'Task Does Not Exist');
        minted.answer =
          operation === 'SendTaskSuccess'
            ? { execution: minted.execution, output: JSON.parse(String(body['output'])) }
            : { execution: minted.execution, error: String(body['error']), cause: String(body['cause']) };
        return { status: 200, body: {} };
      }
      default:
        return { status: 400, body: { __type: 'UnknownOperationException', message: `The lane's fake does not implement ${operation}` } };
    }
  }

  #start(body: Json): { status: number; body: Json } {
    const stateMachineArn = String(body['stateMachineArn']);
    if (!this.machines.has(stateMachineArn)) return fail('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
    const name = String(body['name']);
    const executionArn = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
    const input = String(body['input'] ?? '{}');
    const existing = this.executions.get(executionArn);
    if (existing) {
      // An open execution of that name and input is returned as it is; a closed one, or other input, is refused.
      if (existing.status === 'RUNNING' && existing.input === input)
        return { status: 200, body: { executionArn, startDate: seconds(existing.startDate) } };
      return fail('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    }
    const execution: Execution = { executionArn, stateMachineArn, name, input, status: 'RUNNING', startDate: Date.now() };
    this.executions.set(executionArn, execution);
    return { status: 200, body: { executionArn, startDate: seconds(execution.startDate) } };
  }

  /** A task-token state entered: a fresh token for the execution (as `$$.Task.Token`). */
  mintToken(executionArn: string): string {
    const token = `AQC${randomBytes(96).toString('base64url')}`;
    this.tokens.set(token, { execution: executionArn });
    return token;
  }

  /**
   * The execution ended: its status-change event, as EventBridge delivers it
   * to a target. `included: false` leaves the output out of the event (over
   * 248 KB), as AWS does: the worker then describes the execution.
   */
  end(executionArn: string, status: 'SUCCEEDED' | 'FAILED', output: unknown, included = true): Record<string, unknown> {
    const execution = this.executions.get(executionArn);
    if (!execution) throw new Error(`No execution ${executionArn} to end`);
    Object.assign(execution, { status, stopDate: Date.now(), ...(status === 'SUCCEEDED' ? { output: JSON.stringify(output) } : {}) });
    const event = statusChangeEvent(executionArn, status, {
      output: included && status === 'SUCCEEDED' ? JSON.stringify(output) : null,
      outputIncluded: included,
    });
    return { ...event, account: ACCOUNT, region: REGION };
  }
}

/** The state machines' ARNs: those the template creates (by their names) and those its rules name (imported ones). */
export function machinesOf(template: Json, resolve: (value: unknown) => unknown): Set<string> {
  const machines = new Set<string>();
  for (const [, machine] of resourcesOf(template, 'AWS::StepFunctions::StateMachine'))
    machines.add(`arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${machine['Properties']['StateMachineName']}`);
  for (const [, rule] of resourcesOf(template, 'AWS::Events::Rule')) {
    const arns = rule['Properties']['EventPattern']?.['detail']?.['stateMachineArn'] as unknown[] | undefined;
    for (const arn of arns ?? []) machines.add(String(resolve(arn)));
  }
  return machines;
}

/**
 * Which targets of the template's event rules (on the default bus) an event
 * reaches: EventBridge's matching for the pattern fields these rules use
 * (lists of exact values, one level of `detail`).
 */
export function targetsOf(template: Json, resolve: (value: unknown) => unknown, event: Json): string[] {
  const matches = (pattern: Json, value: Json): boolean =>
    Object.entries(pattern).every(([field, allowed]) =>
      Array.isArray(allowed) ? allowed.includes(value[field]) : typeof value[field] === 'object' && matches(allowed as Json, value[field]),
    );
  return resourcesOf(template, 'AWS::Events::Rule')
    .filter(([, rule]) => rule['Properties']['EventPattern'] && !rule['Properties']['EventBusName'])
    .filter(([, rule]) => matches(resolve(rule['Properties']['EventPattern']) as Json, event))
    .flatMap(([, rule]) => (rule['Properties']['Targets'] as Json[]).map((target) => String(resolve(target['Arn']))));
}
