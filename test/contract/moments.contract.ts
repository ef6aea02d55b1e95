/**
 * TaskStore contract: the moments a task's timeline is drawn from, recorded
 * by the writes it already makes (registered by `describeTaskStore`, see
 * `task-store.contract.ts`). Each scenario drives the store on a clock of
 * its own and asserts the timeline's phases, their order, durations and who
 * answered; both adapters must agree.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallbackWait } from '../../shared/tasks/callbacks-model.ts';
import { KEPT_MOMENTS, MAX_MOMENTS } from '../../shared/tasks/limits.ts';
import { ANSWERED_BY_META, type InputRequest, type TaskRecord } from '../../shared/tasks/model.ts';
import { type Timeline, timelineOf } from '../../shared/tasks/timeline.ts';
import { WORKFLOW_END_ID } from '../../shared/tasks/workflows-model.ts';
import { at, type ContractKit, ELICIT, LEASE, RESULT } from './kit.ts';

const PERSON: InputRequest = { method: 'elicitation/create', params: { ...ELICIT.params, _meta: { [ANSWERED_BY_META]: 'person' } } };
const EXECUTION = 'arn:aws:states:us-east-1:123456789012:execution:deploy:moments';

/** The phases of a timeline as `[phase, ms]` pairs, in order. */
function phases(timeline: Timeline): Array<[string, number]> {
  return timeline.phases.map((phase) => [phase.phase, phase.ms]);
}

/** The moments' kinds and times, relative to the suite's epoch. */
function moments(task: TaskRecord): string[] {
  return (task.moments ?? []).map((moment) => `${moment.kind}@${moment.at - at(0)}${moment.note ? `:${moment.note}` : ''}`);
}

