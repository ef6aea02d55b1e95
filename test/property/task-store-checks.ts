/**
 * What the {@link TaskStore} property test checks after every step: every
 * task read at the current clock against its previous observation (the
 * invariants of spec §2 and of the port's doc comments), plus the
 * per-operation checks the step left behind.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { canTransition, isExpired, isRunning, isTerminal, type TaskRecord } from '../../shared/tasks/model.ts';
import { type AfterCheck, count, OWNER, POLICY, T0, type Tracked, type World } from './task-store-world.ts';

const FAR_FUTURE_MS = 100 * 365 * 86_400_000;

/**
 * Reads every task at the current clock and checks the invariants against
 * the previous observation. Expired tasks are read again only with `all`
 * (at the end of a run): reads are what a DynamoDB step mostly costs.
 * With `probeFarFuture`, every task is also read far past every TTL.
 */
export async function observe(world: World, afters: Map<Tracked, AfterCheck>, all = false, probeFarFuture = false): Promise<void> {
  const now = world.now;
  const tasks = world.tasks.filter((task) => all || !task.gone);
  const reads = await Promise.all(tasks.map((task) => world.store.get(task.taskId, OWNER, now)));
  tasks.forEach((task, i) => {
    const current = reads[i];
    try {
      afters.get(task)?.(current);
      checkInvariants(task, task.last, current, now);
    } catch (error) {
      if (error instanceof Error) {
        error.message +=
          `\n  task ${task.name} at @${now - T0}\n  before: ${JSON.stringify(task.last)}\n  after:  ` + `${JSON.stringify(current)}`;
      }
      throw error;
    }
    if (current === undefined && task.last !== undefined) {
      task.gone = true;
      count(world, `expired:${task.last.status}`);
    }
    if (current && task.last && current.status !== task.last.status) count(world, `${task.last.status} → ${current.status}`);
    task.last = current;
  });
  if (probeFarFuture) {
    // Far past every TTL: what is not terminal is still there, unchanged; what is terminal has expired.
    const far = now + FAR_FUTURE_MS;
    const farReads = await Promise.all(tasks.map((task) => (task.last ? world.store.get(task.taskId, OWNER, far) : undefined)));
    tasks.forEach((task, i) => {
      if (!task.last) return;
      const message = `read 100 years later, ${task.name} (${task.last.status})`;
      if (isTerminal(task.last.status)) assert.equal(farReads[i], undefined, `${message}: a terminal task is still readable past its TTL`);
      else assert.deepEqual(farReads[i], task.last, `${message}: a non-terminal task expired or reads differently`);
    });
  }
}

