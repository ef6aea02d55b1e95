import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyOutcome,
  type Decision,
  decideAnswer,
  decideCancel,
  decideClaim,
  decideFail,
  decideFinish,
  decideHeartbeat,
  decideRelease,
  decideReschedule,
  IllegalTransitionError,
  newTaskRecord,
} from '../../../shared/tasks/decisions.ts';
import type { InputRequest, TaskOutcome, TaskRecord, TaskStatus } from '../../../shared/tasks/model.ts';
import {
  heartbeatFields,
  isFirstRun,
  pastAttemptCap,
  progressedPastMark,
  releaseFields,
  retriesExhausted,
  sweepWindow,
} from '../../../shared/tasks/predicates.ts';
import { LeaseLostError, TaskNotFoundError } from '../../../shared/tasks/store-errors.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const POLICY = storePolicy();
const W = 70_000;
const T0 = 1_700_000_000_000;
const NOW = T0 + 5_000;
const OWNER = 'alice';
const ELICIT: InputRequest = { method: 'elicitation/create', params: { message: 'Which file?' } };
const RESULT = { content: [{ type: 'text', text: 'done' }] };
const ERROR = { code: -32603, message: 'Gave up' };

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
/** Who holds the run lease at `NOW`: nobody, worker `w1` (live), or `w1` once its lease ran out. */
const LEASES = ['none', 'live', 'expired'] as const;
type Lease = (typeof LEASES)[number];
type Row = `${TaskStatus}/${Lease}`;

/**
 * A record of `status` as the stores keep it (a working task is on the
 * sweeper's index and due; an `input_required` one waits for key `a`), with
 * the lease `lease`, deeply frozen: a decision that modified its input would
 * throw.
 */
