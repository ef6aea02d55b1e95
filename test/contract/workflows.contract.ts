/** TaskStore contract: a workflow's execution on its task (registered by `describeTaskStore`, see `task-store.contract.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineNamed } from '../../shared/engines/port.ts';
import type { CallbackWait } from '../../shared/tasks/callbacks-model.ts';
import { LimitExceededError } from '../../shared/tasks/limits.ts';
import { endedMessage } from '../../shared/tasks/workflows-decisions.ts';
import {
  type AskedQuestion,
  WORKFLOW_END_ID,
  WORKFLOW_QUESTION_PREFIX,
  type WorkflowEnd,
  workflowQuestions,
} from '../../shared/tasks/workflows-model.ts';
import { at, type ContractKit, ELICIT, OWNER, W } from './kit.ts';

const EXECUTION = 'arn:aws:states:us-east-1:123456789012:execution:deploy:task-1';
const OTHER = 'arn:aws:states:us-east-1:123456789012:execution:deploy:someone-else';
/** The wait a workflow's run suspends on: its end, no deadline of its own, a check at 15 minutes. */
const WAIT: CallbackWait = {
  callbacks: { [WORKFLOW_END_ID]: { since: at(1), timeoutAt: at(10 ** 10), onCancel: true } },
  wakeAt: at(900_000),
};

function asked(id: string, overrides: Partial<AskedQuestion> = {}): AskedQuestion {
  return {
    execution: EXECUTION,
    id,
    key: 'approval',
    question: {
      message: 'Deploy?',
      requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } } },
      answeredBy: 'person',
    },
    sealedToken: `sealed-${id}`,
    ...overrides,
  };
}

/** No binding names an execution: only the one the row records is followed. */
const NONE = () => undefined;

const SUCCEEDED: WorkflowEnd = { status: 'SUCCEEDED', execution: EXECUTION, output: { deployed: true } };