function checkInvariants(task: Tracked, before: TaskRecord | undefined, current: TaskRecord | undefined, now: number): void {
  if (task.gone) {
    assert.equal(current, undefined, 'a task that disappeared (expired) came back');
    return;
  }
  assert.ok(before, 'tracked tasks are observed from creation');
  if (current === undefined) {
    assert.ok(isTerminal(before.status), `a ${before.status} task disappeared (non-terminal tasks never expire)`);
    assert.ok(isExpired(before, now), 'a terminal task disappeared before createdAt + ttlMs');
    return;
  }
  if (isTerminal(before.status) && isExpired(before, now)) assert.fail('a terminal task past createdAt + ttlMs is still readable');

  // Identity and status.
  assert.equal(current.taskId, task.taskId);
  assert.equal(current.owner, OWNER);
  assert.equal(current.createdAt, before.createdAt, 'createdAt changed');
  assert.ok(
    current.status === before.status || canTransition(before.status, current.status),
    `illegal transition ${before.status} → ${current.status}`,
  );
  if (isTerminal(before.status)) assert.deepEqual(current, before, `a ${before.status} task changed after reaching a terminal state`);

  // Versions.
  assert.ok(current.version >= before.version, `version went back from ${before.version} to ${current.version}`);
  if (!isDeepStrictEqual(current, before)) assert.ok(current.version > before.version, 'the record changed without a new version');

  // Input requests and answers.
  const outstanding = current.status === 'input_required' ? Object.keys(current.inputRequests) : [];
  if (current.status === 'input_required') assert.ok(outstanding.length >= 1, 'input_required with no outstanding request');
  const answered = new Set([...task.answered, ...Object.keys(current.inputResponses)]);
  for (const key of outstanding) assert.ok(!answered.has(key), `answered key ${key} is outstanding again`);
  for (const key of Object.keys(before.inputResponses))
    assert.ok(Object.hasOwn(current.inputResponses, key), `the answer to ${key} was lost`);
  for (const key of before.issuedKeys) assert.ok(current.issuedKeys.includes(key), `issued key ${key} was forgotten`);
  for (const key of outstanding) assert.ok(current.issuedKeys.includes(key), `outstanding key ${key} is not in issuedKeys`);

  // Leases and the sweeper index.
  if (isTerminal(current.status)) {
    assert.ok(!isRunning(current, now), `a ${current.status} task has a live lease`);
    assert.equal(current.lease, undefined, `a ${current.status} task still names a lease`);
    assert.equal(current.sweepAt, undefined, `a ${current.status} task is still on the sweeper index`);
  }
  if (current.status === 'input_required') {
    assert.equal(current.lease, undefined, 'a task waiting for input holds a lease');
    assert.equal(current.sweepAt, undefined, 'a task waiting for input is on the sweeper index');
  }
  if (current.status === 'working') {
    assert.ok(current.sweepAt !== undefined, 'a working task is not on the sweeper index (a vanished worker would never be noticed)');
    if (isRunning(current, now)) {
      // A claim leaves `sweepAt` alone (a task claimed late may be due while its first lease is live: the
      // documented trade-off), but once its holder has renewed the lease, the task is not due before the
      // renewed lease has ended and the grace passed.
      const claim = task.claims.find((candidate) => candidate.leaseOwner === current.lease!.owner);
      assert.ok(claim, 'the lease holder took the lease with a claim');
      if (claim.record.lease?.until !== current.lease!.until) {
        assert.ok(
          current.sweepAt >= current.lease!.until + POLICY.sweepGraceMs,
          'a renewed lease is due for the sweeper before it ends + sweepGraceMs',
        );
      }
    }
  }

  // Bookkeeping.
  assert.ok(current.ttlMs >= before.ttlMs, `ttlMs shrank from ${before.ttlMs} to ${current.ttlMs}`);
  assert.ok(current.lastUpdatedAt >= before.lastUpdatedAt, 'lastUpdatedAt went back');
  // attempts restart at 0 only on a clean hand-over (a release with handedOver, or waiting for
  // input); claims in the same concurrent step (at most 3 operations) may have counted since.
  if (current.attempts < before.attempts)
    assert.ok(current.attempts <= 3, `attempts went back from ${before.attempts} to ${current.attempts}, more than a restart`);
  if (before.cancelRequested) assert.equal(current.cancelRequested, true, 'cancelRequested was cleared');
  if (isTerminal(current.status) && !isTerminal(before.status)) {
    assert.ok(
      current.createdAt + current.ttlMs >= current.lastUpdatedAt + POLICY.retentionMs,
      'a terminal task is not kept for retentionMs after it ended',
    );
  }
  const fields = current as unknown as Record<string, unknown>;
  assert.equal('result' in fields, current.status === 'completed', `${current.status} task ${'result' in fields ? 'has' : 'lacks'} result`);
  assert.equal('error' in fields, current.status === 'failed', `${current.status} task ${'error' in fields ? 'has' : 'lacks'} error`);
  assert.equal(
    'inputRequests' in fields,
    current.status === 'input_required',
    `${current.status} task ${'inputRequests' in fields ? 'has' : 'lacks'} inputRequests`,
  );
}
