/**
 * The capacity model's per-task AWS calls against the AWS-calls bench's
 * counting run on the local stack (the unchanged handlers on dynalite and
 * fauxqs, every SDK call of the functions counted): for each scenario the
 * model's DynamoDB requests, units, SQS requests and worker invocations are
 * the ones measured, and a `tasks/get` is the one read the model prices.
 * The local stack lists tasks (its console is open), so the model counts
 * the list entry; a default deployment (console by id) is that entry less.
 * With an issuer (a stack of its own, `LOCAL_AUTH=1`'s), the cap on
 * unfinished tasks is on by default: its two writes are the model's too.
 * CPU and latency are compared in the load bench's report, not here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { capacity, defaultDeployment } from '../../infra/capacity.ts';
import { perTask, type Workload } from '../../infra/per-task.ts';
import type { PollCost, Row } from '../bench/aws-counting.ts';
import { type CountingStack, countScenarios, countWithIssuer, openCountingStack } from '../bench/aws-scenarios.ts';
import { STEPS, WITH_ISSUER_MIN } from '../bench/minima.ts';

let bench: CountingStack;
let measured: { rows: Row[]; gets: PollCost[] };
let withIssuer: Row;

before(async () => {
  bench = await openCountingStack();
  measured = await countScenarios(bench);
  withIssuer = await countWithIssuer();
});
after(() => bench?.close());

/** The bench's scenarios as workloads: no polls (the bench watches tasks uncounted), the tools' running time as they run there. */
const SCENARIOS: Record<string, Partial<Workload>> = {
  'simple task': { taskSeconds: 0.01 },
  'one input round': { inputRounds: 1 },
  [`${STEPS}-step job`]: { steps: STEPS },
};

describe('capacity model against the counting bench', () => {
  for (const [scenario, shape] of Object.entries(SCENARIOS)) {
    it(`${scenario}: the model's per-task counts are the measured ones`, async () => {
      const row = measured.rows.find((candidate) => candidate.scenario === scenario);
      assert.ok(row, `the bench measured ${scenario}`);
      const counts = (taskSeconds?: number) => {
        const base = { tasksPerSecond: 1, taskSeconds: 0, pollsPerTask: 0, inputRounds: 0, steps: 0, waitingShare: 0, ...shape };
        const model = perTask(taskSeconds === undefined ? base : { ...base, taskSeconds: Math.max(base.taskSeconds, taskSeconds) });
        return {
          ddbRequests: model.ddbWrites + model.ddbReads,
          wcu: model.tableWcu + model.indexWcu,
          indexWcu: model.indexWcu,
          rcu: model.rcu,
          sqsRequests: model.sqsRequests,
          invocations: model.workerRuns,
          apiRequests: model.apiRequests,
          events: model.events,
        };
      };
      // The writes that come with running time (progress throttled to one per interval, lease renewals)
      // depend on how long the run took on this machine: the model brackets them, from the tool's own time
      // to the whole time the task took here. Everything else is exact.
      const task = await bench.statusOf(row.taskId, ['completed']);
      const fastest = counts();
      const slowest = counts((task.lastUpdatedAt - task.createdAt) / 1000);
      const got = { ...row.measured, indexWcu: row.meter.indexWcu, apiRequests: row.meter.apiRequests };
      for (const key of Object.keys(fastest) as Array<keyof typeof fastest>) {
        assert.ok(
          got[key] >= fastest[key] && got[key] <= slowest[key],
          `${key}: measured ${got[key]}, the model says ${fastest[key]}${slowest[key] > fastest[key] ? `–${slowest[key]}` : ''}`,
        );
      }
      assert.deepEqual(
        { rcu: got.rcu, sqsRequests: got.sqsRequests, invocations: got.invocations, apiRequests: got.apiRequests, events: got.events },
        {
          rcu: fastest.rcu,
          sqsRequests: fastest.sqsRequests,
          invocations: fastest.invocations,
          apiRequests: fastest.apiRequests,
          events: fastest.events,
        },
        'reads, queue requests, runs, API requests and events do not depend on the timing',
      );
    });
  }

  it('the conditions: the list entry is one index write, and with an issuer the default cap adds two writes', () => {
    const shape = { tasksPerSecond: 1, taskSeconds: 0.01, pollsPerTask: 0, inputRounds: 0, steps: 0, waitingShare: 0 };
    const simple = measured.rows.find((row) => row.scenario === 'simple task')!;
    const units = (task: ReturnType<typeof perTask>) => ({
      ddbRequests: task.ddbWrites + task.ddbReads,
      wcu: task.tableWcu + task.indexWcu,
    });
    const onDefaults = capacity(shape).perTask;
    assert.deepEqual(units(onDefaults), { ddbRequests: simple.measured.ddbRequests, wcu: simple.measured.wcu - 1 }, 'console by id');
    const listedWithIssuer = capacity(shape, { ...defaultDeployment(), listed: true, issuer: true }).perTask;
    assert.deepEqual(units(listedWithIssuer), { ddbRequests: withIssuer.measured.ddbRequests, wcu: withIssuer.measured.wcu });
    assert.deepEqual(
      { ddbRequests: withIssuer.measured.ddbRequests - simple.measured.ddbRequests, wcu: withIssuer.measured.wcu - simple.measured.wcu },
      { ddbRequests: 2, wcu: 2 },
      "the slot's take and free",
    );
    assert.deepEqual(withIssuer.measured, WITH_ISSUER_MIN);
  });

  it('a poll is one read of one unit, as the model prices it', () => {
    const withPolls = perTask({ tasksPerSecond: 1, taskSeconds: 0.01, pollsPerTask: 10, inputRounds: 0, steps: 0, waitingShare: 0 });
    const without = perTask({ tasksPerSecond: 1, taskSeconds: 0.01, pollsPerTask: 0, inputRounds: 0, steps: 0, waitingShare: 0 });
    for (const get of measured.gets) {
      assert.equal(get.ddbRequests, (withPolls.ddbReads - without.ddbReads) / 10, get.scenario);
      assert.equal(get.rcu, (withPolls.rcu - without.rcu) / 10, get.scenario);
    }
    assert.equal(withPolls.apiRequests - without.apiRequests, 10);
  });
});
