/**
 * The local Step Functions emulator (`bin/local/stepfunctions/`) against the
 * real `@aws-sdk/client-sfn`: the API shapes the runtime uses, the three
 * `StartExecution` cases, the status-change events, AWS-shaped errors,
 * large data left out of events, and what it does not run (JSONata,
 * variables, a Task state nothing runs) failing executions, not creation.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ListExecutionsCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { asking, type EmulatorUnderTest, rejection, startEmulatorUnderTest } from '../support/stepfunctions-emulator.ts';

const ROLE = 'arn:aws:iam::000000000000:role/local';

/** A machine that asks (a task-token state) and then answers what it was told. */
const ASKING = { StartAt: 'Ask', States: { Ask: { ...asking('ask'), End: true } } };

let t: EmulatorUnderTest;
before(async () => {
  // Waits are a hundredth of their length here.
  t = await startEmulatorUnderTest({ waitMs: (seconds) => seconds * 10 });
});
after(() => t.close());

describe('state machines', () => {
  it('creates one, answers the same one again for the same definition, and describes it', async () => {
    const definition = JSON.stringify({ StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } });
    const created = await t.sfn.send(new CreateStateMachineCommand({ name: 'described', definition, roleArn: ROLE }));
    assert.equal(created.stateMachineArn, 'arn:aws:states:us-east-1:000000000000:stateMachine:described');
    assert.ok(created.creationDate instanceof Date);
    const again = await t.sfn.send(new CreateStateMachineCommand({ name: 'described', definition, roleArn: ROLE }));
    assert.deepEqual([again.stateMachineArn, again.creationDate], [created.stateMachineArn, created.creationDate]);
    const described = await t.sfn.send(new DescribeStateMachineCommand({ stateMachineArn: created.stateMachineArn }));
    assert.deepEqual(
      { ...described, $metadata: undefined },
      {
        $metadata: undefined,
        stateMachineArn: created.stateMachineArn,
        name: 'described',
        status: 'ACTIVE',
        definition,
        roleArn: ROLE,
        type: 'STANDARD',
        creationDate: created.creationDate,
        loggingConfiguration: { level: 'OFF', includeExecutionData: false },
        tracingConfiguration: { enabled: false },
      },
    );
    const other = JSON.stringify({ StartAt: 'Other', States: { Other: { Type: 'Pass', End: true } } });
    const taken = await rejection(t.sfn.send(new CreateStateMachineCommand({ name: 'described', definition: other, roleArn: ROLE })));
    assert.equal(taken.name, 'StateMachineAlreadyExists');
  });

  it('refuses definitions it cannot run, and names, as AWS does', async () => {
    const refused = async (name: string, definition: string) =>
      (await rejection(t.sfn.send(new CreateStateMachineCommand({ name, definition, roleArn: ROLE })))).name;
    assert.equal(await refused('not-json', '{"StartAt":'), 'InvalidDefinition');
    assert.equal(
      await refused('no-state', JSON.stringify({ StartAt: 'Missing', States: { Here: { Type: 'Pass', End: true } } })),
      'InvalidDefinition',
    );
    const twice = {
      StartAt: 'Split',
      States: {
        Split: {
          Type: 'Parallel',
          Branches: [{ StartAt: 'Same', States: { Same: { Type: 'Pass', End: true } } }],
          Next: 'Same',
        },
        Same: { Type: 'Pass', End: true },
      },
    };
    assert.equal(await refused('name-twice', JSON.stringify(twice)), 'InvalidDefinition', 'handlers are found by state name');
    assert.equal(
      await refused('has space', JSON.stringify({ StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } })),
      'InvalidName',
    );
  });

  it('creates a machine using JSONata or variables, and fails each execution naming where, with no state run', async () => {
    const failedWith = async (name: string, definition: object) => {
      const machine = await t.machine(name, definition);
      const started = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, input: '{}' }));
      await t.event(started.executionArn!, 'FAILED');
      return t.sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn! }));
    };
    const jsonata = {
      QueryLanguage: 'JSONata',
      StartAt: 'Done',
      States: { Done: { Type: 'Pass', Output: '{% $states.input %}', End: true } },
    };
    const top = await failedWith('jsonata', jsonata);
    assert.equal(top.error, 'States.Runtime');
    assert.equal(
      top.cause,
      'The local Step Functions emulator cannot run this state machine: the state machine uses JSONata (QueryLanguage), which the local emulator does not run: use JSONPath locally',
    );
    const before = t.invocations.length;
    const nested = await failedWith('assign-in-catch', {
      StartAt: 'Call',
      States: {
        Call: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Parameters: { FunctionName: 'never-called', Payload: {} },
          Catch: [{ ErrorEquals: ['States.ALL'], Assign: { failed: true }, Next: 'Done' }],
          End: true,
        },
        Done: { Type: 'Pass', End: true },
      },
    });
    assert.match(nested.cause!, /a Catch of state 'Call' assigns variables \(Assign\), which the local emulator does not run$/);
    assert.equal(t.invocations.length, before, 'no state ran');
    const mapped = await failedWith('jsonata-in-map', {
      StartAt: 'Each',
      States: {
        Each: {
          Type: 'Map',
          ItemProcessor: { StartAt: 'One', States: { One: { Type: 'Pass', QueryLanguage: 'JSONata', End: true } } },
          End: true,
        },
      },
    });
    assert.match(mapped.cause!, /state 'One' uses JSONata/);
  });

  it('fails an execution at a Task state of another service, past its Catch, when nothing runs it', async () => {
    const machine = await t.machine('other-service', {
      StartAt: 'Send',
      States: {
        Send: {
          Type: 'Task',
          Resource: 'arn:aws:states:::sqs:sendMessage',
          Parameters: { QueueUrl: 'https://sqs.local/q', MessageBody: 'hi' },
          Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Caught' }],
          End: true,
        },
        Caught: { Type: 'Pass', End: true },
      },
    });
    const started = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, input: '{}' }));
    const failed = await t.event(started.executionArn!, 'FAILED');
    assert.equal(failed.detail.status, 'FAILED');
    const described = await t.sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn! }));
    assert.equal(described.error, 'States.TaskFailed');
    assert.equal(described.cause, "The state 'Send' calls arn:aws:states:::sqs:sendMessage: the local emulator has no handler for it");
  });

  it('answers StateMachineDoesNotExist for a machine never created', async () => {
    const arn = 'arn:aws:states:us-east-1:000000000000:stateMachine:never';
    assert.equal((await rejection(t.sfn.send(new DescribeStateMachineCommand({ stateMachineArn: arn })))).name, 'StateMachineDoesNotExist');
    assert.equal(
      (await rejection(t.sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: '{}' })))).name,
      'StateMachineDoesNotExist',
    );
  });
});