export function describeMoments(kit: ContractKit): void {
  const { store, read, created, claimed } = kit;

  describe('moments and the timeline they draw', () => {
    it('a simple task: queued until its claim, run until its end (the end, from the finish)', async () => {
      const task = await created();
      const run = await store().claim(task.taskId, 'w1', at(100));
      assert.ok(run);
      await store().finish(run, 'w1', { status: 'completed', result: RESULT }, at(400));
      const stored = await read(task.taskId);
      assert.deepEqual(moments(stored), ['claim@100', 'end@400:completed']);
      const timeline = timelineOf(stored, at(10_000));
      assert.deepEqual(phases(timeline), [
        ['queued', 100],
        ['run', 300],
      ]);
      assert.deepEqual(
        timeline.phases.map((phase) => phase.share),
        [0.25, 0.75],
      );
      assert.equal(timeline.endedAt, at(400));
      assert.equal(timeline.runs, 1);
      assert.equal(timeline.recorded, true);
    });

    it('a question for a person decided by an approver: the wait, who decided and when, then the second run', async () => {
      const { task, leaseOwner } = await claimed({}, at(10));
      const waiting = await store().finish(task, leaseOwner, { status: 'input_required', inputRequests: { approval: PERSON } }, at(20));
      assert.equal(waiting.status, 'input_required');
      await store().decide(task.taskId, { principal: 'ada', name: 'Ada', approver: true }, { approval: { action: 'accept' } }, at(1020));
      const second = await store().claim(task.taskId, 'w2', at(1030));
      assert.ok(second);
      await store().finish(second, 'w2', { status: 'completed', result: RESULT }, at(1100));
      const stored = await read(task.taskId);
      assert.deepEqual(moments(stored), ['claim@10', 'ask@20:person', 'resume@1020:answer', 'claim@1030', 'end@1100:completed']);
      const timeline = timelineOf(stored, at(10_000));
      assert.deepEqual(phases(timeline), [
        ['queued', 10],
        ['run', 10],
        ['wait:person', 1000],
        ['queued', 10],
        ['run', 70],
      ]);
      assert.deepEqual(timeline.phases[2]?.answers, [
        { key: 'approval', by: 'ada', name: 'Ada', as: 'approver', via: 'page', at: at(1020) },
      ]);
      assert.deepEqual(
        timeline.phases.map((phase) => phase.run),
        [undefined, 1, undefined, undefined, 2],
      );
    });

    it('a callback: the wait on it, what was posted and when, then the run it resumed', async () => {
      const { task, leaseOwner } = await claimed({}, at(10));
      const wait: CallbackWait = { callbacks: { job: { since: at(15), timeoutAt: at(600_000) } } };
      const options = { seen: task.callbacks, wait, statusMessage: 'Waiting', claimed: task };
      assert.equal(await store().awaitCallbacks(task.taskId, leaseOwner, options, at(20)), 'waiting');
      assert.equal(await store().completeCallback(task.taskId, 'job', { result: { ok: true } }, at(520)), 'resumed');
      const second = await store().claim(task.taskId, 'w2', at(530));
      assert.ok(second);
      await store().finish(second, 'w2', { status: 'completed', result: RESULT }, at(600));
      const timeline = timelineOf(await read(task.taskId), at(10_000));
      assert.deepEqual(phases(timeline), [
        ['queued', 10],
        ['run', 10],
        ['wait:callback', 500],
        ['queued', 10],
        ['run', 70],
      ]);
      assert.deepEqual(timeline.phases[2]?.arrivals, [{ id: 'job', at: at(520), outcome: 'result' }]);
    });

    it('a workflow: the wait on its execution, its end and status, then the run that ends the task', async () => {
      const { task, leaseOwner } = await claimed({}, at(10));
      await store().followExecution(task.taskId, EXECUTION);
      const wait: CallbackWait = { callbacks: { [WORKFLOW_END_ID]: { since: at(15), timeoutAt: at(10 ** 10), onCancel: true } } };
      const followed = await read(task.taskId);
      const options = { seen: followed.callbacks, wait, statusMessage: 'Following', claimed: followed };
      assert.equal(await store().awaitCallbacks(task.taskId, leaseOwner, options, at(20)), 'waiting');
      const end = { status: 'SUCCEEDED' as const, execution: EXECUTION, output: {} };
      assert.equal(await store().endWorkflow(task.taskId, end, () => undefined, at(2020)), 'resumed');
      const second = await store().claim(task.taskId, 'w2', at(2030));
      assert.ok(second);
      await store().finish(second, 'w2', { status: 'completed', result: RESULT }, at(2100));
      const stored = await read(task.taskId);
      assert.deepEqual(moments(stored), ['claim@10', 'suspend@20:workflow', 'resume@2020:workflow', 'claim@2030', 'end@2100:completed']);
      const timeline = timelineOf(stored, at(10_000));
      assert.deepEqual(phases(timeline), [
        ['queued', 10],
        ['run', 10],
        ['wait:workflow', 2000],
        ['queued', 10],
        ['run', 70],
      ]);
      assert.deepEqual(timeline.phases[2]?.arrivals, [{ id: WORKFLOW_END_ID, at: at(2020), outcome: 'succeeded' }]);
    });

    it('a run lost and recovered: its claim, then the next claim once its lease ran out, counted as a recovery', async () => {
      const { task } = await claimed({}, at(10));
      const again = await store().claim(task.taskId, 'w2', at(10 + LEASE + 5));
      assert.ok(again, 'the lost lease ran out');
      await store().finish(again, 'w2', { status: 'completed', result: RESULT }, at(10 + LEASE + 105));
      const timeline = timelineOf(await read(task.taskId), at(10 * LEASE));
      assert.deepEqual(phases(timeline), [
        ['queued', 10],
        ['recovered', LEASE + 5],
        ['run', 100],
      ]);
      assert.deepEqual([timeline.runs, timeline.recoveries], [2, 1]);
    });

    it('hand-overs say why: a sleep, a retry, a redelivery, each until the next claim', async () => {
      const { task, leaseOwner } = await claimed({}, at(10));
      await store().release(task.taskId, leaseOwner, at(1_000), { handedOver: true, why: 'sleep', at: at(20), claimed: task });
      const second = await store().claim(task.taskId, 'w2', at(1_010));
      assert.ok(second);
      await store().release(task.taskId, 'w2', at(1_500), { why: 'retry', at: at(1_020), claimed: second });
      const third = await store().claim(task.taskId, 'w3', at(1_510));
      assert.ok(third);
      await store().release(task.taskId, 'w3', at(3_000), { why: 'redelivery', at: at(1_520), claimed: third });
      const timeline = timelineOf(await read(task.taskId), at(3_000));
      assert.deepEqual(phases(timeline), [
        ['queued', 10],
        ['run', 10],
        ['wait:sleep', 990],
        ['run', 10],
        ['retry', 490],
        ['run', 10],
        ['retry', 1_480],
      ]);
      assert.equal(timeline.phases.at(-1)?.open, true);
      assert.deepEqual([timeline.runs, timeline.retries], [3, 2]);
    });

    it('a long task keeps at most MAX_MOMENTS: the oldest are folded into one summary with their time per phase', async () => {
      const task = await created();
      let record: TaskRecord = task;
      let now = at(0);
      for (let run = 1; run <= MAX_MOMENTS; run += 1) {
        now += 10;
        const claimedRun = await store().claim(task.taskId, `w${run}`, now);
        assert.ok(claimedRun);
        now += 5;
        await store().release(task.taskId, `w${run}`, now, { handedOver: true, at: now, claimed: claimedRun });
        record = await read(task.taskId, now);
      }
      assert.ok((record.moments?.length ?? 0) <= MAX_MOMENTS, `kept ${record.moments?.length}`);
      assert.equal(record.moments?.[0]?.kind, 'earlier');
      const timeline = timelineOf(record, now);
      const earlier = timeline.phases[0]!;
      assert.equal(earlier.phase, 'earlier');
      // Every run's 10 ms queued and 5 ms run is accounted for, folded or kept.
      const kept = timeline.phases.slice(1);
      const total = (phase: string) =>
        (earlier.summary?.totals[phase as 'run'] ?? 0) + kept.filter((p) => p.phase === phase).reduce((sum, p) => sum + p.ms, 0);
      assert.deepEqual([total('queued'), total('run')], [10 * MAX_MOMENTS, 5 * MAX_MOMENTS]);
      assert.equal(timeline.runs, MAX_MOMENTS);
      assert.ok(kept.length <= 2 * KEPT_MOMENTS);
    });
  });
}
