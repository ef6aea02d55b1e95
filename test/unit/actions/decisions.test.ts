/**
 * The task actions' decisions on questions for a person: the owner's in-band
 * answer names them by their token's subject, a page's decision by the name
 * the page knows, and each is logged with who decided, never with the answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { principalFor } from '../../../shared/auth/principal.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { DecisionRefusedError } from '../../../shared/tasks/approvals-model.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { ANSWERED_BY_META, FOUR_EYES_META, type InputRequest } from '../../../shared/tasks/model.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const NOW = 1_000_000;
const OWNER = principalFor('https://idp.example.com', 'alice');
const question = (fourEyes = false): InputRequest => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Approve?',
    requestedSchema: { type: 'object', properties: {} },
    _meta: { [ANSWERED_BY_META]: 'person', ...(fourEyes ? { [FOUR_EYES_META]: true } : {}) },
  },
});

function setup() {
  const store = new InMemoryTaskStore(storePolicy());
  const queue = new InMemoryTaskQueue();
  const lines: Array<Record<string, unknown>> = [];
  const actions = new TaskActions({ store, queue, log: (line) => void lines.push(line), now: () => NOW });
  const waiting = async (taskId: string, fourEyes = false) => {
    await store.create(newTask({ taskId, owner: OWNER, now: NOW }));
    const claimed = await store.claim(taskId, 'w', NOW);
    assert.ok(claimed);
    await store.finish(claimed, 'w', { status: 'input_required', inputRequests: { approval: question(fourEyes) } }, NOW);
  };
  return { store, queue, lines, actions, waiting };
}

const SECRET_COMMENT = 'a comment nobody logs';

describe('decisions through the task actions', () => {
  it("the owner's in-band answer is their decision, named by their subject, logged without the answer, and resumes the task", async () => {
    const { store, queue, lines, actions, waiting } = setup();
    await waiting('t1');
    const result = await actions.answer('t1', OWNER, { approval: { action: 'accept', content: { approve: true, c: SECRET_COMMENT } } });
    assert.deepEqual(result, { accepted: ['approval'], resumed: true, decided: ['approval'] });
    assert.deepEqual((await store.get('t1', OWNER, NOW))?.decisions, {
      approval: { by: OWNER, name: 'alice', as: 'owner', via: 'client', at: NOW },
    });
    assert.deepEqual(
      queue.sent.map((message) => message.taskId),
      ['t1'],
    );
    const decided = lines.find((line) => line['event'] === 'question-decided');
    assert.deepEqual(decided, { event: 'question-decided', taskId: 't1', by: OWNER, via: 'client', keys: ['approval'], resumed: true });
    assert.ok(!JSON.stringify(lines).includes(SECRET_COMMENT));
  });

  it('a four-eyes question: refused to its owner (logged as such), decided by an approver on the page', async () => {
    const { store, lines, actions, waiting } = setup();
    await waiting('t2', true);
    await assert.rejects(actions.answer('t2', OWNER, { approval: { action: 'accept', content: {} } }), DecisionRefusedError);
    assert.deepEqual(
      lines.find((line) => line['event'] === 'decision-refused'),
      { event: 'decision-refused', taskId: 't2', by: OWNER, reason: 'four-eyes', keys: 1 },
    );
    const approver = principalFor('https://idp.example.com', 'ada');
    await actions.decide(
      't2',
      { principal: approver, name: 'ada@example.com', approver: true },
      { approval: { action: 'accept', content: {} } },
    );
    assert.equal((await store.get('t2', OWNER, NOW))?.decisions?.['approval']?.name, 'ada@example.com');
    assert.equal(lines.find((line) => line['event'] === 'question-decided')?.['via'], 'page');
    assert.equal(await actions.readForApprover('t2'), undefined, 'nothing left for an approver to open');
  });
});