function record(status: TaskStatus, lease: Lease): TaskRecord {
  const base = {
    taskId: 'task-1',
    owner: OWNER,
    tool: 'greet',
    arguments: { name: 'Ada' },
    clientCapabilities: { elicitation: {} },
    createdAt: T0,
    lastUpdatedAt: T0 + 1_000,
    ttlMs: 60_000,
    pollIntervalMs: 1_000,
    inputResponses: { earlier: 'yes' },
    issuedKeys: ['earlier', 'a'],
    cancelRequested: false,
    attempts: 2,
    version: 7,
    statusMessage: 'halfway',
    ...(lease === 'none' ? {} : { lease: { owner: 'w1', until: lease === 'live' ? NOW + 1 : NOW } }),
  };
  const task: TaskRecord =
    status === 'working'
      ? { ...base, status, sweepAt: NOW }
      : status === 'input_required'
        ? { ...base, status, inputRequests: { a: ELICIT } }
        : status === 'completed'
          ? { ...base, status, result: RESULT }
          : status === 'failed'
            ? { ...base, status, error: ERROR }
            : { ...base, status };
  return deepFreeze(task);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** What a decision should come to: an error, or its result and the status of the next record (`null`: no next record). */
type Expected = { throws: new (...args: never[]) => Error } | { result: unknown; next: TaskStatus | null };

interface OperationCase {
  name: string;
  decide: (task: TaskRecord) => Decision<unknown>;
  /** The rows where the operation does something else than `otherwise`. */
  rows: Partial<Record<Row, Expected>>;
  otherwise: Expected;
}

const unchanged = <R>(result: R): Expected => ({ result, next: null });
const lost: Expected = { throws: LeaseLostError };

const OPERATIONS: OperationCase[] = [
  {
    name: 'claim',
    decide: (task) => decideClaim(task, 'w2', NOW, POLICY.leaseMs),
    rows: {
      'working/none': { result: 'the leased record', next: 'working' },
      'working/expired': { result: 'the leased record', next: 'working' },
    },
    otherwise: unchanged(undefined),
  },
  {
    name: 'heartbeat by the lease holder',
    decide: (task) => decideHeartbeat(task.taskId, task, 'w1', NOW, { leaseMs: POLICY.leaseMs, statusMessage: 'later' }, POLICY),
    rows: {
      'working/live': { result: { cancelRequested: false }, next: 'working' },
      'working/expired': { result: { cancelRequested: false }, next: 'working' },
      'input_required/live': { result: { cancelRequested: false }, next: 'input_required' },
      'input_required/expired': { result: { cancelRequested: false }, next: 'input_required' },
    },
    otherwise: lost,
  },
  {
    name: 'heartbeat by another worker',
    decide: (task) => decideHeartbeat(task.taskId, task, 'w2', NOW, { statusMessage: 'later' }, POLICY),
    rows: {},
    otherwise: lost,
  },
  ...(['completed', 'failed', 'cancelled', 'input_required'] as const).map(
    (status): OperationCase => ({
      name: `finish with ${status}`,
      decide: (task) => decideFinish(task.taskId, task, 'w1', outcomeOf(status), NOW, POLICY),
      rows: {
        'working/live': { result: 'the finished record', next: status },
        'working/expired': { result: 'the finished record', next: status },
        'input_required/live': { result: 'the finished record', next: status },
        'input_required/expired': { result: 'the finished record', next: status },
      },
      otherwise: lost,
    }),
  ),
  {
    name: 'finish by another worker',
    decide: (task) => decideFinish(task.taskId, task, 'w2', outcomeOf('completed'), NOW, POLICY),
    rows: {},
    otherwise: lost,
  },
  {
    name: 'release',
    decide: (task) => decideRelease(task, 'w1', NOW + 100, {}, POLICY),
    rows: {
      'working/live': { result: undefined, next: 'working' },
      'working/expired': { result: undefined, next: 'working' },
      'input_required/live': { result: undefined, next: 'input_required' },
      'input_required/expired': { result: undefined, next: 'input_required' },
    },
    otherwise: unchanged(undefined),
  },
  {
    name: 'fail',
    // The result is the failed record: the table says whether there is one.
    decide: (task) => {
      const decision = decideFail(task, ERROR, 'gave up', NOW, POLICY);
      return { ...decision, result: decision.result !== undefined };
    },
    rows: {
      'working/none': { result: true, next: 'failed' },
      'working/expired': { result: true, next: 'failed' },
      'input_required/none': { result: true, next: 'failed' },
      'input_required/expired': { result: true, next: 'failed' },
    },
    otherwise: unchanged(false),
  },
  {
    name: 'answer',
    decide: (task) => decideAnswer(task.taskId, task, OWNER, { a: 'A', unknown: 'ignored' }, NOW, POLICY),
    rows: {
      'input_required/none': { result: { accepted: ['a'], resumed: true }, next: 'working' },
      'input_required/live': { result: { accepted: ['a'], resumed: true }, next: 'working' },
      'input_required/expired': { result: { accepted: ['a'], resumed: true }, next: 'working' },
    },
    otherwise: unchanged({ accepted: [], resumed: false }),
  },
  {
    name: 'cancel',
    // The result carries the cancelled record when there is one: the table compares what the cancel did.
    decide: (task) => {
      const decision = decideCancel(task.taskId, task, OWNER, NOW, POLICY);
      return { ...decision, result: decision.result.result };
    },
    rows: {
      'working/live': { result: 'requested', next: 'working' },
      'input_required/live': { result: 'requested', next: 'input_required' },
      'completed/none': unchanged('terminal'),
      'completed/live': unchanged('terminal'),
      'completed/expired': unchanged('terminal'),
      'failed/none': unchanged('terminal'),
      'failed/live': unchanged('terminal'),
      'failed/expired': unchanged('terminal'),
      'cancelled/none': unchanged('terminal'),
      'cancelled/live': unchanged('terminal'),
      'cancelled/expired': unchanged('terminal'),
    },
    otherwise: { result: 'cancelled', next: 'cancelled' },
  },
  {
    name: 'reschedule',
    decide: (task) => decideReschedule(task, NOW, NOW + W),
    rows: {
      'working/none': { result: true, next: 'working' },
      'working/live': { result: true, next: 'working' },
      'working/expired': { result: true, next: 'working' },
    },
    otherwise: unchanged(false),
  },
];

function outcomeOf(status: TaskOutcome['status']): TaskOutcome {
  switch (status) {
    case 'completed':
      return { status, result: RESULT };
    case 'failed':
      return { status, error: ERROR };
    case 'cancelled':
      return { status };
    case 'input_required':
      return { status, inputRequests: { b: ELICIT } };
  }
}

describe('transitions: every operation on every status', () => {
  for (const operation of OPERATIONS) {
    describe(operation.name, () => {
      for (const status of STATUSES) {
        for (const lease of LEASES) {
          const expected = operation.rows[`${status}/${lease}`] ?? operation.otherwise;
          const what =
            'throws' in expected ? `throws ${expected.throws.name}` : expected.next === null ? 'changes nothing' : `→ ${expected.next}`;
          it(`${status}, lease ${lease}: ${what}`, () => {
            const task = record(status, lease);
            if ('throws' in expected) {
              assert.throws(() => operation.decide(task), expected.throws);
              return;
            }
            const { result, next } = operation.decide(task);
            if (expected.next === null) {
              assert.equal(next, undefined, 'no record to write');
              assert.deepEqual(result, expected.result);
              return;
            }
            assert.ok(next, 'a record to write');
            assert.equal(next.status, expected.next);
            assert.equal(next.version, task.version + 1, 'every write increments version');
            assert.equal(next.taskId, task.taskId);
            if (typeof expected.result === 'string' && expected.result.startsWith('the ')) assert.deepEqual(result, next);
            else assert.deepEqual(result, expected.result);
          });
        }
      }
    });
  }
});

describe('transitions: what each decision writes', () => {
  it('create: a working task due one W after it was created, version 1', () => {
    const input = {
      taskId: 't',
      owner: OWNER,
      tool: 'greet',
      arguments: { n: 1 },
      clientCapabilities: {},
      inputResponses: { k: 'v' },
      now: T0,
      ttlMs: 60_000,
      pollIntervalMs: 500,
    };
    assert.deepEqual(newTaskRecord(deepFreeze(input), POLICY), {
      taskId: 't',
      owner: OWNER,
      tool: 'greet',
      arguments: { n: 1 },
      clientCapabilities: {},
      status: 'working',
      createdAt: T0,
      lastUpdatedAt: T0,
      ttlMs: 60_000,
      pollIntervalMs: 500,
      inputResponses: { k: 'v' },
      issuedKeys: [],
      cancelRequested: false,
      attempts: 0,
      sweepAt: T0 + W,
      version: 1,
    });
  });

  it('the sweep window W is one lease plus the grace', () => {
    assert.equal(sweepWindow(POLICY), W);
    assert.equal(sweepWindow({ leaseMs: 1, sweepGraceMs: 2 }), 3);
  });

  it('claim: takes the lease and counts the attempt, leaves sweepAt', () => {
    const { next } = decideClaim(record('working', 'expired'), 'w2', NOW, 4_000);
    assert.deepEqual(next?.lease, { owner: 'w2', until: NOW + 4_000 });
    assert.equal(next?.attempts, 3);
    assert.equal(next?.sweepAt, NOW);
  });

  it('heartbeat: a renewal moves the lease and sweepAt; progress writes the message and lastUpdatedAt; neither leaves both alone', () => {
    assert.deepEqual(heartbeatFields('w1', NOW, { leaseMs: 4_000 }, POLICY), {
      renewal: { lease: { owner: 'w1', until: NOW + 4_000 }, sweepAt: NOW + 4_000 + POLICY.sweepGraceMs },
    });
    assert.deepEqual(heartbeatFields('w1', NOW, { statusMessage: 'm' }, POLICY), { progress: { statusMessage: 'm', lastUpdatedAt: NOW } });
    const task = record('working', 'live');
    const { result, next } = decideHeartbeat(task.taskId, task, 'w1', NOW, {}, POLICY);
    assert.deepEqual(result, { cancelRequested: false });
    assert.deepEqual(next, { ...task, version: task.version + 1 });
    assert.deepEqual(decideHeartbeat(task.taskId, { ...task, cancelRequested: true }, 'w1', NOW, {}, POLICY).result, {
      cancelRequested: true,
    });
  });

  it('heartbeat and finish name the task in LeaseLostError, also when it is missing', () => {
    assert.throws(
      () => decideHeartbeat('gone', undefined, 'w1', NOW, {}, POLICY),
      (error) => error instanceof LeaseLostError && error.taskId === 'gone',
    );
    assert.throws(
      () => decideFinish('gone', undefined, 'w1', outcomeOf('completed'), NOW, POLICY),
      (error) => error instanceof LeaseLostError && error.taskId === 'gone',
    );
  });

  it('release: drops the lease, due one W after resumeAt, and a hand-over starts attempts again', () => {
    assert.deepEqual(releaseFields(NOW, {}, POLICY), { sweepAt: NOW + W });
    assert.deepEqual(releaseFields(NOW, { handedOver: true }, POLICY), { sweepAt: NOW + W, attempts: 0 });
    const task = record('working', 'live');
    const { next } = decideRelease(task, 'w1', NOW + 100, { handedOver: true }, POLICY);
    assert.equal(next?.lease, undefined);
    assert.equal(next?.sweepAt, NOW + 100 + W);
    assert.equal(next?.attempts, 0);
    assert.equal(decideRelease(task, 'w1', NOW + 100, {}, POLICY).next?.attempts, task.attempts);
  });

  it('finish: releases the lease, leaves the index, keeps the TTL readable for the retention window', () => {
    const task = record('working', 'live');
    const { next } = decideFinish(task.taskId, task, 'w1', outcomeOf('completed'), NOW, POLICY);
    assert.equal(next?.lease, undefined);
    assert.equal(next?.sweepAt, undefined);
    assert.equal(next?.lastUpdatedAt, NOW);
    assert.equal(next?.ttlMs, NOW - T0 + POLICY.retentionMs);
    assert.deepEqual(next?.status === 'completed' && next.result, RESULT);
  });

  it('finish with input_required: records the new keys as issued and starts attempts again', () => {
    const task = record('working', 'live');
    const { next } = decideFinish(task.taskId, task, 'w1', outcomeOf('input_required'), NOW, POLICY);
    assert.deepEqual(next?.issuedKeys, ['earlier', 'a', 'b']);
    assert.deepEqual(next?.status === 'input_required' && next.inputRequests, { b: ELICIT });
    assert.equal(next?.attempts, 0);
  });

  it('finish keeps the last statusMessage unless the outcome brings one', () => {
    const task = record('working', 'live');
    assert.equal(decideFinish(task.taskId, task, 'w1', { status: 'cancelled' }, NOW, POLICY).next?.statusMessage, 'halfway');
    assert.equal(
      decideFinish(task.taskId, task, 'w1', { status: 'cancelled', statusMessage: 'stopped' }, NOW, POLICY).next?.statusMessage,
      'stopped',
    );
  });

  it('answer: a partial answer keeps the task waiting with the rest outstanding', () => {
    const task = deepFreeze({ ...record('input_required', 'none'), inputRequests: { a: ELICIT, b: ELICIT } });
    const { result, next } = decideAnswer(task.taskId, task, OWNER, { b: { picked: 1 } }, NOW, POLICY);
    assert.deepEqual(result, { accepted: ['b'], resumed: false });
    assert.equal(next?.status, 'input_required');
    assert.deepEqual(next?.status === 'input_required' && next.inputRequests, { a: ELICIT });
    assert.deepEqual(next?.inputResponses, { earlier: 'yes', b: { picked: 1 } });
    assert.equal(next?.lastUpdatedAt, NOW);
    assert.equal(next?.sweepAt, undefined);
  });

  it('answer: the last answer makes the task working again, due one W later', () => {
    const { next } = decideAnswer('task-1', record('input_required', 'none'), OWNER, { a: 'A' }, NOW, POLICY);
    assert.equal(next?.status, 'working');
    assert.equal(next && 'inputRequests' in next, false);
    assert.deepEqual(next?.inputResponses, { earlier: 'yes', a: 'A' });
    assert.equal(next?.sweepAt, NOW + W);
  });

  it('answer: only keys still outstanding are accepted', () => {
    const { result, next } = decideAnswer('task-1', record('input_required', 'none'), OWNER, { earlier: 'again', other: 1 }, NOW, POLICY);
    assert.deepEqual(result, { accepted: [], resumed: false });
    assert.equal(next, undefined);
  });

  it('cancel: a task not running ends cancelled with cancelRequested set; a running one only gets cancelRequested', () => {
    const waiting = decideCancel('task-1', record('input_required', 'none'), OWNER, NOW, POLICY).next;
    assert.equal(waiting?.status, 'cancelled');
    assert.equal(waiting?.cancelRequested, true);
    const running = record('working', 'live');
    assert.deepEqual(decideCancel('task-1', running, OWNER, NOW, POLICY).next, {
      ...running,
      cancelRequested: true,
      version: running.version + 1,
    });
  });

  it('fail: ends failed with the error and the diagnostic message', () => {
    const { next } = decideFail(record('working', 'none'), ERROR, 'gave up', NOW, POLICY);
    assert.deepEqual(next?.status === 'failed' && next.error, ERROR);
    assert.equal(next?.statusMessage, 'gave up');
  });

  it('reschedule: a task not due yet is left alone', () => {
    assert.equal(decideReschedule(deepFreeze({ ...record('working', 'none'), sweepAt: NOW + 1 }), NOW, NOW + W).next, undefined);
    const { next } = decideReschedule(record('working', 'none'), NOW, NOW + W);
    assert.equal(next?.sweepAt, NOW + W);
  });
});

describe('transitions: visibility for the owner', () => {
  for (const [name, decide] of [
    ['answer', (task: TaskRecord | undefined, owner: string, now: number) => decideAnswer('task-1', task, owner, { a: 'A' }, now, POLICY)],
    ['cancel', (task: TaskRecord | undefined, owner: string, now: number) => decideCancel('task-1', task, owner, now, POLICY)],
  ] as const) {
    it(`${name}: a missing, foreign or expired task is not found`, () => {
      const notFound = (error: unknown) => error instanceof TaskNotFoundError && error.taskId === 'task-1';
      assert.throws(() => decide(undefined, OWNER, NOW), notFound);
      assert.throws(() => decide(record('input_required', 'none'), 'mallory', NOW), notFound);
      const completed = record('completed', 'none');
      assert.throws(() => decide(completed, OWNER, completed.createdAt + completed.ttlMs), notFound);
      assert.doesNotThrow(() => decide(completed, OWNER, completed.createdAt + completed.ttlMs - 1));
    });
  }
});

describe('transitions: the table is load-bearing', () => {
  // From a non-terminal status every outcome is allowed (keeping `input_required`
  // is not a transition); from a terminal one, none is.
  for (const from of STATUSES) {
    for (const to of ['completed', 'failed', 'cancelled', 'input_required'] as const) {
      const refused = ['completed', 'failed', 'cancelled'].includes(from);
      it(`applying a ${to} outcome to a ${from} task ${refused ? 'throws IllegalTransitionError' : 'is allowed'}`, () => {
        const apply = () => applyOutcome(record(from, 'none'), outcomeOf(to), NOW, POLICY.retentionMs);
        if (refused) assert.throws(apply, (error) => error instanceof IllegalTransitionError && error.from === from && error.to === to);
        else assert.equal(apply().status, to);
      });
    }
  }
});

describe('run rules: progress past the mark, first run, attempt caps', () => {
  const cases: Array<[string, { progressMark?: number }, number | undefined, boolean]> = [
    ['no mark, no steps counted', {}, undefined, false],
    ['no mark, none recorded', {}, 0, false],
    ['no mark, one recorded', {}, 1, true],
    ['mark 3, three recorded', { progressMark: 3 }, 3, false],
    ['mark 3, four recorded', { progressMark: 3 }, 4, true],
    ['mark 3, steps not counted', { progressMark: 3 }, undefined, false],
  ];
  for (const [name, task, steps, expected] of cases) {
    it(`progressedPastMark: ${name} → ${expected}`, () => assert.equal(progressedPastMark(task, steps), expected));
  }

  it('isFirstRun: only a start message claimed for the first time', () => {
    assert.equal(isFirstRun({ attempts: 1 }, 'start'), true);
    assert.equal(isFirstRun({ attempts: 2 }, 'start'), false);
    assert.equal(isFirstRun({ attempts: 1 }, 'sweep'), false);
    assert.equal(isFirstRun({ attempts: 1 }, 'wake'), false);
  });

  it('pastAttemptCap counts runs past the cap; retriesExhausted stops at it', () => {
    assert.deepEqual(
      [2, 3, 4].map((attempts) => [pastAttemptCap({ attempts }, 3), retriesExhausted({ attempts }, 3)]),
      [
        [false, false],
        [false, true],
        [true, true],
      ],
    );
  });

  it('decideFail credits progress past the mark by the same rule', () => {
    const task = { ...newTaskRecord(newTask({ now: T0 }), POLICY), progressMark: 2 };
    const failed = decideFail(task, ERROR, 'x', NOW, POLICY, { steps: 2 });
    assert.equal(failed.result?.status, 'failed');
    assert.equal(failed.result, failed.next, 'the result is the record written');
    const credited = decideFail(task, ERROR, 'x', NOW, POLICY, { steps: 3 });
    assert.equal(credited.result, undefined);
    assert.equal(credited.next?.progressMark, 3);
  });

  it('decideCancel returns the record it ends, and no record when it only flags or finds the task ended', () => {
    const queued = newTaskRecord(newTask({ now: T0 }), POLICY);
    const cancelled = decideCancel(queued.taskId, queued, OWNER, NOW, POLICY);
    assert.equal(cancelled.result.result, 'cancelled');
    assert.equal(cancelled.result.task, cancelled.next);
    const running = { ...queued, lease: { owner: 'w1', until: NOW + 1000 } };
    assert.deepEqual(decideCancel(queued.taskId, running, OWNER, NOW, POLICY).result, { result: 'requested' });
    assert.deepEqual(decideCancel(queued.taskId, cancelled.next, OWNER, NOW + 1, POLICY).result, { result: 'terminal' });
  });
});
