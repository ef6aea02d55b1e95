/**
 * The Step Functions emulator's Task states: task tokens (a fresh one per
 * state entered, answered, failed into a `Catch`, timed out), Lambda invokes
 * in the integration's response shape, and Map, Wait and Parallel states.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DescribeExecutionCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { asking, type EmulatorUnderTest, type Invocation, rejection, startEmulatorUnderTest } from '../support/stepfunctions-emulator.ts';

/** Each Wait state's length as asked, and waits of a hundredth of it. */
const waits: Array<{ seconds: number; stateName: string }> = [];

let t: EmulatorUnderTest;
before(async () => {
  t = await startEmulatorUnderTest({
    waitMs: (seconds, stateName) => {
      waits.push({ seconds, stateName });
      return seconds * 10;
    },
  });
});
after(() => t.close());

/** Starts an execution of `machine` and resolves to its ARN. */
async function start(machine: string, input: unknown = {}): Promise<string> {
  const started = await t.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, input: JSON.stringify(input) }));
  return started.executionArn!;
}

/** The invocations of `functionName` once there are `count` more than `before`. */
async function nextInvocations(functionName: string, before: number, count: number): Promise<Invocation[]> {
  await t.invocation(functionName, before + count);
  return t.invocations.filter((call) => call.functionName === functionName).slice(before, before + count);
}

const calls = (functionName: string) => t.invocations.filter((call) => call.functionName === functionName).length;

