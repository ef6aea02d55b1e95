/** TaskStore contract: questions for a person, decided on a page or answered in-band (registered by `describeTaskStore`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecisionRefusedError } from '../../shared/tasks/approvals-model.ts';
import { ANSWERED_BY_META, FOUR_EYES_META, type InputRequest } from '../../shared/tasks/model.ts';
import { TaskNotFoundError } from '../../shared/tasks/store-errors.ts';
import { at, type ContractKit, ELICIT, OWNER, STRANGER } from './kit.ts';

const APPROVER = 'ada';

function personal(fourEyes = false): InputRequest {
  return {
    method: 'elicitation/create',
    params: { ...ELICIT.params, _meta: { [ANSWERED_BY_META]: 'person', ...(fourEyes ? { [FOUR_EYES_META]: true } : {}) } },
  };
}

const YES = { action: 'accept', content: { approve: true } };

/** The `decide` cases, and what `answer` does to questions for a person. */
export function describeDecide(kit: ContractKit): void {
  const { store, read, waiting } = kit;
  describe('decide and questions for a person', () => {
    it("an approver decides another principal's question for a person: recorded with who and when, and the task resumes", async () => {
      const task = await waiting({ approval: personal() });
      const decider = { principal: APPROVER, name: 'ada@example.com', approver: true };
      assert.deepEqual(await store().decide(task.taskId, decider, { approval: YES }, at(20)), {
        accepted: ['approval'],
        resumed: true,
        decided: ['approval'],
      });
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'working');
      assert.deepEqual(stored.inputResponses, { approval: YES });
      assert.deepEqual(stored.decisions, { approval: { by: APPROVER, name: 'ada@example.com', as: 'approver', via: 'page', at: at(20) } });
      // Who decided stays readable by id (for an approver who comes late), the task no longer waiting; an open or unknown key has none.
      assert.deepEqual(await store().getDecision(task.taskId, 'approval', at(30)), stored.decisions?.['approval']);
      assert.equal(await store().getDecision(task.taskId, 'other', at(30)), undefined);
      assert.equal(await store().getDecision('no-such-task', 'approval', at(30)), undefined);
    });

    it('a question needing another approver is refused to its owner, on the page and in-band, and stays open', async () => {
      const task = await waiting({ approval: personal(true) });
      await assert.rejects(
        store().decide(task.taskId, { principal: OWNER, approver: true }, { approval: YES }, at(20)),
        (error: unknown) => error instanceof DecisionRefusedError && error.reason === 'four-eyes',
      );
      await assert.rejects(store().answer(task.taskId, OWNER, { approval: YES }, at(21)), DecisionRefusedError);
      assert.deepEqual(await read(task.taskId), task);
      const decided = await store().decide(task.taskId, { principal: APPROVER, approver: true }, { approval: YES }, at(22));
      assert.equal(decided.resumed, true);
      assert.equal((await read(task.taskId)).decisions?.['approval']?.as, 'approver');
    });

    it('someone neither owner nor approver finds no task', async () => {
      const task = await waiting({ approval: personal() });
      await assert.rejects(
        store().decide(task.taskId, { principal: STRANGER, approver: false }, { approval: YES }, at(20)),
        TaskNotFoundError,
      );
      assert.deepEqual(await read(task.taskId), task);
    });

    it("an approver may not answer another's question that is not for a person", async () => {
      const task = await waiting({ approval: personal(), other: ELICIT });
      await assert.rejects(
        store().decide(task.taskId, { principal: APPROVER, approver: true }, { approval: YES, other: YES }, at(20)),
        (error: unknown) => error instanceof DecisionRefusedError && error.reason === 'not-for-approvers',
      );
      assert.deepEqual(await read(task.taskId), task);
    });

    it("the owner's in-band answer is recorded as theirs, or ignored where the question went out as a URL", async () => {
      const task = await waiting({ approval: personal(), other: ELICIT });
      assert.deepEqual(
        await store().answer(task.taskId, OWNER, { approval: { action: 'accept' }, other: YES }, at(20), { person: 'ignore' }),
        {
          accepted: ['other'],
          resumed: false,
        },
      );
      const open = await read(task.taskId);
      assert.equal(open.status === 'input_required' && Object.keys(open.inputRequests).join(), 'approval');
      assert.equal(open.decisions, undefined);
      const recorded = await store().answer(task.taskId, OWNER, { approval: YES }, at(21));
      assert.deepEqual(recorded, { accepted: ['approval'], resumed: true, decided: ['approval'] });
      assert.deepEqual((await read(task.taskId)).decisions, { approval: { by: OWNER, as: 'owner', via: 'client', at: at(21) } });
    });

    it('lists each open question for a person for the approvers until it is decided, and opens its task to them', async () => {
      const task = await waiting({ approval: personal(), other: ELICIT });
      const cancelled = await waiting({ approval: personal() });
      const listed = async () => {
        const found: string[] = [];
        let after: string | undefined;
        do {
          const page = await store().listWaitingForPeople(at(30), { limit: 2, ...(after === undefined ? {} : { after }) });
          found.push(
            ...page.questions
              .filter((q) => [task.taskId, cancelled.taskId].includes(q.task.taskId))
              .map((q) => `${q.task.taskId}:${q.key}`),
          );
          after = page.next;
        } while (after !== undefined);
        return found;
      };
      assert.deepEqual((await listed()).sort(), [`${cancelled.taskId}:approval`, `${task.taskId}:approval`].sort());
      assert.equal((await store().getWaitingForPerson(task.taskId, at(30)))?.owner, OWNER);
      await store().cancel(cancelled.taskId, OWNER, at(31));
      await store().decide(task.taskId, { principal: APPROVER, approver: true }, { approval: YES }, at(32));
      assert.deepEqual(await listed(), []);
      assert.equal(await store().getWaitingForPerson(task.taskId, at(33)), undefined, 'no question for a person is open any more');
      assert.equal(await store().getWaitingForPerson(cancelled.taskId, at(33)), undefined);
    });
  });
}
