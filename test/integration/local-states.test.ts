/**
 * Task states the local Step Functions emulator runs by a project's local
 * handlers (`TASKS_LOCAL_STATES`), on the local stack started in process as
 * a project starts it (its tools given): another service's state run by its
 * handler (by name, else by resource), a Lambda function's ARN naming a module
 * of the project's, a thrown error's name taken by `Retry` and `Catch`, a
 * `.waitForTaskToken` handler given its token, and a state without a handler
 * failing its execution (past its `Catch`) with a cause naming the state and
 * the file, while the stack itself started. A machine using JSONata fails
 * each execution, and the tool says why.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import * as z from 'zod';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { defineWorkflowTool } from '../../shared/runtime/tool.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, resultOf, rpc, type TaskView } from '../support/wire.ts';

const SETTLE_MS = 60_000;
const ACCOUNT_FUNCTION = 'arn:aws:lambda:us-east-1:123456789012:function';

/** What the handlers record, shared with them through `globalThis` (they run in this process). */
interface Recorded {
  published: Array<{ input: any; context: any }>;
  attempts: number;
  tokens: Array<{ input: any; context: any }>;
}
const RECORDED = '__localStatesTest';
const recorded = (): Recorded => (globalThis as unknown as Record<string, Recorded>)[RECORDED]!;

/** The project's local states module: written as a project writes it. */
const LOCAL_STATES = `
import type { LocalStates } from '${join(process.cwd(), 'shared/runtime/tool.ts')}';

const recorded = ((globalThis as any).${RECORDED} ??= { published: [], attempts: 0, tokens: [] });

class Flaky extends Error {
  override name = 'Flaky';
}

export default {
  Notify: async (input, context) => {
    recorded.published.push({ input, context });
    return { MessageId: 'by-name' };
  },
  'arn:aws:states:::sns:publish': async () => ({ MessageId: 'by-resource' }),
  Flaky: async () => {
    recorded.attempts += 1;
    if (recorded.attempts < 2) throw new Flaky('not yet');
    return { attempts: recorded.attempts };
  },
  Refuse: async () => {
    throw Object.assign(new Error('no such topic'), { name: 'SNS.NotFoundException' });
  },
  'arn:aws:states:::sqs:sendMessage.waitForTaskToken': async (input, context) => {
    recorded.tokens.push({ input, context });
    return { ignored: true };
  },
  '${ACCOUNT_FUNCTION}:enrich': 'ENRICH_MODULE',
  '${ACCOUNT_FUNCTION}:broken': 'BROKEN_MODULE',
} satisfies LocalStates;
`;

/** A Lambda handler of the project's, named by its function's ARN. */
const ENRICH = `
export const handler = async (event: { fail?: boolean }, context: { stateName: string; resource: string; taskToken?: string }) => {
  if (event.fail) throw Object.assign(new Error('bad input'), { name: 'EnrichFailed' });
  return {
    enriched: event,
    stateName: context.stateName,
    resource: context.resource,
  };
};
`;

const machine = (states: Record<string, unknown>, startAt: string) => ({ StartAt: startAt, States: states });

const NOTIFY = machine(
  {
    Notify: {
      Type: 'Task',
      Resource: 'arn:aws:states:::sns:publish',
      Parameters: { TopicArn: 'arn:aws:sns:us-east-1:123456789012:releases', 'Message.$': '$.message' },
      ResultPath: '$.published',
      Next: 'Enrich',
    },
    Enrich: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: { FunctionName: `${ACCOUNT_FUNCTION}:enrich`, 'Payload.$': '$' },
      ResultSelector: { 'value.$': '$.Payload' },
      OutputPath: '$.value',
      End: true,
    },
  },
  'Notify',
);

const UNHANDLED = machine(
  {
    Publish: {
      Type: 'Task',
      Resource: 'arn:aws:states:::events:putEvents',
      Parameters: { Entries: [] },
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Recovered' }],
      End: true,
    },
    Recovered: { Type: 'Pass', End: true },
  },
  'Publish',
);

const JSONATA = { QueryLanguage: 'JSONata', ...machine({ Done: { Type: 'Pass', Output: '{% $states.input %}', End: true } }, 'Done') };

