/**
 * Reading "Durable Execution Status Change" events: samples in the envelope
 * EventBridge delivers (source `aws.lambda`), each status, and what is
 * ignored. The task is the execution's name in its ARN; a SUCCEEDED event
 * carries no result, so its end asks for one describe.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DURABLE_STATUS_CHANGE_DETAIL_TYPE, LAMBDA_SOURCE, readDurableEvent } from '../../../shared/engines/durable/index.ts';

const FUNCTION = 'arn:aws:lambda:us-east-1:123456789012:function:review-claim:7';
const TASK = '5f0c2a8e-1b7d-4e3a-9c6f-0d1e2f3a4b5c';

function arnOf(name: string): string {
  return `${FUNCTION}/durable-execution/${name}/e2c9f0a1-3b4d-4c5e-8f6a-7b8c9d0e1f2a`;
}

/** An event as EventBridge delivers it to a rule's target. */
function sample(status: string, extra: Record<string, unknown> = {}, name = TASK): Record<string, unknown> {
  return {
    version: '0',
    id: '7f6e5d4c-3b2a-1908-f7e6-d5c4b3a29180',
    'detail-type': DURABLE_STATUS_CHANGE_DETAIL_TYPE,
    source: LAMBDA_SOURCE,
    account: '123456789012',
    time: '2026-12-01T10:15:30Z',
    region: 'us-east-1',
    resources: [arnOf(name)],
    detail: {
      durableExecutionArn: arnOf(name),
      durableExecutionName: name,
      functionArn: FUNCTION,
      status,
      startTimestamp: '2026-12-01T10:00:00Z',
      ...extra,
    },
  };
}

describe('durable status-change events', () => {
  it('SUCCEEDED ends the task and asks for the result (the event carries none)', () => {
    assert.deepEqual(readDurableEvent(sample('SUCCEEDED', { endTimestamp: '2026-12-01T10:15:29Z' })), {
      kind: 'end',
      taskId: TASK,
      functionArn: FUNCTION,
      end: { status: 'SUCCEEDED', execution: arnOf(TASK), outputOmitted: true },
    });
  });

  it('FAILED and TIMED_OUT end the task with the error named when the event gives it', () => {
    const failed = readDurableEvent(
      sample('FAILED', { error: { errorType: 'ClaimRejected', errorMessage: 'Rejected by Ana: duplicate' } }),
    );
    assert.deepEqual(failed, {
      kind: 'end',
      taskId: TASK,
      functionArn: FUNCTION,
      end: { status: 'FAILED', execution: arnOf(TASK), error: 'ClaimRejected', cause: 'Rejected by Ana: duplicate' },
    });
    const timedOut = readDurableEvent(sample('TIMED_OUT'));
    assert.deepEqual(timedOut.kind === 'end' && timedOut.end, { status: 'TIMED_OUT', execution: arnOf(TASK) });
  });

  it("STOPPED is the port's ABORTED, with the stop's error (who cancelled) kept", () => {
    const stopped = readDurableEvent(
      sample('STOPPED', { error: { ErrorType: 'mcp-tasks.Cancelled', ErrorMessage: 'Cancelled by its caller' } }),
    );
    assert.deepEqual(stopped.kind === 'end' && stopped.end, {
      status: 'ABORTED',
      execution: arnOf(TASK),
      error: 'mcp-tasks.Cancelled',
      cause: 'Cancelled by its caller',
    });
  });

  it("a local restart's execution ends its task (`<taskId>--restart-<n>`)", () => {
    const read = readDurableEvent(sample('SUCCEEDED', {}, `${TASK}--restart-2`));
    assert.equal(read.kind === 'end' && read.taskId, TASK);
  });

  it('RUNNING, other sources and malformed events change nothing, saying why', () => {
    const cases: [unknown, string][] = [
      [sample('RUNNING'), 'not-an-end'],
      [{ ...sample('SUCCEEDED'), source: 'aws.states' }, 'not-a-status-change'],
      [{ ...sample('SUCCEEDED'), 'detail-type': 'Step Functions Execution Status Change' }, 'not-a-status-change'],
      [{ ...sample('SUCCEEDED'), detail: { status: 'SUCCEEDED', durableExecutionArn: 'arn:aws:states:x' } }, 'malformed'],
      [{ ...sample('SUCCEEDED'), detail: 'x' }, 'malformed'],
      [null, 'malformed'],
    ];
    assert.deepEqual(
      cases.map(([event]) => {
        const read = readDurableEvent(event);
        return read.kind === 'ignored' ? read.reason : read.kind;
      }),
      cases.map(([, reason]) => reason),
    );
  });
});
