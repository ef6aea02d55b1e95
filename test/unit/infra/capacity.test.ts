/** The capacity model's arithmetic: which limit a workload meets first, and that the settings it suggests serve it. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CAPACITY_DOC, docsTable, withDocsTable } from '../../../bin/scripts/capacity.ts';
import { AWS_LIMITS } from '../../../infra/aws-limits.ts';
import { capacity, defaultDeployment, defaultServedLoad, referenceWorkload } from '../../../infra/capacity.ts';
import { contextFlags, quotaRequests, settingsFor } from '../../../infra/capacity-settings.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY, WORKER_BATCH_SIZE } from '../../../infra/event-sources.ts';
import { perTask } from '../../../infra/per-task.ts';
import { PRICE } from '../../../infra/prices.ts';
import { throttleFor } from '../../../infra/sizing.ts';
import { CALLBACK_MIN, pollMin } from '../../bench/callback-vs-poll.ts';

describe('capacity model', () => {
  it("counts a callback as the bench measures one: a resume run, the step and the completion's read and write, two index moves", () => {
    const shape = { tasksPerSecond: 1, taskSeconds: 0, pollsPerTask: 0, inputRounds: 0, steps: 0, waitingShare: 0 };
    const plain = perTask(shape);
    const called = perTask({ ...shape, callbacks: 1 });
    assert.equal(called.workerRuns, CALLBACK_MIN.invocations);
    assert.equal(called.ddbWrites + called.ddbReads, CALLBACK_MIN.ddbRequests);
    assert.equal(called.rcu, CALLBACK_MIN.rcu);
    assert.equal(called.tableWcu + called.indexWcu, CALLBACK_MIN.wcu);
    assert.equal(called.sqsRequests, CALLBACK_MIN.sqsRequests);
    assert.equal(called.apiRequests, plain.apiRequests + 1, "the completion's POST");
    // Polling the same job three times costs more, and more with every check.
    const polled = pollMin(3);
    assert.ok(polled.ddbRequests > CALLBACK_MIN.ddbRequests && polled.sqsRequests > CALLBACK_MIN.sqsRequests);
    assert.ok(pollMin(10).ddbRequests > polled.ddbRequests);
  });

  it('the default deployment serves its documented load with no limit reached, and the throttle is not what stops it', () => {
    const load = defaultServedLoad();
    assert.ok(load >= 40, `the defaults serve ${load} tasks/s of the reference workload`);
    const atLoad = capacity(referenceWorkload(load));
    assert.equal(atLoad.firstReached, undefined);
    const throttle = atLoad.limits.find((limit) => limit.name === 'API stage throttle')!;
    assert.ok(throttle.utilisation < 1, `no 429 at ${load} tasks/s: throttle at ${throttle.utilisation}`);
    // A little more load meets the workers first (queueing), never the throttle (429s).
    assert.equal(capacity(referenceWorkload(load + 5)).firstReached?.name, 'worker concurrency');
  });

  it('with the throttle of earlier defaults (100/s), ten polled tasks a second meet it', () => {
    const report = capacity(referenceWorkload(10), { ...defaultDeployment(), throttleRateLimit: 100, throttleBurstLimit: 200 });
    assert.equal(report.firstReached?.name, 'API stage throttle');
    assert.equal(report.rates.apiRequests, 110);
  });

  it('the index partitions: 2,000 creations a second fill four shards, eight take them at half', () => {
    const simple = { ...referenceWorkload(2000), pollsPerTask: 0 };
    const four = capacity(simple, { ...defaultDeployment(), workerMaxConcurrency: 1000, accountConcurrency: 100_000 });
    assert.equal(four.rates.indexWcuPerShard, 1000);
    assert.ok(four.limits.some((limit) => limit.name === 'index partition (per shard)' && limit.utilisation === 1));
    const eight = capacity(simple, { ...four.deployment, activeIndexShards: 8 });
    assert.equal(eight.rates.indexWcuPerShard, 500);
  });

  it('calls that wait in the request hold MCP invocations: a hundred a second of 20 s exceed the account concurrency', () => {
    const waiting = { ...referenceWorkload(100), taskSeconds: 30, waitingShare: 1 };
    const report = capacity(waiting, { ...defaultDeployment(), workerMaxConcurrency: 1000 });
    assert.ok(report.concurrency.mcp > 2000, `MCP concurrency ${report.concurrency.mcp}`);
    assert.equal(report.firstReached?.name, 'account Lambda concurrency');
  });

  it('a cap on unfinished tasks writes one item per principal, growing with its unfinished tasks: one principal makes it hot', () => {
    const workload = referenceWorkload(600);
    const capped = { ...defaultDeployment(), workerMaxConcurrency: 1000, throttleRateLimit: 10_000, maxUnfinishedTasks: 1000 };
    const slot = (report: ReturnType<typeof capacity>) => report.limits.find((limit) => limit.name.startsWith('slot set'));
    const one = capacity(workload, capped);
    assert.equal(one.firstReached?.name, slot(one)?.name);
    const many = capacity({ ...workload, owners: 100 }, capped);
    assert.ok(slot(many)!.utilisation < 0.1, `100 principals: ${slot(many)!.utilisation}`);
    assert.equal(slot(capacity(workload)), undefined, 'no cap, no slot set');
    assert.equal(perTask(workload, { maxUnfinishedTasks: 1000 }).ddbWrites, perTask(workload).ddbWrites + 2, 'take and free');
  });

  it('with an issuer the cap is on by default: two writes per task and the slot set among the limits; 0 turns it off', () => {
    const workload = referenceWorkload(10);
    const plain = capacity(workload);
    const withIssuer = capacity(workload, { ...defaultDeployment(), issuer: true });
    const slot = (report: ReturnType<typeof capacity>) => report.limits.find((limit) => limit.name.startsWith('slot set'));
    assert.equal(withIssuer.perTask.ddbWrites, plain.perTask.ddbWrites + 2);
    assert.ok(slot(withIssuer), 'the principal’s set is a limit');
    const off = capacity(workload, { ...defaultDeployment(), issuer: true, maxUnfinishedTasks: 0 });
    assert.equal(off.perTask.ddbWrites, plain.perTask.ddbWrites);
    assert.equal(slot(off), undefined);
    // Larger with many unfinished: 100 unfinished ids make each of the two writes 4 units.
    const crowded = capacity({ ...workload, tasksPerSecond: 50, taskSeconds: 10 }, { ...defaultDeployment(), issuer: true });
    assert.equal(crowded.perTask.tableWcu - crowded.perTask.ddbWrites, 2 * 4 - 2);
  });

  it('the settings it suggests serve 10, 100 and 1,000 tasks a second with no limit reached', () => {
    for (const load of [10, 100, 1000]) {
      const workload = referenceWorkload(load);
      const suggested = settingsFor(workload);
      const report = capacity(workload, suggested);
      assert.equal(report.firstReached, undefined, `${load}/s: ${JSON.stringify(report.limits[0])}`);
      assert.ok(report.limits[0]!.utilisation <= 0.8 + 1e-9, `${load}/s keeps headroom: ${report.limits[0]!.utilisation}`);
    }
    assert.deepEqual(contextFlags(settingsFor(referenceWorkload(10))), []);
    assert.deepEqual(quotaRequests(settingsFor(referenceWorkload(10))), []);
    assert.ok(quotaRequests(settingsFor(referenceWorkload(1000))).some((request) => request.startsWith('HTTP API')));
  });

  it('counts a long task: hand-overs every invocation budget, lease renewals move the index, cancellation checks read', () => {
    const quick = perTask({ ...referenceWorkload(1), taskSeconds: 1, pollsPerTask: 0 });
    const long = perTask({ ...referenceWorkload(1), taskSeconds: 600, pollsPerTask: 0 });
    assert.equal(quick.workerRuns, 1);
    assert.equal(long.workerRuns, 3, 'ten minutes in 4-minute invocations');
    assert.ok(long.indexWcu > quick.indexWcu && long.ddbReads > 100);
    assert.equal(defaultDeployment().throttleRateLimit, throttleFor(DEFAULT_WORKER_MAX_CONCURRENCY).rateLimit);
    assert.equal(
      capacity(referenceWorkload(1)).limits.find((l) => l.name === 'worker concurrency')!.capacity,
      DEFAULT_WORKER_MAX_CONCURRENCY * WORKER_BATCH_SIZE,
    );
  });
});

describe('capacity model: lifecycle events', () => {
  it('counts one event per task at its end and one per question for a person, priced per event, limited by PutEvents', () => {
    const plain = capacity(referenceWorkload(100));
    const asked = capacity({ ...referenceWorkload(100), inputRounds: 2, personQuestions: 1 });
    assert.equal(plain.perTask.events, 1);
    assert.equal(asked.perTask.events, 2);
    assert.equal(plain.rates.events, 100);
    const month = 100 * 30 * 24 * 3600;
    assert.ok(Math.abs(plain.monthlyUsd.events - month * PRICE.eventBridgeEvent) < 1e-6, `${plain.monthlyUsd.events}`);
    const putEvents = plain.limits.find((limit) => limit.name === 'EventBridge PutEvents')!;
    assert.equal(putEvents.capacity, AWS_LIMITS.putEventsPerSecond);
    assert.equal(putEvents.demand, 100);
  });

  it('with -c events=off: no event, no cost, nothing against the PutEvents quota, and the flag in the suggested settings', () => {
    const off = { ...defaultDeployment(), events: false };
    const report = capacity(referenceWorkload(100), off);
    assert.equal(report.perTask.events, 0);
    assert.equal(report.monthlyUsd.events, 0);
    assert.equal(report.limits.find((limit) => limit.name === 'EventBridge PutEvents')?.demand, 0);
    assert.ok(report.monthlyUsd.total < capacity(referenceWorkload(100)).monthlyUsd.total);
    assert.deepEqual(contextFlags(off), ['-c events=off']);
  });
});

describe('docs/capacity.md', () => {
  it('holds the capacity table the model renders now, and the load the defaults serve', () => {
    const doc = readFileSync(CAPACITY_DOC, 'utf8');
    assert.equal(withDocsTable(doc), doc, 'stale: run npm run capacity -- --write-docs');
    assert.ok(doc.includes(docsTable()));
    assert.ok(doc.includes(`**About ${defaultServedLoad()} tasks a second**`), 'the stated default load is the model’s');
  });
});

describe('capacity model: approvals', () => {
  it('with approvers named, each question for a person adds its list entry: two writes and two index writes, off the active shards', () => {
    const workload = { ...referenceWorkload(100), inputRounds: 1, personQuestions: 1 };
    const without = capacity(workload);
    const withApprovals = capacity(workload, { ...defaultDeployment(), approvals: true });
    assert.equal(withApprovals.perTask.ddbWrites - without.perTask.ddbWrites, 2);
    assert.equal(withApprovals.perTask.indexWcu - without.perTask.indexWcu, 2);
    assert.equal(withApprovals.rates.indexWcuPerShard, without.rates.indexWcuPerShard);
    assert.equal(
      capacity(referenceWorkload(100), { ...defaultDeployment(), approvals: true }).perTask.ddbWrites,
      capacity(referenceWorkload(100)).perTask.ddbWrites,
      'nothing for a task that asks no person',
    );
  });
});