describe('local handlers for Task states (a project on the local stack)', () => {
  let dir: string;
  let localStates: string;
  let stack: LocalStack;
  let sfn: SFNClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-tasks-local-states-'));
    // Paths from the project's root (this process's working directory), as a project writes them.
    const fromRoot = (file: string) => relative(process.cwd(), join(dir, file));
    await writeFile(join(dir, 'enrich.ts'), ENRICH);
    localStates = fromRoot('local-states.ts');
    await writeFile(
      join(dir, 'local-states.ts'),
      LOCAL_STATES.replace('ENRICH_MODULE', fromRoot('enrich.ts')).replace('BROKEN_MODULE', fromRoot('missing.ts')),
    );
    const tool = (name: string, definition: object) => {
      const file = join(dir, `${name}.asl.json`);
      return {
        file,
        definition,
        tool: defineWorkflowTool({
          name,
          description: name,
          inputSchema: z.object({}).passthrough(),
          workflow: { name: name.replaceAll('_', '-'), definition: file },
        }),
      };
    };
    const tools = [tool('notify_flow', NOTIFY), tool('unhandled_flow', UNHANDLED), tool('jsonata_flow', JSONATA)];
    for (const each of tools) await writeFile(each.file, JSON.stringify(each.definition));
    stack = await startLocalStack({
      port: 0,
      dataDir: join(dir, 'data'),
      tools: tools.map((each) => each.tool),
      env: { TASKS_LOCAL_STATES: localStates },
      settingsFile: join(dir, 'no-settings.json'),
      log: () => {},
      drainMs: 1000,
    });
    sfn = new SFNClient({
      endpoint: stack.stepFunctionsEndpoint!,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  });

  after(async () => {
    sfn?.destroy();
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const called = async (name: string, args: Record<string, unknown>): Promise<TaskView> => {
    const created = resultOf(await rpc(stack.url, 'tools/call', { name, arguments: args }));
    return pollUntil(stack.url, created['taskId'] as string, (task) => task.status !== 'working', SETTLE_MS, 100);
  };

  /** Creates a machine on the stack's emulator, runs it with `input`, and resolves once the execution ended. */
  let runs = 0;
  const run = async (definition: object, input: unknown = {}): Promise<DescribeExecutionCommandOutput> => {
    runs += 1;
    const created = await sfn.send(
      new CreateStateMachineCommand({
        name: `direct-${runs}`,
        definition: JSON.stringify(definition),
        roleArn: 'arn:aws:iam::000000000000:role/local',
      }),
    );
    const started = await sfn.send(new StartExecutionCommand({ stateMachineArn: created.stateMachineArn!, input: JSON.stringify(input) }));
    return ended(started.executionArn!);
  };
  const ended = (executionArn: string) =>
    waitFor(
      `the end of ${executionArn}`,
      async () => {
        const described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
        return described.status === 'RUNNING' ? undefined : described;
      },
      SETTLE_MS,
      50,
    );

  it('runs a workflow tool whose SNS state has a handler and whose Lambda state names a module of the project', async () => {
    const task = await called('notify_flow', { message: 'hello' });
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.deepEqual(task.result?.['structuredContent'], {
      enriched: { message: 'hello', published: { MessageId: 'by-name' } },
      stateName: 'Enrich',
      resource: 'arn:aws:states:::lambda:invoke',
    });
    const [published] = recorded().published;
    assert.deepEqual(
      published?.input,
      { TopicArn: 'arn:aws:sns:us-east-1:123456789012:releases', Message: 'hello' },
      'the state’s input after Parameters',
    );
    assert.deepEqual(published?.context, { stateName: 'Notify', resource: 'arn:aws:states:::sns:publish' });
  });

  it('looks a handler up by the state’s name first, then by its resource; a function ARN as the resource runs its module', async () => {
    const done = await run(
      machine(
        {
          Announce: { Type: 'Task', Resource: 'arn:aws:states:::sns:publish', ResultPath: '$.announced', Next: 'Direct' },
          Direct: { Type: 'Task', Resource: `${ACCOUNT_FUNCTION}:enrich`, InputPath: '$.announced', End: true },
        },
        'Announce',
      ),
    );
    assert.equal(done.status, 'SUCCEEDED', done.cause);
    assert.deepEqual(JSON.parse(done.output!), {
      enriched: { MessageId: 'by-resource' },
      stateName: 'Direct',
      resource: `${ACCOUNT_FUNCTION}:enrich`,
    });
  });

  it('takes a thrown error’s name as the state’s error: Retry retries it, Catch catches it with its message as the cause', async () => {
    const done = await run(
      machine(
        {
          Flaky: {
            Type: 'Task',
            Resource: 'arn:aws:states:::glue:startJobRun.sync',
            Retry: [{ ErrorEquals: ['Flaky'], IntervalSeconds: 1, MaxAttempts: 2 }],
            ResultPath: '$.flaky',
            Next: 'Refuse',
          },
          Refuse: {
            Type: 'Task',
            Resource: 'arn:aws:states:::sns:publish',
            Catch: [{ ErrorEquals: ['SNS.NotFoundException'], ResultPath: '$.refused', Next: 'Caught' }],
            End: true,
          },
          Caught: { Type: 'Pass', End: true },
        },
        'Flaky',
      ),
    );
    assert.equal(done.status, 'SUCCEEDED', done.cause);
    assert.deepEqual(JSON.parse(done.output!), {
      flaky: { attempts: 2 },
      refused: { Error: 'SNS.NotFoundException', Cause: 'no such topic' },
    });
    assert.equal(recorded().attempts, 2, 'one failed attempt, one retry');
  });

  it('fails a Lambda state whose module throws as a function fails: its name the error, Lambda’s JSON the cause', async () => {
    const done = await run(
      machine(
        {
          Enrich: {
            Type: 'Task',
            Resource: 'arn:aws:states:::lambda:invoke',
            Parameters: { FunctionName: `${ACCOUNT_FUNCTION}:enrich`, Payload: { fail: true } },
            Catch: [{ ErrorEquals: ['EnrichFailed'], ResultPath: '$.error', Next: 'Caught' }],
            End: true,
          },
          Caught: { Type: 'Pass', End: true },
        },
        'Enrich',
      ),
    );
    assert.equal(done.status, 'SUCCEEDED', done.cause);
    assert.deepEqual(JSON.parse(done.output!), {
      error: { Error: 'EnrichFailed', Cause: JSON.stringify({ errorType: 'EnrichFailed', errorMessage: 'bad input' }) },
    });
  });

  it('gives a .waitForTaskToken handler the state’s token, then waits for its answer', async () => {
    const created = await sfn.send(
      new CreateStateMachineCommand({
        name: 'direct-token',
        roleArn: 'arn:aws:iam::000000000000:role/local',
        definition: JSON.stringify(
          machine(
            {
              Queue: {
                Type: 'Task',
                Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
                Parameters: { QueueUrl: 'https://sqs.local/jobs', MessageBody: { 'token.$': '$$.Task.Token', 'job.$': '$.job' } },
                End: true,
              },
            },
            'Queue',
          ),
        ),
      }),
    );
    const started = await sfn.send(new StartExecutionCommand({ stateMachineArn: created.stateMachineArn!, input: '{"job":"j-1"}' }));
    const asked = await waitFor('the handler to be called', () => recorded().tokens[0], SETTLE_MS, 50);
    assert.match(asked.context.taskToken, /^sfn-local-[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(asked.input, { QueueUrl: 'https://sqs.local/jobs', MessageBody: { token: asked.context.taskToken, job: 'j-1' } });
    assert.equal(asked.context.stateName, 'Queue');
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn! }));
    assert.equal(described.status, 'RUNNING', 'the handler’s return does not end the state');
    await sfn.send(new SendTaskSuccessCommand({ taskToken: asked.context.taskToken, output: '{"done":"j-1"}' }));
    const done = await ended(started.executionArn!);
    assert.equal(done.status, 'SUCCEEDED', done.cause);
    assert.equal(done.output, '{"done":"j-1"}');
  });

  it('fails the execution at a state without a handler, past its Catch, naming the state and the file; the tool says so', async () => {
    const task = await called('unhandled_flow', {});
    const text = JSON.stringify(task.result ?? task.error);
    assert.match(text, /States\.TaskFailed/);
    assert.ok(text.includes(`No local handler runs the state 'Publish' (arn:aws:states:::events:putEvents)`), text);
    assert.ok(text.includes(`add one to ${localStates}`), text);
    const done = await run(UNHANDLED);
    assert.equal(done.status, 'FAILED');
    assert.equal(done.error, 'States.TaskFailed');
    assert.match(
      done.cause!,
      /^No local handler runs the state 'Publish' .*: add one to .*local-states\.ts, keyed by the state's name or its resource$/,
    );
  });

  it('fails the execution at a Lambda state whose module does not load, naming the key and the module', async () => {
    const done = await run(machine({ Broken: { Type: 'Task', Resource: `${ACCOUNT_FUNCTION}:broken`, End: true } }, 'Broken'));
    assert.equal(done.status, 'FAILED');
    assert.equal(done.error, 'States.TaskFailed');
    assert.ok(done.cause?.startsWith(`${ACCOUNT_FUNCTION}:broken in ${localStates}: the module `), done.cause);
    assert.ok(done.cause?.includes('missing.ts failed to load'), done.cause);
  });

  it('stops the start for a workflow file that is missing, naming the tool and the file', async () => {
    const missing = join(dir, 'missing.asl.json');
    const broken = defineWorkflowTool({
      name: 'broken_flow',
      description: 'broken',
      inputSchema: z.object({}),
      workflow: { name: 'broken-flow', definition: missing },
    });
    await assert.rejects(
      startLocalStack({ port: 0, dataDir: join(dir, 'broken-data'), tools: [broken], env: {}, log: () => {} }),
      (error: Error) => error.message.startsWith(`The workflow of broken_flow (${missing}): ENOENT`),
    );
  });

  it('fails each execution of a machine using JSONata, and the tool names it', async () => {
    const task = await called('jsonata_flow', {});
    const text = JSON.stringify(task.result ?? task.error);
    assert.match(text, /States\.Runtime/);
    assert.ok(text.includes('the state machine uses JSONata (QueryLanguage), which the local emulator does not run'), text);
  });
});
