/** The lines `npm start` prints for lifecycle events (`bin/local/events.ts`): one compact line each. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventLine, PrintedEvents } from '../../../bin/local/events.ts';
import { DETAIL_TYPES, type TaskEvent } from '../../../shared/events/task-events.ts';

const BASE = { version: 1, taskId: 't-1', tool: 'approval_gate', createdAt: '2026-12-01T10:00:00.000Z' } as const;

const question: TaskEvent = {
  detailType: DETAIL_TYPES.question,
  time: Date.parse('2026-12-01T10:00:05Z'),
  detail: {
    ...BASE,
    eventId: 't-1:question:1',
    status: 'input_required',
    openedAt: '2026-12-01T10:00:05.000Z',
    deadline: '2026-12-08T10:00:05.000Z',
    taskUrl: 'http://127.0.0.1:3000/console/tasks/t-1',
    questions: [{ key: 'approval', message: 'Approval gate' }],
  },
};
const failed: TaskEvent = {
  detailType: DETAIL_TYPES.failed,
  time: Date.parse('2026-12-01T10:00:02.310Z'),
  detail: {
    ...BASE,
    eventId: 't-1:failed',
    status: 'failed',
    endedAt: '2026-12-01T10:00:02.310Z',
    durationMs: 2310,
    errorCode: -32603,
  },
};

describe('printed lifecycle events', () => {
  it('a question: what is asked, where to answer, until when', () => {
    assert.equal(
      eventLine(question),
      'event: Task Waiting For Person approval_gate t-1: "Approval gate", answer at http://127.0.0.1:3000/console/tasks/t-1 by ' +
        '2026-12-08T10:00:05.000Z',
    );
  });

  it('an end: its status, duration and error code', () => {
    assert.equal(eventLine(failed), 'event: Task Failed approval_gate t-1: failed after 2.3 s (error -32603)');
  });

  it('prints one line per event and accepts them all', async () => {
    const lines: string[] = [];
    const refused = await new PrintedEvents((line) => void lines.push(line)).put([question, failed]);
    assert.deepEqual(refused, []);
    assert.deepEqual(lines, [`${eventLine(question)}\n`, `${eventLine(failed)}\n`]);
  });
});