describe('task tokens', () => {
  it('a round trip: the token in the payload, SendTaskSuccess its output, a second answer TaskTimedOut', async () => {
    const machine = await t.machine('token-success', { StartAt: 'Ask', States: { Ask: { ...asking('question'), End: true } } });
    const before = calls('question');
    const executionArn = await start(machine, { deploy: 'v2' });
    const [asked] = await nextInvocations('question', before, 1);
    assert.match(asked!.payload.token, /^sfn-local-[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(asked!.payload.about, { deploy: 'v2' });
    assert.equal(executionArn.endsWith(`:${asked!.payload.taskId}`), true, '$$.Execution.Name is the execution’s name');
    await t.sfn.send(new SendTaskHeartbeatCommand({ taskToken: asked!.payload.token }));
    await t.sfn.send(new SendTaskSuccessCommand({ taskToken: asked!.payload.token, output: '{"approve":true}' }));
    const succeeded = await t.event(executionArn, 'SUCCEEDED');
    assert.equal(succeeded.detail.output, '{"approve":true}');
    for (const late of [
      t.sfn.send(new SendTaskSuccessCommand({ taskToken: asked!.payload.token, output: '{}' })),
      t.sfn.send(new SendTaskFailureCommand({ taskToken: asked!.payload.token, error: 'Late' })),
      t.sfn.send(new SendTaskHeartbeatCommand({ taskToken: asked!.payload.token })),
    ]) {
      assert.equal((await rejection(late)).name, 'TaskTimedOut');
    }
  });

  it('answers InvalidToken for a token it could never have given, TaskDoesNotExist for one it did not, InvalidOutput for output that is not JSON', async () => {
    assert.equal((await rejection(t.sfn.send(new SendTaskSuccessCommand({ taskToken: 'forged', output: '{}' })))).name, 'InvalidToken');
    const unknown = `sfn-local-${'A'.repeat(43)}`;
    assert.equal((await rejection(t.sfn.send(new SendTaskSuccessCommand({ taskToken: unknown, output: '{}' })))).name, 'TaskDoesNotExist');
    const machine = await t.machine('token-bad-output', { StartAt: 'Ask', States: { Ask: { ...asking('bad-output'), End: true } } });
    const before = calls('bad-output');
    const executionArn = await start(machine);
    const [asked] = await nextInvocations('bad-output', before, 1);
    const invalid = await rejection(t.sfn.send(new SendTaskSuccessCommand({ taskToken: asked!.payload.token, output: '{not json' })));
    assert.equal(invalid.name, 'InvalidOutput');
    await t.sfn.send(new SendTaskSuccessCommand({ taskToken: asked!.payload.token, output: '"fine"' }));
    assert.equal((await t.event(executionArn, 'SUCCEEDED')).detail.output, '"fine"', 'the refused answer left the token open');
  });

  it('SendTaskFailure fails the state with its error and cause, which a Catch takes', async () => {
    const machine = await t.machine('token-failure', {
      StartAt: 'Approve',
      States: {
        Approve: {
          ...asking('approver', { Catch: [{ ErrorEquals: ['Approval.Rejected'], ResultPath: '$.rejection', Next: 'Rejected' }] }),
          Next: 'Deploy',
        },
        Deploy: { Type: 'Pass', Result: 'deployed', End: true },
        Rejected: { Type: 'Pass', End: true },
      },
    });
    const before = calls('approver');
    const executionArn = await start(machine, { release: 'v3' });
    const [asked] = await nextInvocations('approver', before, 1);
    await t.sfn.send(new SendTaskFailureCommand({ taskToken: asked!.payload.token, error: 'Approval.Rejected', cause: 'not on a Friday' }));
    const succeeded = await t.event(executionArn, 'SUCCEEDED');
    assert.deepEqual(JSON.parse(succeeded.detail.output!), {
      release: 'v3',
      rejection: { Error: 'Approval.Rejected', Cause: 'not on a Friday' },
    });
  });

  it('times a state out after its TimeoutSeconds with States.Timeout, which States.TaskFailed does not catch; a late answer is TaskTimedOut', async () => {
    const machine = await t.machine('token-timeout', {
      StartAt: 'Ask',
      States: {
        Ask: {
          ...asking('slow-person', {
            TimeoutSeconds: 1,
            Catch: [
              { ErrorEquals: ['States.TaskFailed'], Next: 'Failed' },
              { ErrorEquals: ['States.Timeout'], ResultPath: '$.timeout', Next: 'TimedOut' },
            ],
          }),
          End: true,
        },
        Failed: { Type: 'Pass', Result: 'task failed', End: true },
        TimedOut: { Type: 'Pass', End: true },
      },
    });
    const before = calls('slow-person');
    const executionArn = await start(machine);
    const [asked] = await nextInvocations('slow-person', before, 1);
    const succeeded = await t.event(executionArn, 'SUCCEEDED');
    assert.equal(JSON.parse(succeeded.detail.output!).timeout.Error, 'States.Timeout');
    const late = await rejection(t.sfn.send(new SendTaskSuccessCommand({ taskToken: asked!.payload.token, output: '{}' })));
    assert.equal(late.name, 'TaskTimedOut');
  });

  it('times a state out when no heartbeat comes within HeartbeatSeconds: the execution fails with States.Timeout', async () => {
    const machine = await t.machine('token-heartbeat', {
      StartAt: 'Ask',
      States: { Ask: { ...asking('silent', { HeartbeatSeconds: 1 }), End: true } },
    });
    const executionArn = await start(machine);
    const failed = await t.event(executionArn, 'FAILED');
    assert.equal(failed.detail.error, 'States.Timeout');
    const described = await t.sfn.send(new DescribeExecutionCommand({ executionArn }));
    assert.deepEqual([described.status, described.error], ['FAILED', 'States.Timeout']);
  });

  it('gives each task-token state entered a token of its own: Map iterations and Parallel branches alike', async () => {
    const machine = await t.machine('token-distinct', {
      StartAt: 'Both',
      States: {
        Both: {
          Type: 'Parallel',
          Branches: [
            { StartAt: 'First', States: { First: { ...asking('two-questions'), End: true } } },
            {
              StartAt: 'Each',
              States: {
                Each: {
                  Type: 'Map',
                  ItemsPath: '$.regions',
                  ItemProcessor: { StartAt: 'Second', States: { Second: { ...asking('two-questions'), End: true } } },
                  End: true,
                },
              },
            },
          ],
          End: true,
        },
      },
    });
    const before = calls('two-questions');
    const executionArn = await start(machine, { regions: ['eu-west-1', 'us-east-1'] });
    const asked = await nextInvocations('two-questions', before, 3);
    const tokens = asked.map((call) => call.payload.token as string);
    assert.equal(new Set(tokens).size, 3, 'three states entered, three tokens');
    for (const [index, call] of asked.entries()) {
      await t.sfn.send(
        new SendTaskSuccessCommand({ taskToken: call.payload.token, output: JSON.stringify({ answer: index, about: call.payload.about }) }),
      );
    }
    const output = JSON.parse((await t.event(executionArn, 'SUCCEEDED')).detail.output!);
    const answered = (about: unknown) => asked.findIndex((call) => JSON.stringify(call.payload.about) === JSON.stringify(about));
    assert.deepEqual(output, [
      { answer: answered({ regions: ['eu-west-1', 'us-east-1'] }), about: { regions: ['eu-west-1', 'us-east-1'] } },
      [
        { answer: answered('eu-west-1'), about: 'eu-west-1' },
        { answer: answered('us-east-1'), about: 'us-east-1' },
      ],
    ]);
  });

  it('takes an answer that comes while the invoke is still running', async () => {
    t.functions.set('answers-at-once', async (payload) => {
      await t.sfn.send(new SendTaskSuccessCommand({ taskToken: payload.token, output: '{"early":true}' }));
      return 'returned';
    });
    const machine = await t.machine('token-early', { StartAt: 'Ask', States: { Ask: { ...asking('answers-at-once'), End: true } } });
    const executionArn = await start(machine);
    assert.equal((await t.event(executionArn, 'SUCCEEDED')).detail.output, '{"early":true}');
  });
});

describe('Lambda invokes', () => {
  it('lambda:invoke returns the function’s result in the integration’s response shape', async () => {
    t.functions.set('double', async (payload) => ({ doubled: payload.n * 2 }));
    const machine = await t.machine('invoke-shape', {
      StartAt: 'Call',
      States: {
        Call: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Parameters: { FunctionName: 'double', 'Payload.$': '$' },
          End: true,
        },
      },
    });
    const executionArn = await start(machine, { n: 21 });
    const output = JSON.parse((await t.event(executionArn, 'SUCCEEDED')).detail.output!);
    assert.deepEqual([output.Payload, output.StatusCode, output.ExecutedVersion], [{ doubled: 42 }, 200, '$LATEST']);
    assert.equal(output.SdkHttpMetadata.HttpStatusCode, 200);
    assert.equal(typeof output.SdkResponseMetadata.RequestId, 'string');
  });

  it('a function that throws fails its state with its error type and a JSON cause, which Retry and Catch see', async () => {
    let attempts = 0;
    const arn = 'arn:aws:lambda:us-east-1:000000000000:function:flaky';
    // A function ARN as the resource: invokeFunction gets that ARN.
    t.functions.set(arn, async () => {
      attempts += 1;
      const error = new Error(`attempt ${attempts} failed`);
      error.name = 'DeployError';
      throw error;
    });
    const machine = await t.machine('invoke-error', {
      StartAt: 'Call',
      States: {
        Call: {
          Type: 'Task',
          Resource: arn,
          Retry: [{ ErrorEquals: ['DeployError'], MaxAttempts: 1, IntervalSeconds: 1 }],
          Catch: [{ ErrorEquals: ['States.TaskFailed'], Next: 'Caught' }],
          End: true,
        },
        Caught: { Type: 'Pass', End: true },
      },
    });
    const executionArn = await start(machine);
    const caught = JSON.parse((await t.event(executionArn, 'SUCCEEDED')).detail.output!);
    assert.equal(caught.Error, 'DeployError');
    assert.deepEqual(JSON.parse(caught.Cause), { errorType: 'DeployError', errorMessage: 'attempt 2 failed' });
    assert.equal(attempts, 2, 'retried once');
  });
});

describe('Event invokes', () => {
  it('InvocationType Event does not wait for the function, answers 202, and logs a function that fails', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    t.functions.set('progress', async (payload) => {
      if (payload.fail) throw new Error('unreachable');
      await released;
      return 'never read';
    });
    const notify = (fail: boolean) => ({
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: { FunctionName: 'progress', InvocationType: 'Event', Payload: { fail } },
    });
    const machine = await t.machine('event-invoke', {
      StartAt: 'Tell',
      States: {
        Tell: { ...notify(false), ResultPath: '$.told', Next: 'TellFailing' },
        TellFailing: { ...notify(true), ResultPath: null, End: true },
      },
    });
    const executionArn = await start(machine);
    const output = JSON.parse((await t.event(executionArn, 'SUCCEEDED')).detail.output!);
    release();
    assert.deepEqual([output.told.StatusCode, output.told.Payload], [202, '']);
    assert.ok(t.logs.some((log) => log.event === 'sfn-invoke-failed' && log['state'] === 'TellFailing' && log['error'] === 'Error'));
  });
});

