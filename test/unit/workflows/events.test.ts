/**
 * The status-change events of executions, as AWS documents them, read into
 * what ends a task; and an end read into the task's outcome.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { restartedName } from '../../../shared/engines/names.ts';
import { executionArnOf, MAX_OUTPUT_ON_ROW_BYTES, readExecutionEvent } from '../../../shared/engines/stepfunctions/index.ts';
import { StoppedError } from '../../../shared/runtime/run-types.ts';
import { CANCELLED_ERROR, MAX_OUTPUT_TEXT_CHARS, outputText, resultOfEnd } from '../../../shared/workflows/outcome.ts';
import { MACHINE, statusChangeEvent } from '../../support/workflow-fakes.ts';

const TASK = '0b6b2a3e-8f43-4b3b-9d6c-6f2d1c7e9a10';
const EXECUTION = executionArnOf(MACHINE, TASK);
const NAMING = { workflow: 'deploy-release' };

describe('status-change events', () => {
  const cases: Array<[string, unknown, unknown]> = [
    [
      'SUCCEEDED with its output: the output, parsed',
      statusChangeEvent(EXECUTION, 'SUCCEEDED', { output: '{"verified":true}' }),
      { kind: 'end', taskId: TASK, machine: MACHINE, end: { status: 'SUCCEEDED', execution: EXECUTION, output: { verified: true } } },
    ],
    [
      'SUCCEEDED with the output left out (over 248 KB): read later',
      statusChangeEvent(EXECUTION, 'SUCCEEDED', { output: null, outputIncluded: false }),
      { kind: 'end', taskId: TASK, machine: MACHINE, end: { status: 'SUCCEEDED', execution: EXECUTION, outputOmitted: true } },
    ],
    [
      'SUCCEEDED with an output too large for the row: read later',
      statusChangeEvent(EXECUTION, 'SUCCEEDED', { output: JSON.stringify('x'.repeat(MAX_OUTPUT_ON_ROW_BYTES)) }),
      { kind: 'end', taskId: TASK, machine: MACHINE, end: { status: 'SUCCEEDED', execution: EXECUTION, outputOmitted: true } },
    ],
    [
      'FAILED: the error and the cause',
      statusChangeEvent(EXECUTION, 'FAILED', { error: 'Rejected', cause: 'not this week' }),
      {
        kind: 'end',
        taskId: TASK,
        machine: MACHINE,
        end: { status: 'FAILED', execution: EXECUTION, error: 'Rejected', cause: 'not this week' },
      },
    ],
    [
      'TIMED_OUT without a cause',
      statusChangeEvent(EXECUTION, 'TIMED_OUT', { error: 'States.Timeout' }),
      { kind: 'end', taskId: TASK, machine: MACHINE, end: { status: 'TIMED_OUT', execution: EXECUTION, error: 'States.Timeout' } },
    ],
    [
      'ABORTED by this server',
      statusChangeEvent(EXECUTION, 'ABORTED', { error: CANCELLED_ERROR, cause: 'Cancelled by the caller' }),
      {
        kind: 'end',
        taskId: TASK,
        machine: MACHINE,
        end: { status: 'ABORTED', execution: EXECUTION, error: CANCELLED_ERROR, cause: 'Cancelled by the caller' },
      },
    ],
    [
      'of a restarted execution: its task',
      statusChangeEvent(executionArnOf(MACHINE, restartedName(TASK, 2)), 'SUCCEEDED', { output: '1' }),
      {
        kind: 'end',
        taskId: TASK,
        machine: MACHINE,
        end: { status: 'SUCCEEDED', execution: executionArnOf(MACHINE, restartedName(TASK, 2)), output: 1 },
      },
    ],
    ['RUNNING changes nothing', statusChangeEvent(EXECUTION, 'RUNNING'), { kind: 'ignored', reason: 'not-an-end', status: 'RUNNING' }],
    [
      'PENDING_REDRIVE changes nothing',
      statusChangeEvent(EXECUTION, 'PENDING_REDRIVE'),
      { kind: 'ignored', reason: 'not-an-end', status: 'PENDING_REDRIVE' },
    ],
    [
      'another detail type',
      { ...statusChangeEvent(EXECUTION, 'SUCCEEDED'), 'detail-type': 'Step Functions State Machine Status Change' },
      { kind: 'ignored', reason: 'not-a-status-change' },
    ],
    [
      'another source',
      { ...statusChangeEvent(EXECUTION, 'SUCCEEDED'), source: 'aws.lambda' },
      { kind: 'ignored', reason: 'not-a-status-change' },
    ],
    [
      'an execution ARN that is none',
      (() => {
        const event = statusChangeEvent(EXECUTION, 'SUCCEEDED');
        (event['detail'] as Record<string, unknown>)['executionArn'] = 'arn:aws:lambda:us-east-1:1:function:x';
        return event;
      })(),
      { kind: 'ignored', reason: 'malformed' },
    ],
    ['no detail', { source: 'aws.states' }, { kind: 'ignored', reason: 'malformed' }],
    ['not an object', 'SUCCEEDED', { kind: 'ignored', reason: 'malformed' }],
  ];
  for (const [what, event, expected] of cases) {
    it(what, () => assert.deepEqual(readExecutionEvent(event), expected));
  }

  it('cuts a long error and cause to what the row keeps', () => {
    const read = readExecutionEvent(statusChangeEvent(EXECUTION, 'FAILED', { error: 'E'.repeat(1000), cause: 'C'.repeat(10_000) }));
    assert.equal(read.kind, 'end');
    if (read.kind !== 'end') return;
    assert.equal(read.end.error?.length, 256);
    assert.equal(read.end.cause?.length, 4096);
  });
});

describe('the end as the task outcome', () => {
  it('SUCCEEDED: the output object is structuredContent; the text its JSON', () => {
    const result = resultOfEnd({ status: 'SUCCEEDED', execution: EXECUTION, output: { verified: true } }, NAMING);
    assert.deepEqual(result, { content: [{ type: 'text', text: '{"verified":true}' }], structuredContent: { verified: true } });
  });

  it("SUCCEEDED: any other output is structuredContent's `output`; the tool's mapping writes the text", () => {
    const result = resultOfEnd(
      { status: 'SUCCEEDED', execution: EXECUTION, output: ['a', 'b'] },
      { ...NAMING, text: (output) => `${(output as string[]).length} items` },
    );
    assert.deepEqual(result, { content: [{ type: 'text', text: '2 items' }], structuredContent: { output: ['a', 'b'] } });
  });

  it('the default text cuts a long output at 2,000 characters and says where the whole is', () => {
    const text = outputText({ blob: 'x'.repeat(5000) });
    assert.equal(text.startsWith(JSON.stringify({ blob: 'x'.repeat(5000) }).slice(0, MAX_OUTPUT_TEXT_CHARS)), true);
    assert.match(text, /… \(cut at 2,000 characters; the whole output is in structuredContent\)$/);
    assert.equal(outputText({ short: 1 }), '{"short":1}');
  });

  it('FAILED and TIMED_OUT: a tool error naming the error and the cause', () => {
    const failed = resultOfEnd({ status: 'FAILED', execution: EXECUTION, error: 'Rejected', cause: 'not this week' }, NAMING);
    assert.equal(failed.isError, true);
    assert.equal((failed.content[0] as { text: string }).text, 'The workflow deploy-release failed: Rejected (not this week)');
    assert.deepEqual(failed.structuredContent, {
      status: 'FAILED',
      error: 'Rejected',
      cause: 'not this week',
      message: 'The workflow deploy-release failed: Rejected (not this week)',
    });
    // A cause that begins with the error's name is not preceded by it again: no "Rejected (Rejected)".
    const named = resultOfEnd({ status: 'FAILED', execution: EXECUTION, error: 'Rejected', cause: 'Rejected by Bob' }, NAMING);
    assert.equal((named.content[0] as { text: string }).text, 'The workflow deploy-release failed: Rejected by Bob');
    const bare = resultOfEnd({ status: 'FAILED', execution: EXECUTION, error: 'Rejected', cause: 'Rejected' }, NAMING);
    assert.equal((bare.content[0] as { text: string }).text, 'The workflow deploy-release failed: Rejected');
    const timedOut = resultOfEnd({ status: 'TIMED_OUT', execution: EXECUTION }, NAMING);
    assert.equal((timedOut.content[0] as { text: string }).text, 'The workflow deploy-release timed out');
  });

  it('ABORTED: cancelled, by its caller when this server stopped it, else stopped outside this server', () => {
    assert.throws(
      () => resultOfEnd({ status: 'ABORTED', execution: EXECUTION, error: CANCELLED_ERROR }, NAMING),
      (error) => error instanceof StoppedError && /^Cancelled by its caller/.test(error.message),
    );
    assert.throws(
      () => resultOfEnd({ status: 'ABORTED', execution: EXECUTION }, NAMING),
      (error) => error instanceof StoppedError && error.message === 'The workflow deploy-release was stopped outside this server',
    );
  });
});