describe('StartExecution with a name already used', () => {
  it('answers the original while it runs with the same input, and ExecutionAlreadyExists otherwise or once it closed', async () => {
    const machine = await t.machine('three-cases', ASKING);
    const first = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'task-1', input: '{"n":1}' }));
    assert.equal(first.executionArn, 'arn:aws:states:us-east-1:000000000000:execution:three-cases:task-1');
    const retried = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'task-1', input: '{"n":1}' }));
    assert.deepEqual([retried.executionArn, retried.startDate], [first.executionArn, first.startDate]);
    const changed = await rejection(t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'task-1', input: '{"n":2}' })));
    assert.equal(changed.name, 'ExecutionAlreadyExists');

    const { payload } = await t.invocation('ask');
    assert.equal(payload.taskId, 'task-1', 'the machine reads $$.Execution.Name');
    await t.sfn.send(new SendTaskSuccessCommand({ taskToken: payload.token, output: '{"answer":42}' }));
    await t.event(first.executionArn!, 'SUCCEEDED');
    const closed = await rejection(t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'task-1', input: '{"n":1}' })));
    assert.equal(closed.name, 'ExecutionAlreadyExists');
    assert.equal(
      t.events.filter((event) => event.detail.executionArn === first.executionArn).length,
      2,
      'one start, one end: the retry sent none',
    );
  });

  it('starts one execution for two identical starts at once', async () => {
    const machine = await t.machine('concurrent-starts', ASKING);
    const send = () => t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'twice', input: '{"same":true}' }));
    const [one, two] = await Promise.all([send(), send()]);
    assert.deepEqual([one.executionArn, one.startDate], [two.executionArn, two.startDate]);
    await t.event(one.executionArn!, 'RUNNING');
    await t.sfn.send(new StopExecutionCommand({ executionArn: one.executionArn }));
    await t.event(one.executionArn!, 'ABORTED');
    assert.deepEqual(
      t.events.filter((event) => event.detail.executionArn === one.executionArn).map((event) => event.detail.status),
      ['RUNNING', 'ABORTED'],
    );
  });

  it('keeps names per machine, and names an unnamed execution itself', async () => {
    const done = { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } };
    const [a, b] = [await t.machine('per-machine-a', done), await t.machine('per-machine-b', done)];
    const onA = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: a, name: 'same-name' }));
    const onB = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: b, name: 'same-name' }));
    assert.notEqual(onA.executionArn, onB.executionArn);
    const unnamed = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: a }));
    const described = await t.sfn.send(new DescribeExecutionCommand({ executionArn: unnamed.executionArn }));
    assert.match(described.name!, /^[0-9a-f-]{36}$/);
    assert.equal(described.input, '{}', 'no input is {}');
  });

  it('refuses input that is not JSON, and names Step Functions refuses', async () => {
    const machine = await t.machine('refusing', { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } });
    const notJson = await rejection(t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, input: '{nope' })));
    assert.equal(notJson.name, 'InvalidExecutionInput');
    for (const name of ['a b', 'a/b', 'x'.repeat(81), 'tab\there']) {
      assert.equal((await rejection(t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name })))).name, 'InvalidName', name);
    }
  });
});

