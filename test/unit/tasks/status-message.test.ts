/**
 * The one rule for a task's status message (`statusMessageOf`,
 * `shared/tasks/status-message.ts`): an ended task says what its end wrote,
 * else its status's default, never a message from before the end, rows
 * ended before the rule included.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyOutcome, newTaskRecord } from '../../../shared/tasks/decisions.ts';
import type { TaskOutcome, TaskRecord } from '../../../shared/tasks/model.ts';
import { finalMessageOf, statusMessageOf } from '../../../shared/tasks/status-message.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const working = { ...newTaskRecord(newTask({ now: 1_000 }), storePolicy()), statusMessage: 'Step 3 of 5' };
const ended = (outcome: TaskOutcome, before = working.statusMessage): TaskRecord =>
  applyOutcome({ ...working, statusMessage: before }, outcome, 2_000, storePolicy().retentionMs);

describe('statusMessageOf', () => {
  it('while a task runs or waits: the last message written', () => {
    assert.equal(statusMessageOf(working), 'Step 3 of 5');
    const waiting = applyOutcome(working, { status: 'input_required', inputRequests: {}, statusMessage: 'Waiting for a person' }, 2_000, 1);
    assert.equal(statusMessageOf(waiting), 'Waiting for a person');
    assert.equal(finalMessageOf(waiting), undefined);
  });

  it('rows ended before the rule (no finalMessage) read their status default, never the message from before the end', () => {
    // As the previous release left them: the last progress (or wait, or resume) message on an ended row, unmarked.
    const rows: Array<[TaskRecord, string]> = [
      [
        { ...working, status: 'completed', result: { content: [] }, statusMessage: 'Approved; carrying out: deploy web@1.4.2' },
        'Completed',
      ],
      [{ ...working, status: 'completed', result: { content: [] }, statusMessage: 'Called back; the task goes on' }, 'Completed'],
      [
        { ...working, status: 'cancelled', statusMessage: "Waiting for a person to answer on the task's page: http://x/console/tasks/t" },
        'Cancelled',
      ],
      [
        { ...working, status: 'completed', result: { content: [], isError: true }, statusMessage: 'Step 3 of 5' },
        'Completed with a tool error',
      ],
      [
        { ...working, status: 'failed', error: { code: -32603, message: 'The build broke' }, statusMessage: 'Step 3 of 5' },
        'Failed: The build broke',
      ],
    ];
    for (const [row, expected] of rows) {
      assert.equal(statusMessageOf(row), expected, row.statusMessage);
      assert.equal(finalMessageOf(row), undefined);
    }
  });

  it('an end that writes no message leaves the one before unmarked: the default shows', () => {
    assert.equal(statusMessageOf(ended({ status: 'completed', result: { content: [] } })), 'Completed');
    assert.equal(statusMessageOf(ended({ status: 'cancelled' }, 'Waiting for a person to answer')), 'Cancelled');
    assert.equal(statusMessageOf(ended({ status: 'completed', result: { content: [] } }, undefined)), 'Completed');
  });

  it('the message written with the end is the ended task’s: a tool’s final one, a failure’s or a cancel’s reason', () => {
    const deployed = ended(
      { status: 'completed', result: { content: [] }, statusMessage: 'Deployed to 3 regions' },
      'Approved; carrying out',
    );
    assert.deepEqual(
      [statusMessageOf(deployed), finalMessageOf(deployed), deployed.finalMessage],
      ['Deployed to 3 regions', 'Deployed to 3 regions', true],
    );
    const cancelled = ended({ status: 'cancelled', statusMessage: "Cancelled at the client's request" });
    assert.equal(statusMessageOf(cancelled), "Cancelled at the client's request");
    const failed = ended({ status: 'failed', error: { code: -32603, message: 'x' }, statusMessage: 'Gave up after 5 attempts: x' });
    assert.equal(statusMessageOf(failed), 'Gave up after 5 attempts: x');
  });
});