describe('Map, Wait and Parallel', () => {
  it('run with their waits as waitMs says', async () => {
    t.functions.set('deploy-region', async (payload) => `deployed to ${payload.region}`);
    const machine = await t.machine('map-wait-parallel', {
      StartAt: 'Regions',
      States: {
        Regions: {
          Type: 'Map',
          ItemsPath: '$.regions',
          ItemSelector: { 'region.$': '$$.Map.Item.Value', 'pause.$': '$.pause' },
          MaxConcurrency: 1,
          ItemProcessor: {
            StartAt: 'Settle',
            States: {
              Settle: { Type: 'Wait', SecondsPath: '$.pause', Next: 'Deploy' },
              Deploy: {
                Type: 'Task',
                Resource: 'arn:aws:states:::lambda:invoke',
                Parameters: { FunctionName: 'deploy-region', 'Payload.$': '$' },
                OutputPath: '$.Payload',
                End: true,
              },
            },
          },
          ResultPath: '$.deployed',
          Next: 'Verify',
        },
        Verify: {
          Type: 'Parallel',
          Branches: [
            {
              StartAt: 'Soak',
              States: { Soak: { Type: 'Wait', Seconds: 30, Next: 'Healthy' }, Healthy: { Type: 'Pass', Result: 'healthy', End: true } },
            },
            {
              StartAt: 'Count',
              States: { Count: { Type: 'Pass', Parameters: { 'regions.$': 'States.ArrayLength($.deployed)' }, End: true } },
            },
          ],
          End: true,
        },
      },
    });
    const executionArn = await start(machine, { regions: ['eu-west-1', 'ap-south-1'], pause: 5 });
    const output = JSON.parse((await t.event(executionArn, 'SUCCEEDED')).detail.output!);
    assert.deepEqual(output, ['healthy', { regions: 2 }]);
    assert.deepEqual(
      waits.filter((wait) => wait.stateName === 'Settle' || wait.stateName === 'Soak').sort((a, b) => a.seconds - b.seconds),
      [
        { seconds: 5, stateName: 'Settle' },
        { seconds: 5, stateName: 'Settle' },
        { seconds: 30, stateName: 'Soak' },
      ],
    );
    const deployed = t.invocations.filter((call) => call.functionName === 'deploy-region').map((call) => call.payload);
    assert.deepEqual(deployed, [
      { region: 'eu-west-1', pause: 5 },
      { region: 'ap-south-1', pause: 5 },
    ]);
  });

  it('fail the execution with States.Runtime, which no Catch takes, when a Wait is given no number', async () => {
    const machine = await t.machine('wait-not-a-number', {
      StartAt: 'Guarded',
      States: {
        Guarded: {
          Type: 'Parallel',
          Branches: [{ StartAt: 'Pause', States: { Pause: { Type: 'Wait', SecondsPath: '$.pause', End: true } } }],
          Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Caught' }],
          End: true,
        },
        Caught: { Type: 'Pass', End: true },
      },
    });
    const executionArn = await start(machine, { pause: 'soon' });
    assert.equal((await t.event(executionArn, 'FAILED')).detail.error, 'States.Runtime');
  });
});