describe('status change events', () => {
  const endings = {
    SUCCEEDED: { StartAt: 'Done', States: { Done: { Type: 'Pass', Result: { shipped: true }, End: true } } },
    FAILED: { StartAt: 'Fail', States: { Fail: { Type: 'Fail', Error: 'Deploy.Broken', Cause: 'the canary failed' } } },
    // The machine's own TimeoutSeconds (1 s) ends it long before its wait does (a hundredth of 100 hours).
    TIMED_OUT: { TimeoutSeconds: 1, StartAt: 'Long', States: { Long: { Type: 'Wait', Seconds: 360_000, End: true } } },
  };

  for (const [status, definition] of Object.entries(endings)) {
    it(`sends RUNNING, then ${status}, shaped as EventBridge delivers them`, async () => {
      const machine = await t.machine(`ends-${status.toLowerCase()}`, definition);
      const { executionArn } = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'run', input: '{"v":1}' }));
      const ended = await t.event(executionArn!, status);
      const mine = t.events.filter((event) => event.detail.executionArn === executionArn);
      assert.deepEqual(
        mine.map((event) => event.detail.status),
        ['RUNNING', status],
      );
      const [running] = mine;
      assert.deepEqual(Object.keys(running!).sort(), [
        'account',
        'detail',
        'detail-type',
        'id',
        'region',
        'resources',
        'source',
        'time',
        'version',
      ]);
      assert.deepEqual(
        { ...running, id: undefined, time: undefined },
        {
          version: '0',
          id: undefined,
          'detail-type': 'Step Functions Execution Status Change',
          source: 'aws.states',
          account: '000000000000',
          time: undefined,
          region: 'us-east-1',
          resources: [executionArn],
          detail: {
            executionArn,
            stateMachineArn: machine,
            name: 'run',
            status: 'RUNNING',
            startDate: running!.detail.startDate,
            stopDate: null,
            input: '{"v":1}',
            inputDetails: { included: true },
            output: null,
            outputDetails: null,
            error: null,
            cause: null,
            stateMachineVersionArn: null,
            stateMachineAliasArn: null,
            redriveCount: 0,
            redriveDate: null,
            redriveStatus: 'NOT_REDRIVABLE',
            redriveStatusReason: 'Execution is RUNNING and cannot be redriven',
          },
        },
      );
      assert.match(running!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.ok(ended.detail.stopDate! >= ended.detail.startDate);
      const described = await t.sfn.send(new DescribeExecutionCommand({ executionArn }));
      assert.equal(described.status, status);
      assert.equal(described.stopDate?.getTime(), ended.detail.stopDate);
      if (status === 'SUCCEEDED') {
        assert.deepEqual([ended.detail.output, ended.detail.outputDetails], ['{"shipped":true}', { included: true }]);
        assert.equal(described.output, '{"shipped":true}');
      } else {
        assert.deepEqual([ended.detail.output, ended.detail.outputDetails], [null, null]);
        assert.equal(ended.detail.redriveStatus, 'REDRIVABLE');
      }
      if (status === 'FAILED') {
        assert.deepEqual([ended.detail.error, ended.detail.cause], ['Deploy.Broken', 'the canary failed']);
        assert.deepEqual([described.error, described.cause], ['Deploy.Broken', 'the canary failed']);
      }
    });
  }

  it('StopExecution ends a running execution ABORTED with its error and cause, once', async () => {
    const machine = await t.machine('stopped', ASKING);
    const asked = t.invocations.filter((call) => call.functionName === 'ask').length;
    const { executionArn } = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'stop-me' }));
    const { payload } = await t.invocation('ask', asked + 1);
    const stopped = await t.sfn.send(new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: 'by its caller' }));
    assert.ok(stopped.stopDate instanceof Date);
    const aborted = await t.event(executionArn!, 'ABORTED');
    assert.deepEqual([aborted.detail.error, aborted.detail.cause], ['Cancelled', 'by its caller']);
    const described = await t.sfn.send(new DescribeExecutionCommand({ executionArn }));
    assert.deepEqual([described.status, described.error, described.cause], ['ABORTED', 'Cancelled', 'by its caller']);
    const late = await rejection(t.sfn.send(new SendTaskSuccessCommand({ taskToken: payload.token, output: '{}' })));
    assert.equal(late.name, 'TaskTimedOut', 'the stopped state no longer waits');
    const again = await t.sfn.send(new StopExecutionCommand({ executionArn, error: 'Other' }));
    assert.equal(again.stopDate?.getTime(), stopped.stopDate!.getTime(), 'a second stop changes nothing');
    assert.equal(t.events.filter((event) => event.detail.executionArn === executionArn).length, 2);
  });

  it('sends no events for an Express machine, and still runs it', async () => {
    const machine = await t.machine('express', { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } }, 'EXPRESS');
    const { executionArn } = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, input: '{"e":1}' }));
    assert.match(executionArn!, /:express:express:/);
    const before = t.events.length;
    // A Standard execution started after it ends after it: its end shows the Express one had its chance to send.
    const standard = await t.machine('after-express', { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } });
    const later = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: standard }));
    await t.event(later.executionArn!, 'SUCCEEDED');
    assert.equal(t.events.slice(before).filter((event) => event.detail.executionArn === executionArn).length, 0);
    assert.equal((await t.sfn.send(new DescribeExecutionCommand({ executionArn }))).status, 'SUCCEEDED');
  });

  it('leaves input and output over 248 KB out of the event, as EventBridge does, and fails output over 256 KiB', async () => {
    const big = 'x'.repeat(250 * 1024);
    const returning = (size: number) => ({
      StartAt: 'Make',
      States: {
        Make: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Parameters: { FunctionName: 'big', Payload: { size } },
          OutputPath: '$.Payload',
          End: true,
        },
      },
    });
    t.functions.set('big', async (payload) => 'x'.repeat(payload.size));
    const machine = await t.machine('large-output', returning(250 * 1024));
    const { executionArn } = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, input: JSON.stringify({ big }) }));
    const succeeded = await t.event(executionArn!, 'SUCCEEDED');
    assert.equal('output' in succeeded.detail, false);
    assert.deepEqual(succeeded.detail.outputDetails, { included: false });
    assert.equal('input' in succeeded.detail, false);
    assert.deepEqual(succeeded.detail.inputDetails, { included: false });
    const described = await t.sfn.send(new DescribeExecutionCommand({ executionArn }));
    assert.equal(described.output, JSON.stringify(big), 'DescribeExecution has it whole');

    const tooLarge = await t.machine('too-large-output', returning(257 * 1024));
    const failing = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: tooLarge }));
    const failed = await t.event(failing.executionArn!, 'FAILED');
    assert.equal(failed.detail.error, 'States.DataLimitExceeded');
  });
});

