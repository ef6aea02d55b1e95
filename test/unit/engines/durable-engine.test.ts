/**
 * The durable functions adapter over a stubbed Lambda client (the one place
 * a stub stands in for AWS): the calls it makes, with which inputs, and how
 * the service's answers and errors become the port's. The start cases: new,
 * retried while it runs, started with another payload, and closed (one list
 * by name, then one describe settles it).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { DurableEngine, DurableExecutionClosedError } from '../../../shared/engines/durable/index.ts';
import { ExecutionAlreadyExistsError, TaskTokenGoneError } from '../../../shared/engines/port.ts';

const FUNCTION = 'arn:aws:lambda:us-east-1:123456789012:function:review-claim:7';
const TASK = 'task-1';
const ARN = `${FUNCTION}/durable-execution/${TASK}/11111111-2222-4333-8444-555555555555`;
const PAYLOAD = '{"amount":120,"claim":"C-1"}';
const STARTED = new Date('2026-12-01T10:00:00Z');

type Answer = Record<string, unknown> | Error;

/** A Lambda client whose answers are given per command, in order; it records each command's name and input. */
class StubLambda {
  readonly calls: { command: string; input: Record<string, unknown> }[] = [];
  constructor(private readonly answers: Record<string, Answer[]>) {}
  async send(command: { constructor: { name: string }; input: Record<string, unknown> }): Promise<unknown> {
    const name = command.constructor.name.replace(/Command$/, '');
    this.calls.push({ command: name, input: command.input });
    const answer = this.answers[name]?.shift();
    if (answer === undefined) throw new Error(`unexpected ${name}`);
    if (answer instanceof Error) throw answer;
    return answer;
  }
  names(): string[] {
    return this.calls.map((call) => call.command);
  }
}

function serviceError(name: string): Error {
  return Object.assign(new Error(`${name} from the service`), { name });
}

function engineOn(stub: StubLambda): DurableEngine {
  return new DurableEngine({ client: stub as unknown as LambdaClient, now: () => 5_000 });
}

function execution(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { DurableExecutionArn: ARN, DurableExecutionName: TASK, FunctionArn: FUNCTION, Status: status, StartTimestamp: STARTED, ...extra };
}

/** The answers of an invoke refused for its name (fresh for each stub: a stub consumes its answers). */
const already = () => ({ Invoke: [serviceError('DurableExecutionAlreadyStartedException')] });
const LISTED = {
  ListDurableExecutionsByFunction: [
    {
      DurableExecutions: [execution('RUNNING', { DurableExecutionName: `${TASK}-2`, DurableExecutionArn: `${ARN}-other` })],
      NextMarker: 'm',
    },
    { DurableExecutions: [execution('SUCCEEDED')] },
  ],
};

describe('DurableEngine.start', () => {
  it('new: one asynchronous invoke named after the task, with the payload as given', async () => {
    const stub = new StubLambda({ Invoke: [{ StatusCode: 202, DurableExecutionArn: ARN }] });
    assert.deepEqual(await engineOn(stub).start(FUNCTION, TASK, PAYLOAD), { executionArn: ARN, startDate: 5_000 });
    assert.equal(stub.calls.length, 1);
    const { input } = stub.calls[0]!;
    assert.deepEqual(
      { ...input, Payload: Buffer.from(input['Payload'] as Uint8Array).toString() },
      {
        FunctionName: FUNCTION,
        InvocationType: 'Event',
        DurableExecutionName: TASK,
        Payload: PAYLOAD,
      },
    );
  });

  it('retried while it runs with the same payload: Lambda gives that execution, nothing else is called', async () => {
    const stub = new StubLambda({
      Invoke: [
        { StatusCode: 202, DurableExecutionArn: ARN },
        { StatusCode: 202, DurableExecutionArn: ARN },
      ],
    });
    const engine = engineOn(stub);
    const first = await engine.start(FUNCTION, TASK, PAYLOAD);
    assert.deepEqual(await engine.start(FUNCTION, TASK, PAYLOAD), first);
    assert.deepEqual(stub.names(), ['Invoke', 'Invoke']);
  });

  it('closed: one list by name (paged, matched exactly) and one describe; the description settles the task', async () => {
    const stub = new StubLambda({
      ...already(),
      ...LISTED,
      GetDurableExecution: [execution('SUCCEEDED', { Result: '{"paid":true}', InputPayload: PAYLOAD })],
    });
    const error = await engineOn(stub)
      .start(FUNCTION, TASK, PAYLOAD)
      .catch((caught: unknown) => caught);
    assert.ok(error instanceof DurableExecutionClosedError && error instanceof ExecutionAlreadyExistsError);
    assert.deepEqual(error.described, {
      executionArn: ARN,
      status: 'SUCCEEDED',
      startDate: STARTED.getTime(),
      output: '{"paid":true}',
      input: PAYLOAD,
    });
    assert.deepEqual(stub.names(), ['Invoke', 'ListDurableExecutionsByFunction', 'ListDurableExecutionsByFunction', 'GetDurableExecution']);
    assert.deepEqual(stub.calls[1]!.input, {
      FunctionName: 'arn:aws:lambda:us-east-1:123456789012:function:review-claim',
      Qualifier: '7',
      DurableExecutionName: TASK,
    });
    assert.equal(stub.calls[2]!.input['Marker'], 'm');
    assert.deepEqual(stub.calls[3]!.input, { DurableExecutionArn: ARN, IncludeExecutionData: true });
  });

  it('running with another payload is refused; one that answered no ARN is found and kept when its payload is ours', async () => {
    const other = new StubLambda({
      ...already(),
      ListDurableExecutionsByFunction: [{ DurableExecutions: [execution('RUNNING')] }],
      GetDurableExecution: [execution('RUNNING', { InputPayload: '{"amount":999}' })],
    });
    const refused = await engineOn(other)
      .start(FUNCTION, TASK, PAYLOAD)
      .catch((caught: unknown) => caught);
    assert.ok(refused instanceof ExecutionAlreadyExistsError && !(refused instanceof DurableExecutionClosedError));
    const ours = new StubLambda({
      Invoke: [{ StatusCode: 202 }],
      ListDurableExecutionsByFunction: [{ DurableExecutions: [execution('RUNNING')] }],
      GetDurableExecution: [execution('RUNNING', { InputPayload: PAYLOAD })],
    });
    assert.deepEqual(await engineOn(ours).start(FUNCTION, TASK, PAYLOAD), { executionArn: ARN, startDate: STARTED.getTime() });
  });

  it('any other error of the invoke is rethrown as it is', async () => {
    const stub = new StubLambda({ Invoke: [serviceError('TooManyRequestsException')] });
    await assert.rejects(engineOn(stub).start(FUNCTION, TASK, PAYLOAD), { name: 'TooManyRequestsException' });
    assert.deepEqual(stub.names(), ['Invoke']);
  });
});

