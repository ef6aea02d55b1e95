/**
 * The API operations the emulator serves: each reads its request body (AWS
 * JSON 1.0, already parsed), calls the machines, executions or tokens, and
 * shapes the answer as Step Functions does (dates in epoch seconds).
 */
import { ApiError, optionalString, requiredString } from './api-errors.ts';
import { checkExecutionArn, type Place } from './arns.ts';
import { type ExecutionRecord, redrive } from './events.ts';
import { type Executions, parsePayload } from './executions.ts';
import type { Machine, Machines } from './machines.ts';
import type { TaskTokens } from './tokens.ts';

type Body = Record<string, unknown>;

/** One operation: the request body in, the answer body out. */
type Operation = (body: Body) => Promise<object> | object;

export interface Services {
  place: Place;
  machines: Machines;
  executions: Executions;
  tokens: TaskTokens;
}

/** The operations by name (`X-Amz-Target: AWSStepFunctions.<name>`). */
export function operations({ place, machines, executions, tokens }: Services): ReadonlyMap<string, Operation> {
  const executionArnOf = (body: Body) => checkExecutionArn(place, requiredString(body, 'executionArn'));
  return new Map<string, Operation>([
    [
      'CreateStateMachine',
      (body) => {
        const machine = machines.create({
          name: requiredString(body, 'name'),
          definition: requiredString(body, 'definition'),
          roleArn: requiredString(body, 'roleArn'),
          type: optionalString(body, 'type'),
        });
        return { stateMachineArn: machine.arn, creationDate: seconds(machine.creationDate) };
      },
    ],
    ['DescribeStateMachine', (body) => describeMachine(machines.get(requiredString(body, 'stateMachineArn')))],
    [
      'StartExecution',
      async (body) => {
        const machine = machines.get(requiredString(body, 'stateMachineArn'));
        const record = await executions.start(machine, optionalString(body, 'name'), optionalString(body, 'input'));
        return { executionArn: record.executionArn, startDate: seconds(record.startDate) };
      },
    ],
    ['DescribeExecution', (body) => describeExecution(executions.describe(executionArnOf(body)))],
    [
      'StopExecution',
      async (body) => {
        const record = await executions.stop(executionArnOf(body), optionalString(body, 'error'), optionalString(body, 'cause'));
        return { stopDate: seconds(record.stopDate ?? Date.now()) };
      },
    ],
    ['ListExecutions', (body) => listExecutions(executions, machines.get(requiredString(body, 'stateMachineArn')).arn, body)],
    [
      'SendTaskSuccess',
      (body) => {
        const token = taskToken(body);
        tokens.succeed(token, parsePayload(requiredString(body, 'output'), 'InvalidOutput', 'output'));
        return {};
      },
    ],
    [
      'SendTaskFailure',
      (body) => {
        tokens.fail(taskToken(body), optionalString(body, 'error'), optionalString(body, 'cause'));
        return {};
      },
    ],
    [
      'SendTaskHeartbeat',
      (body) => {
        tokens.heartbeat(taskToken(body));
        return {};
      },
    ],
  ]);
}

function taskToken(body: Body): string {
  const token = requiredString(body, 'taskToken');
  if (token.length > 2048) {
    throw new ApiError(
      'ValidationException',
      "1 validation error detected: Value at 'taskToken' failed to satisfy constraint: Member must have length less than or equal to 2048",
    );
  }
  return token;
}

function describeMachine(machine: Machine): object {
  return {
    stateMachineArn: machine.arn,
    name: machine.name,
    status: 'ACTIVE',
    definition: machine.definition,
    roleArn: machine.roleArn,
    type: machine.type,
    creationDate: seconds(machine.creationDate),
    loggingConfiguration: { level: 'OFF', includeExecutionData: false },
    tracingConfiguration: { enabled: false },
  };
}

/** `DescribeExecution`'s answer: absent keys (not nulls) for what does not apply, as AWS answers. */
function describeExecution(record: ExecutionRecord): object {
  const { redriveStatus, redriveStatusReason } = redrive(record.status);
  return {
    ...summary(record),
    input: record.input,
    inputDetails: { included: true },
    ...(record.output === undefined ? {} : { output: record.output, outputDetails: { included: true } }),
    ...(record.error === undefined ? {} : { error: record.error }),
    ...(record.cause === undefined ? {} : { cause: record.cause }),
    redriveCount: 0,
    redriveStatus,
    ...(redriveStatusReason === undefined ? {} : { redriveStatusReason }),
  };
}

const STATUSES = new Set(['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE']);

/** `ListExecutions` of one state machine, paged by `maxResults` (default 100, at most 1000) and an opaque `nextToken`. */
function listExecutions(executions: Executions, machineArn: string, body: Body): object {
  const status = optionalString(body, 'statusFilter');
  if (status !== undefined && !STATUSES.has(status)) {
    throw new ApiError(
      'ValidationException',
      `1 validation error detected: Value '${status}' at 'statusFilter' failed to satisfy constraint`,
    );
  }
  const maxResults = typeof body['maxResults'] === 'number' && body['maxResults'] > 0 ? Math.min(body['maxResults'], 1000) : 100;
  const nextToken = optionalString(body, 'nextToken');
  const from = nextToken === undefined ? 0 : Number(Buffer.from(nextToken, 'base64url').toString('utf8'));
  if (!Number.isInteger(from) || from < 0)
    throw new ApiError('ValidationException', 'Invalid Token: the nextToken is not one this emulator gave');
  const all = executions.list(machineArn, status);
  const page = all.slice(from, from + maxResults);
  return {
    executions: page.map((record) => ({ ...summary(record), redriveCount: 0 })),
    ...(from + maxResults < all.length ? { nextToken: Buffer.from(String(from + maxResults)).toString('base64url') } : {}),
  };
}

/** What both `DescribeExecution` and `ListExecutions` say of an execution. */
function summary(record: ExecutionRecord): object {
  return {
    executionArn: record.executionArn,
    stateMachineArn: record.stateMachineArn,
    name: record.name,
    status: record.status,
    startDate: seconds(record.startDate),
    ...(record.stopDate === undefined ? {} : { stopDate: seconds(record.stopDate) }),
  };
}

/** AWS JSON 1.0 writes timestamps as epoch seconds. */
function seconds(epochMs: number): number {
  return epochMs / 1000;
}