describe('describing and listing', () => {
  it('answers ExecutionDoesNotExist and InvalidArn as AWS does', async () => {
    const missing = 'arn:aws:states:us-east-1:000000000000:execution:three-cases:never';
    assert.equal((await rejection(t.sfn.send(new DescribeExecutionCommand({ executionArn: missing })))).name, 'ExecutionDoesNotExist');
    assert.equal((await rejection(t.sfn.send(new StopExecutionCommand({ executionArn: missing })))).name, 'ExecutionDoesNotExist');
    assert.equal((await rejection(t.sfn.send(new DescribeExecutionCommand({ executionArn: 'not-an-arn' })))).name, 'InvalidArn');
  });

  it('lists a machine’s executions, newest first, by status', async () => {
    const machine = await t.machine('listed', ASKING);
    const calls = t.invocations.filter((call) => call.functionName === 'ask').length;
    const first = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'first' }));
    const { payload } = await t.invocation('ask', calls + 1);
    await t.sfn.send(new SendTaskSuccessCommand({ taskToken: payload.token, output: '{}' }));
    await t.event(first.executionArn!, 'SUCCEEDED');
    await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'second' }));
    const all = await t.sfn.send(new ListExecutionsCommand({ stateMachineArn: machine }));
    assert.deepEqual(
      all.executions?.map((execution) => [execution.name, execution.status]),
      [
        ['second', 'RUNNING'],
        ['first', 'SUCCEEDED'],
      ],
    );
    const running = await t.sfn.send(new ListExecutionsCommand({ stateMachineArn: machine, statusFilter: 'RUNNING' }));
    assert.deepEqual(
      running.executions?.map((execution) => execution.name),
      ['second'],
    );
    const paged = await t.sfn.send(new ListExecutionsCommand({ stateMachineArn: machine, maxResults: 1 }));
    const rest = await t.sfn.send(new ListExecutionsCommand({ stateMachineArn: machine, maxResults: 1, nextToken: paged.nextToken }));
    assert.deepEqual([paged.executions?.[0]?.name, rest.executions?.[0]?.name, rest.nextToken], ['second', 'first', undefined]);
  });
});

