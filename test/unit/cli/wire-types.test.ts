/**
 * The CLI reads tasks through the wire's type (`shared/protocol/wire-types.ts`),
 * and what the server renders is of that type: each status's `DetailedTask`
 * and a `CreateTaskResult` type-check as one (the type checker runs on the
 * tests), and carry no member the type does not name.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { createTaskResult, detailedTask } from '../../../shared/protocol/render.ts';
import type { DetailedTask } from '../../../shared/protocol/wire-types.ts';
import { newTaskRecord } from '../../../shared/tasks/decisions.ts';
import type { TaskRecord } from '../../../shared/tasks/model.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const MEMBERS: ReadonlyArray<keyof DetailedTask> = [
  'taskId',
  'status',
  'statusMessage',
  'createdAt',
  'lastUpdatedAt',
  'ttlMs',
  'pollIntervalMs',
  'inputRequests',
  'result',
  'error',
];

describe('the wire type the CLI reads', () => {
  const working = newTaskRecord(newTask({ now: 1_000 }), storePolicy());
  const records: TaskRecord[] = [
    { ...working, statusMessage: 'Halfway' },
    { ...working, status: 'input_required', inputRequests: { approval: { method: 'elicitation/create', params: { message: 'Go?' } } } },
    { ...working, status: 'completed', result: { content: [{ type: 'text', text: 'done' }] }, statusMessage: 'Done' },
    { ...working, status: 'failed', error: { code: -32603, message: 'Internal error' } },
    { ...working, status: 'cancelled' },
  ];
  const context = { now: 2_000, config: DEFAULT_SETTINGS };

  for (const record of records) {
    it(`a ${record.status} task as tasks/get renders it`, () => {
      const rendered: DetailedTask = detailedTask(record, context);
      assert.equal(rendered.status, record.status);
      assert.deepEqual(
        Object.keys(rendered).filter((key) => !(MEMBERS as readonly string[]).includes(key)),
        [],
      );
    });
  }

  it('a CreateTaskResult carries the task fields (and its resultType)', () => {
    const { resultType, ...fields } = createTaskResult(working, context);
    const task: DetailedTask = fields;
    assert.equal(resultType, 'task');
    assert.equal(task.taskId, working.taskId);
  });
});