describe('DurableEngine.describe, stop and callbacks', () => {
  it("describes each status in the port's words: STOPPED is ABORTED, a paused one runs, errors are named", async () => {
    const stub = new StubLambda({
      GetDurableExecution: [
        execution('STOPPED', { Error: { ErrorType: 'mcp-tasks.Cancelled', ErrorMessage: 'Cancelled by Ana' } }),
        execution('PAUSED'),
        execution('TIMED_OUT', { Error: { ErrorType: 'Lambda.Timeout' } }),
        execution('FAILED', { Error: { ErrorType: 'ClaimInvalid', ErrorMessage: 'no policy' } }),
      ],
    });
    const engine = engineOn(stub);
    const described = [];
    for (let i = 0; i < 4; i++) {
      const { status, error, cause } = await engine.describe(ARN);
      described.push({ status, error, cause });
    }
    assert.deepEqual(described, [
      { status: 'ABORTED', error: 'mcp-tasks.Cancelled', cause: 'Cancelled by Ana' },
      { status: 'RUNNING', error: undefined, cause: undefined },
      { status: 'TIMED_OUT', error: 'Lambda.Timeout', cause: undefined },
      { status: 'FAILED', error: 'ClaimInvalid', cause: 'no policy' },
    ]);
  });

  it('stop: one StopDurableExecution naming who cancelled; gone or ended is left alone, a refusal while it runs is rethrown', async () => {
    const stub = new StubLambda({
      StopDurableExecution: [
        { StopTimestamp: STARTED },
        serviceError('ResourceNotFoundException'),
        serviceError('ConflictException'),
        serviceError('ConflictException'),
      ],
      GetDurableExecution: [execution('SUCCEEDED'), execution('RUNNING')],
    });
    const engine = engineOn(stub);
    const failure = { error: 'mcp-tasks.Cancelled', cause: 'Cancelled by the caller of task task-1' };
    await engine.stop(ARN, failure);
    assert.deepEqual(stub.calls[0]!.input, {
      DurableExecutionArn: ARN,
      Error: { ErrorType: 'mcp-tasks.Cancelled', ErrorMessage: 'Cancelled by the caller of task task-1' },
    });
    await engine.stop(ARN, failure);
    await engine.stop(ARN, failure);
    await assert.rejects(engine.stop(ARN, failure), { name: 'ConflictException' });
    assert.deepEqual(stub.names(), [
      'StopDurableExecution',
      'StopDurableExecution',
      'StopDurableExecution',
      'GetDurableExecution',
      'StopDurableExecution',
      'GetDurableExecution',
    ]);
  });

  it('answers by callback id: success carries the JSON, failure a named error; a callback no longer waited for is gone', async () => {
    const stub = new StubLambda({
      SendDurableExecutionCallbackSuccess: [{}, serviceError('CallbackTimeoutException')],
      SendDurableExecutionCallbackFailure: [{}, serviceError('ResourceNotFoundException'), serviceError('ServiceException')],
    });
    const engine = engineOn(stub);
    await engine.answer('cb-1', '{"approved":true}');
    assert.equal(Buffer.from(stub.calls[0]!.input['Result'] as Uint8Array).toString(), '{"approved":true}');
    await engine.decline('cb-2', { error: 'mcp-tasks.Rejected', cause: 'Rejected by Ana: duplicate' });
    assert.deepEqual(stub.calls[1]!.input, {
      CallbackId: 'cb-2',
      Error: { ErrorType: 'mcp-tasks.Rejected', ErrorMessage: 'Rejected by Ana: duplicate' },
    });
    await assert.rejects(
      engine.answer('cb-1', '{}'),
      (error: unknown) => error instanceof TaskTokenGoneError && error.reason === 'CallbackTimeoutException',
    );
    await assert.rejects(engine.decline('cb-3', { error: 'e', cause: 'c' }), TaskTokenGoneError);
    await assert.rejects(engine.decline('cb-4', { error: 'e', cause: 'c' }), { name: 'ServiceException' });
  });
});