describe('malformed requests', () => {
  /** A raw request to the emulator: status and parsed body. */
  const raw = (headers: Record<string, string>, body: string): Promise<{ status: number; body: any }> =>
    new Promise((resolve, reject) => {
      const url = new URL(t.emulator.endpoint);
      const req = request({ host: url.hostname, port: url.port, method: 'POST', path: '/', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const json = { 'content-type': 'application/x-amz-json-1.0' };

  it('answers an unknown operation, a missing target and a body that is not JSON with the errors AWS sends', async () => {
    assert.deepEqual(await raw({ ...json, 'x-amz-target': 'AWSStepFunctions.MakeCoffee' }, '{}'), {
      status: 400,
      body: { __type: 'com.amazon.coral.service#UnknownOperationException', message: "Unknown operation: 'AWSStepFunctions.MakeCoffee'" },
    });
    assert.equal((await raw(json, '{}')).body.__type, 'com.amazon.coral.service#UnknownOperationException');
    const notJson = await raw({ ...json, 'x-amz-target': 'AWSStepFunctions.DescribeExecution' }, '{"executionArn":');
    assert.deepEqual([notJson.status, notJson.body.__type], [400, 'com.amazon.coral.service#SerializationException']);
    const missing = await raw({ ...json, 'x-amz-target': 'AWSStepFunctions.StartExecution' }, '{}');
    assert.deepEqual([missing.status, missing.body.__type], [400, 'com.amazonaws.sfn#ValidationException']);
  });

  it('refuses a request naming another host (a rebound DNS name) before it runs', async () => {
    const refused = await raw({ ...json, host: 'attacker.example', 'x-amz-target': 'AWSStepFunctions.ListExecutions' }, '{}');
    assert.equal(refused.status, 403);
  });
});

describe('an onEvent that fails', () => {
  it('is logged and not retried; later events still come', async () => {
    let refuse = true;
    const failing = await startEmulatorUnderTest({
      onEvent: async () => {
        if (refuse) throw new Error('the consumer is down');
      },
    });
    try {
      const machine = await failing.machine('consumer-down', ASKING);
      const { executionArn } = await failing.sfn.send(new StartExecutionCommand({ stateMachineArn: machine }));
      await failing.event(executionArn!, 'RUNNING');
      refuse = false;
      const { payload } = await failing.invocation('ask');
      await failing.sfn.send(new SendTaskSuccessCommand({ taskToken: payload.token, output: '{}' }));
      await failing.event(executionArn!, 'SUCCEEDED');
      assert.deepEqual(
        failing.logs.filter((log) => log.event === 'sfn-event-failed'),
        [{ event: 'sfn-event-failed', executionArn, status: 'RUNNING', error: 'Error' }],
      );
      assert.equal(failing.events.length, 2, 'the RUNNING event was handed over once, not again');
    } finally {
      await failing.close();
    }
  });
});
