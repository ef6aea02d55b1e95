/**
 * The Step Functions emulator's journal across lives of one data directory:
 * ended executions answer as they ended, executions that never ended are
 * lost (listed, `RUNNING`, their names still answering the original), and
 * the journal's format 1 is read as written.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DescribeExecutionCommand, SendTaskSuccessCommand, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { asking, type EmulatorUnderTest, rejection, startEmulatorUnderTest } from '../support/stepfunctions-emulator.ts';

const ASKING = { StartAt: 'Ask', States: { Ask: { ...asking('ask'), End: true } } };

const directories: string[] = [];
const running: EmulatorUnderTest[] = [];
after(async () => {
  for (const emulator of running) await emulator.stop();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'sfn-journal-'));
  directories.push(directory);
  return directory;
}

async function life(directory: string): Promise<EmulatorUnderTest> {
  const emulator = await startEmulatorUnderTest({ dataDir: directory });
  running.push(emulator);
  return emulator;
}

describe('the journal across lives', () => {
  it('keeps ended executions as they ended and lists those that never ended as lost', async () => {
    const directory = await dataDir();
    const first = await life(directory);
    const machine = await first.machine('deploy', ASKING);
    const closed = await first.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'closed', input: '{"n":1}' }));
    const { payload } = await first.invocation('ask');
    await first.sfn.send(new SendTaskSuccessCommand({ taskToken: payload.token, output: '{"done":true}' }));
    await first.event(closed.executionArn!, 'SUCCEEDED');
    const open = await first.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'open', input: '{"n":2}' }));
    const { payload: waiting } = await first.invocation('ask', 2);
    await first.stop();
    assert.deepEqual(
      first.events.map((event) => [event.detail.name, event.detail.status]),
      [
        ['closed', 'RUNNING'],
        ['closed', 'SUCCEEDED'],
        ['open', 'RUNNING'],
      ],
      'a stop of the emulator sends nothing',
    );

    const second = await life(directory);
    assert.deepEqual(second.emulator.lostExecutions(), [
      { executionArn: open.executionArn, stateMachineArn: machine, name: 'open', input: '{"n":2}', startDate: open.startDate!.getTime() },
    ]);
    const lost = await second.sfn.send(new DescribeExecutionCommand({ executionArn: open.executionArn }));
    assert.deepEqual([lost.status, lost.input, lost.startDate?.getTime()], ['RUNNING', '{"n":2}', open.startDate!.getTime()]);
    const ended = await second.sfn.send(new DescribeExecutionCommand({ executionArn: closed.executionArn }));
    assert.deepEqual([ended.status, ended.output, ended.stopDate instanceof Date], ['SUCCEEDED', '{"done":true}', true]);
    const gone = await rejection(second.sfn.send(new SendTaskSuccessCommand({ taskToken: waiting.token, output: '{}' })));
    assert.equal(gone.name, 'TaskDoesNotExist', 'an earlier life’s token is unknown here');

    // The local stack creates its machines anew at each start; executions keep their names.
    await second.machine('deploy', ASKING);
    const rejoined = await second.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'open', input: '{"n":2}' }));
    assert.deepEqual([rejoined.executionArn, rejoined.startDate?.getTime()], [open.executionArn, open.startDate!.getTime()]);
    for (const [name, input] of [
      ['open', '{"n":3}'],
      ['closed', '{"n":1}'],
    ] as const) {
      const taken = await rejection(second.sfn.send(new StartExecutionCommand({ stateMachineArn: machine, name, input })));
      assert.equal(taken.name, 'ExecutionAlreadyExists', name);
    }
    assert.equal(second.invocations.length, 0, 'nothing runs a lost execution');

    await second.sfn.send(new StopExecutionCommand({ executionArn: open.executionArn, error: 'Restarted', cause: 'lost in a restart' }));
    const aborted = await second.event(open.executionArn!, 'ABORTED');
    assert.deepEqual([aborted.detail.error, aborted.detail.cause], ['Restarted', 'lost in a restart']);
    assert.deepEqual(second.emulator.lostExecutions(), []);
    await second.stop();

    const third = await life(directory);
    assert.deepEqual(third.emulator.lostExecutions(), []);
    const stopped = await third.sfn.send(new DescribeExecutionCommand({ executionArn: open.executionArn }));
    assert.deepEqual([stopped.status, stopped.error, stopped.cause], ['ABORTED', 'Restarted', 'lost in a restart']);
  });

  it('reads format 1 as written, skips a torn last line, and goes on writing after it', async () => {
    const directory = await dataDir();
    await mkdir(join(directory, 'stepfunctions'));
    const journal = join(directory, 'stepfunctions', 'executions.jsonl');
    const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:old';
    const started = Date.now() - 60_000;
    const lines = [
      {
        v: 1,
        kind: 'started',
        executionArn: `${machine.replace('stateMachine', 'execution')}:ended`,
        stateMachineArn: machine,
        name: 'ended',
        input: '{}',
        startDate: started,
      },
      {
        v: 1,
        kind: 'started',
        executionArn: `${machine.replace('stateMachine', 'execution')}:lost`,
        stateMachineArn: machine,
        name: 'lost',
        input: '{"a":1}',
        startDate: started,
      },
      {
        v: 1,
        kind: 'ended',
        executionArn: `${machine.replace('stateMachine', 'execution')}:ended`,
        status: 'FAILED',
        stopDate: started + 1000,
        error: 'Deploy.Broken',
        cause: 'canary',
      },
      // Ninety days and more: its name is free again, and it is dropped.
      {
        v: 1,
        kind: 'started',
        executionArn: `${machine.replace('stateMachine', 'execution')}:ancient`,
        stateMachineArn: machine,
        name: 'ancient',
        input: '{}',
        startDate: started - 91 * 24 * 3600 * 1000,
      },
    ];
    await writeFile(journal, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    await appendFile(journal, '{"v":1,"kind":"started","executionArn":"arn:aws:st');

    const reader = await life(directory);
    assert.deepEqual(
      reader.emulator.lostExecutions().map((lost) => lost.name),
      ['lost'],
    );
    const failed = await reader.sfn.send(new DescribeExecutionCommand({ executionArn: lines[0]!.executionArn }));
    assert.deepEqual(
      [failed.status, failed.error, failed.cause, failed.stopDate?.getTime()],
      ['FAILED', 'Deploy.Broken', 'canary', started + 1000],
    );
    assert.equal(
      (await rejection(reader.sfn.send(new DescribeExecutionCommand({ executionArn: lines[3]!.executionArn })))).name,
      'ExecutionDoesNotExist',
    );
    assert.deepEqual(
      reader.logs.filter((log) => log.event === 'sfn-journal-line-skipped'),
      [{ event: 'sfn-journal-line-skipped', line: 5 }],
    );

    const oldMachine = await reader.machine('old', { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } });
    const fresh = await reader.sfn.send(new StartExecutionCommand({ stateMachineArn: oldMachine, name: 'fresh' }));
    await reader.event(fresh.executionArn!, 'SUCCEEDED');
    await reader.stop();
    const written = (await readFile(journal, 'utf8')).trim().split('\n');
    assert.ok(
      written.every((line) => JSON.parse(line).v === 1),
      'the torn line is gone and every line parses',
    );

    const after = await life(directory);
    assert.equal((await after.sfn.send(new DescribeExecutionCommand({ executionArn: fresh.executionArn }))).status, 'SUCCEEDED');
  });
});