/** The workflow cases: the execution a task follows, its questions, its progress and its end. */
export function describeWorkflows(kit: ContractKit): void {
  const { store, read, claimed, completed } = kit;

  /** A task claimed at 1 ms that follows EXECUTION and suspended on it at 2 ms. */
  const suspended = async () => {
    const { task, leaseOwner } = await claimed();
    assert.equal(await store().followExecution(task.taskId, EXECUTION), EXECUTION);
    const seen = (await read(task.taskId)).callbacks;
    assert.equal(
      await store().awaitCallbacks(task.taskId, leaseOwner, { seen, wait: WAIT, statusMessage: 'Running deploy' }, at(2)),
      'waiting',
    );
    return read(task.taskId);
  };

  describe('workflows', () => {
    it('a task follows the first execution recorded; another is not taken, unless it replaces the one followed', async () => {
      const { task } = await claimed();
      assert.equal(await store().followExecution(task.taskId, EXECUTION), EXECUTION);
      assert.equal(await store().followExecution(task.taskId, OTHER), EXECUTION);
      assert.equal((await read(task.taskId)).workflow?.execution, EXECUTION);
      assert.equal(await store().followExecution(task.taskId, OTHER, { replacing: EXECUTION }), OTHER);
      assert.equal((await read(task.taskId)).workflow?.execution, OTHER);
      const ended = await completed();
      assert.equal(await store().followExecution(ended.taskId, EXECUTION), undefined);
    });

    it('the engine an execution runs on is recorded with it; a row that names none is read as Step Functions', async () => {
      const { task } = await claimed();
      assert.equal(await store().followExecution(task.taskId, EXECUTION), EXECUTION);
      const old = (await read(task.taskId)).workflow;
      assert.equal(old?.engine, undefined);
      assert.equal(engineNamed(old), 'stepfunctions');
      const { task: named } = await claimed();
      assert.equal(await store().followExecution(named.taskId, OTHER, { engine: 'durable' }), OTHER);
      const workflow = (await read(named.taskId)).workflow;
      assert.deepEqual(workflow, { engine: 'durable', execution: OTHER });
      assert.equal(engineNamed(workflow), 'durable');
    });

    it('a question from the followed execution wakes a suspended task: recorded in order, its token kept, due one W later', async () => {
      const task = await suspended();
      assert.equal(task.sweepAt, at(900_000));
      assert.equal(await store().askFromWorkflow(task.taskId, asked('q1'), NONE, at(10)), 'resumed');
      const stored = await read(task.taskId);
      assert.equal(stored.status, 'working');
      assert.equal(stored.callbackWait, undefined);
      assert.equal(stored.sweepAt, at(10) + W);
      assert.deepEqual(
        workflowQuestions(stored.callbacks).map(({ id, n, key }) => ({ id, n, key })),
        [{ id: `${WORKFLOW_QUESTION_PREFIX}q1`, n: 1, key: 'approval' }],
      );
      assert.deepEqual(stored.workflow?.tokens, { [`${WORKFLOW_QUESTION_PREFIX}q1`]: 'sealed-q1' });
    });

    it('the same question again changes nothing; another execution, or an ended task, is refused', async () => {
      const task = await suspended();
      await store().askFromWorkflow(task.taskId, asked('q1'), NONE, at(10));
      const before = await read(task.taskId);
      assert.equal(await store().askFromWorkflow(task.taskId, asked('q1'), NONE, at(11)), 'duplicate');
      assert.equal(await store().askFromWorkflow(task.taskId, asked('q2', { execution: OTHER }), () => OTHER, at(11)), 'not-followed');
      assert.deepEqual(await read(task.taskId), before);
      const ended = await completed();
      assert.equal(await store().askFromWorkflow(ended.taskId, asked('q3'), () => EXECUTION, at(12)), 'ended');
    });

    it('before the run records its execution, the expected one is accepted; a key asked before gets a key of its own', async () => {
      const { task } = await claimed();
      assert.equal(await store().askFromWorkflow(task.taskId, asked('q1'), () => EXECUTION, at(2)), 'asked');
      assert.equal(await store().askFromWorkflow(task.taskId, asked('q2'), () => EXECUTION, at(3)), 'asked');
      const stored = await read(task.taskId);
      assert.equal(stored.workflow?.execution, EXECUTION);
      assert.deepEqual(
        workflowQuestions(stored.callbacks).map(({ n, key }) => [n, key]),
        [
          [1, 'approval'],
          [2, 'approval#2'],
        ],
      );
    });

    it("a restart withdraws the replaced execution's unanswered question: a late decision on it reads as withdrawn", async () => {
      const task = await suspended();
      await store().askFromWorkflow(task.taskId, asked('q1'), NONE, at(10));
      assert.equal(await store().getDecision(task.taskId, 'approval', at(11)), undefined);
      const restarted = await store().restartExecution(task.taskId, OTHER, EXECUTION, at(12));
      assert.deepEqual(restarted, { follows: OTHER, resumes: false, withdrawn: ['approval'] });
      assert.equal(await store().getDecision(task.taskId, 'approval', at(13)), 'withdrawn');
      assert.equal(await store().getDecision(task.taskId, 'other', at(13)), undefined);
      assert.equal(await store().getDecision('no-such-task', 'approval', at(13)), undefined);
    });

    it('a question that reaches a running task signals its suspension instead', async () => {
      const { task, leaseOwner } = await claimed();
      await store().followExecution(task.taskId, EXECUTION);
      const seen = (await read(task.taskId)).callbacks;
      assert.equal(await store().askFromWorkflow(task.taskId, asked('q1'), NONE, at(2)), 'asked');
      assert.equal(await store().awaitCallbacks(task.taskId, leaseOwner, { seen, wait: WAIT, statusMessage: 'W' }, at(3)), 'signalled');
    });

    it('questions and tokens past the budget are refused, nothing written', async () => {
      const task = await suspended();
      const big = asked('big', { sealedToken: 'x'.repeat(200 * 1024) });
      await assert.rejects(store().askFromWorkflow(task.taskId, big, NONE, at(10)), LimitExceededError);
      assert.equal((await read(task.taskId)).callbackWait !== undefined, true);
    });

    it('progress is the status of a working task, and only kept while a question waits', async () => {
      const task = await suspended();
      assert.equal(await store().workflowProgress(task.taskId, EXECUTION, NONE, 'Deploying 1 of 3', at(10)), 'recorded');
      let stored = await read(task.taskId);
      assert.equal(stored.statusMessage, 'Deploying 1 of 3');
      assert.equal(stored.workflow?.progress, 'Deploying 1 of 3');
      assert.deepEqual(stored.callbackWait, WAIT);
      const waiting = await kit.waiting({ approval: ELICIT });
      await store().followExecution(waiting.taskId, EXECUTION);
      await store().workflowProgress(waiting.taskId, EXECUTION, NONE, 'Deploying 2 of 3', at(11));
      stored = await read(waiting.taskId);
      assert.notEqual(stored.statusMessage, 'Deploying 2 of 3');
      assert.equal(stored.workflow?.progress, 'Deploying 2 of 3');
      assert.equal(await store().workflowProgress(waiting.taskId, OTHER, () => OTHER, 'x', at(12)), 'not-followed');
    });

    it('a token goes once its answer went back, and all of them go when the task ends', async () => {
      const task = await suspended();
      await store().askFromWorkflow(task.taskId, asked('q1'), NONE, at(10));
      await store().askFromWorkflow(task.taskId, asked('q2', { key: 'confirm' }), NONE, at(11));
      await store().dropWorkflowToken(task.taskId, `${WORKFLOW_QUESTION_PREFIX}q1`);
      await store().dropWorkflowToken(task.taskId, `${WORKFLOW_QUESTION_PREFIX}q1`);
      assert.deepEqual((await read(task.taskId)).workflow?.tokens, { [`${WORKFLOW_QUESTION_PREFIX}q2`]: 'sealed-q2' });
      const run = await store().claim(task.taskId, 'w2', at(12));
      assert.ok(run);
      const ended = await store().finish(run, 'w2', { status: 'cancelled' }, at(13));
      assert.equal(ended.workflow?.tokens, undefined);
      assert.equal((await read(task.taskId, at(14))).workflow?.execution, EXECUTION);
    });

    it('the end resumes a suspended task once: a repeat is a duplicate, another execution is not followed', async () => {
      const task = await suspended();
      assert.equal(await store().endWorkflow(task.taskId, { ...SUCCEEDED, execution: OTHER }, NONE, at(9)), 'not-followed');
      assert.equal(await store().endWorkflow(task.taskId, SUCCEEDED, NONE, at(10)), 'resumed');
      assert.equal(await store().endWorkflow(task.taskId, SUCCEEDED, NONE, at(11)), 'duplicate');
      const stored = await read(task.taskId);
      assert.deepEqual(stored.callbacks?.[WORKFLOW_END_ID], { result: SUCCEEDED, at: at(10) });
      assert.equal(stored.sweepAt, at(10) + W);
      assert.equal(stored.callbackWait, undefined);
      assert.equal(stored.statusMessage, endedMessage(SUCCEEDED));
    });

    it('an end after the 15-minute check is due still counts (the wait itself has no deadline)', async () => {
      const task = await suspended();
      assert.equal(await store().endWorkflow(task.taskId, SUCCEEDED, NONE, at(2_000_000)), 'resumed');
    });

    it('the end wakes a task waiting on one of its questions: working again, the question gone', async () => {
      const waiting = await kit.waiting({ approval: ELICIT });
      await store().followExecution(waiting.taskId, EXECUTION);
      const failed: WorkflowEnd = { status: 'TIMED_OUT', execution: EXECUTION, error: 'States.Timeout' };
      assert.equal(await store().endWorkflow(waiting.taskId, failed, NONE, at(10)), 'resumed');
      const stored = await read(waiting.taskId);
      assert.equal(stored.status, 'working');
      assert.equal('inputRequests' in stored, false);
      assert.equal(stored.sweepAt, at(10) + W);
      assert.ok(await store().claim(waiting.taskId, 'w2', at(11)));
      const ended = await completed();
      assert.equal(await store().endWorkflow(ended.taskId, SUCCEEDED, () => EXECUTION, at(12)), 'ended');
    });

    it('a cancel goes through the run of a task following a live execution, even while one of its questions waits', async () => {
      const task = await suspended();
      assert.equal((await store().cancel(task.taskId, OWNER, at(10))).result, 'requested');
      let stored = await read(task.taskId);
      assert.equal(stored.status, 'working');
      assert.equal(stored.cancelRequested, true);
      assert.equal(stored.sweepAt, at(10));

      const waiting = await kit.waiting({ approval: ELICIT });
      await store().followExecution(waiting.taskId, EXECUTION);
      assert.equal((await store().cancel(waiting.taskId, OWNER, at(10))).result, 'requested');
      stored = await read(waiting.taskId);
      assert.equal(stored.status, 'working');
      assert.equal('inputRequests' in stored, false);
      assert.equal(stored.sweepAt, at(10));
      assert.equal((await store().claim(waiting.taskId, 'w2', at(11)))?.cancelRequested, true);
    });
  });
}
