/**
 * The driver's side of the {@link TaskStore} property test
 * (`task-store.property.test.ts`): what it knows of each task, the
 * operations it applies (each with the result the port's doc comments
 * promise when it runs alone, and a check of the row right after), and the
 * choices behind them.
 *
 * Every random choice an operation makes is read from a {@link Dice}: a short
 * tape of numbers that fast-check generates (and shrinks towards 0) as a
 * parameter of the command that makes the choice.
 */
import assert from 'node:assert/strict';
import {
  type InputRequest,
  isRunning,
  isTerminal,
  type JsonRpcErrorObject,
  type TaskOutcome,
  type TaskRecord,
} from '../../shared/tasks/model.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { LeaseLostError, TaskNotFoundError } from '../../shared/tasks/store-errors.ts';
import type { StorePolicy } from '../../shared/tasks/store-types.ts';
import { CONTRACT_POLICY } from '../contract/kit.ts';
import { newTask } from '../support/factories.ts';

export const POLICY: StorePolicy = CONTRACT_POLICY;
/** W: a task is due for the sweeper one lease plus the grace after it is due to run. */
export const WINDOW = POLICY.leaseMs + POLICY.sweepGraceMs;
export const T0 = 1_700_000_000_000;
export const OWNER = 'alice';
const LEASES = [5_000, 30_000, 120_000] as const;
export const MAX_LEASE = Math.max(...LEASES);
export const TTLS = [30_000, 10 * 60_000, 60 * 60_000, 2 * 60 * 60_000] as const;
/** Tasks per run, ended and expired ones included (every step reads them all). */
export const MAX_TASKS = 8;
/** Numbers on one command's tape: enough for the choices of a concurrent step of three operations. */
export const TAPE_LENGTH = 32;
/** Tape values are in [0, TAPE_RANGE). */
export const TAPE_RANGE = 0x10000;

// --- choices read from a tape ---------------------------------------------------

/**
 * Random choices read from a tape of numbers in [0, {@link TAPE_RANGE}):
 * a tape shrunk to zeros makes the first choice everywhere, and a used-up
 * tape reads as zeros.
 */
export class Dice {
  #at = 0;
  constructor(private readonly tape: readonly number[]) {}
  /** Uniform in [0, 1). */
  next(): number {
    const value = this.tape[this.#at++] ?? 0;
    return value / TAPE_RANGE;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
  /** One of `choices`, with probability proportional to its weight. */
  weighted<T>(choices: ReadonlyArray<readonly [number, T]>): T {
    const total = choices.reduce((sum, [weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [weight, value] of choices) {
      if ((roll -= weight) < 0) return value;
    }
    return choices[choices.length - 1]![1];
  }
}

// --- the driver's view of the world -------------------------------------------

export interface Claim {
  leaseOwner: string;
  /** The record `claim` returned: what a worker hands back to `finish`. */
  record: TaskRecord;
}

export interface Tracked {
  /** `t0`, `t1`, … in traces. */
  name: string;
  taskId: string;
  /** The record at the last observation; `undefined` once gone. */
  last: TaskRecord | undefined;
  /** Seen missing once (expired): must stay missing. */
  gone: boolean;
  claims: Claim[];
  /** Keys the store reported as accepted by `answer`. */
  answered: Set<string>;
  nextKey: number;
}

/** A check of one task's record right after a single (non-concurrent) operation. */
export type AfterCheck = (current: TaskRecord | undefined) => void;

export interface World {
  /** The choices of the step being run. */
  rng: Dice;
  store: TaskStore;
  prefix: string;
  now: number;
  tasks: Tracked[];
  trace: string[];
  counter: number;
  /** Steps run so far. */
  steps: number;
  /** How often each kind of operation had each kind of result (printed, to show what the runs exercise). */
  stats: Map<string, number>;
}

export function count(world: World, key: string): void {
  world.stats.set(key, (world.stats.get(key) ?? 0) + 1);
}

/** `claim w3 30000ms` + `leased` → `claim:leased`; notes with values keep their first word. */
export function statKey(label: string, note: string): string {
  const outcome = note.startsWith('accepted=[]')
    ? 'none accepted'
    : note.startsWith('accepted=')
      ? note.endsWith('resumed=true')
        ? 'resumed'
        : 'partial'
      : note.split(' ')[0];
  return `${label.split(' ')[0]}:${outcome}`;
}

/** An operation on one task. `solo` is false inside a concurrent step (results are then not predicted). */
export interface Op {
  label: string;
  run(world: World, solo: boolean): Promise<{ note: string; after?: AfterCheck | undefined; claimed?: boolean; finished?: boolean }>;
}

const ELICIT: InputRequest = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } },
};
const SAMPLE: InputRequest = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } };

function fresh(world: World, kind: string): string {
  return `${kind}${++world.counter}`;
}

/** A lease owner for a worker write: mostly the latest claimant, sometimes a stale one, sometimes one that never claimed. */
function pickClaim(world: World, task: Tracked): Claim | undefined {
  const holder = task.claims.find((claim) => claim.leaseOwner === task.last?.lease?.owner);
  const stale = task.claims.filter((claim) => claim !== holder);
  const roll = world.rng.next();
  if (holder && roll < 0.65) return holder;
  if (stale.length > 0 && roll < 0.85) return world.rng.pick(stale);
  const record = task.claims[task.claims.length - 1]?.record ?? task.last;
  return record ? { leaseOwner: fresh(world, 'ghost'), record } : undefined;
}

function randomOutcome(world: World, task: Tracked, batchKeys: string[]): TaskOutcome {
  const { rng } = world;
  return rng.weighted<() => TaskOutcome>([
    [
      45,
      () => {
        const count = rng.int(1, 3);
        const inputRequests: Record<string, InputRequest> = {};
        for (let i = 0; i < count; i++) {
          const key = `${task.name}-k${task.nextKey++}`;
          inputRequests[key] = rng.chance(0.5) ? ELICIT : SAMPLE;
          batchKeys.push(key);
        }
        return { status: 'input_required', inputRequests };
      },
    ],
    [25, () => ({ status: 'completed', result: { content: [{ type: 'text', text: fresh(world, 'r') }], isError: rng.chance(0.2) } })],
    [
      20,
      () => ({
        status: 'failed',
        error: { code: -32603, message: fresh(world, 'boom') },
        ...(rng.chance(0.5) ? { statusMessage: 'it broke' } : {}),
      }),
    ],
    [20, () => ({ status: 'cancelled', ...(rng.chance(0.5) ? { statusMessage: 'stopped' } : {}) })],
  ])();
}

function describeOutcome(outcome: TaskOutcome): string {
  return outcome.status === 'input_required' ? `input_required{${Object.keys(outcome.inputRequests).join(',')}}` : outcome.status;
}

/** Runs `action`, turning the errors the port documents for it into a note. */
async function expecting<T>(
  action: () => Promise<T>,
  ...allowed: Array<new (...args: never[]) => Error>
): Promise<{ value?: T; error?: Error }> {
  try {
    return { value: await action() };
  } catch (error) {
    if (allowed.some((type) => error instanceof type)) return { error: error as Error };
    throw error;
  }
}

// --- operations -----------------------------------------------------------------

function claimOp(world: World, task: Tracked): Op {
  const leaseOwner = fresh(world, 'w');
  const leaseMs = POLICY.leaseMs;
  return {
    label: `claim ${leaseOwner} ${leaseMs}ms`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const leased = await w.store.claim(task.taskId, leaseOwner, now);
      if (leased) task.claims.push({ leaseOwner, record: leased });
      if (solo) {
        const expected = before !== undefined && before.status === 'working' && !isRunning(before, now);
        assert.equal(
          leased !== undefined,
          expected,
          `claim should ${expected ? 'succeed' : 'return undefined'} (status ${before?.status}, lease ${JSON.stringify(before?.lease)})`,
        );
      }
      if (leased) {
        assert.equal(leased.status, 'working', 'claim returns a working task');
        assert.deepEqual(leased.lease, { owner: leaseOwner, until: now + leaseMs }, 'claim returns the task as leased by us');
        if (solo && before) {
          assert.equal(leased.attempts, before.attempts + 1, 'claim counts an attempt');
          assert.equal(leased.sweepAt, before.sweepAt, 'claim leaves sweepAt alone');
        }
      }
      return {
        note: leased ? 'leased' : 'none',
        claimed: leased !== undefined,
        after: leased
          ? (current) => {
              assert.equal(current?.lease?.owner, leaseOwner, 'the lease just taken is in the row');
              assert.equal(current?.sweepAt, before?.sweepAt, 'claim leaves sweepAt alone');
            }
          : undefined,
      };
    },
  };
}

function heartbeatOp(world: World, task: Tracked): Op | undefined {
  const claim = pickClaim(world, task);
  if (!claim) return undefined;
  // A renewal (with or without a message), or a progress message alone (sometimes not even that).
  const leaseMs = world.rng.chance(0.6) ? world.rng.pick(LEASES) : undefined;
  const message =
    leaseMs === undefined || world.rng.chance(0.5) ? (world.rng.chance(0.9) ? fresh(world, 'progress') : undefined) : undefined;
  const options = { ...(leaseMs === undefined ? {} : { leaseMs }), ...(message === undefined ? {} : { statusMessage: message }) };
  return {
    label: `${leaseMs === undefined ? 'progress' : `heartbeat ${leaseMs}ms`} ${claim.leaseOwner}${message ? ` "${message}"` : ''}`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const { value, error } = await expecting(() => w.store.heartbeat(task.taskId, claim.leaseOwner, now, options), LeaseLostError);
      if (solo) {
        const ours = before !== undefined && !isTerminal(before.status) && before.lease?.owner === claim.leaseOwner;
        assert.equal(
          error === undefined,
          ours,
          `heartbeat should ${ours ? 'renew' : 'throw LeaseLostError'} (lease ${JSON.stringify(before?.lease)}, status ${before?.status})`,
        );
        if (value && before) assert.equal(value.cancelRequested, before.cancelRequested, 'heartbeat reports cancelRequested');
      }
      return {
        note: error ? 'lease lost' : `ok cancelRequested=${value?.cancelRequested}`,
        after: value
          ? (current) => {
              if (leaseMs !== undefined) {
                assert.deepEqual(
                  current?.lease,
                  { owner: claim.leaseOwner, until: now + leaseMs },
                  'heartbeat with leaseMs renews the lease',
                );
                assert.equal(
                  current?.sweepAt,
                  now + leaseMs + POLICY.sweepGraceMs,
                  'heartbeat with leaseMs moves sweepAt past the renewed lease',
                );
              } else {
                assert.deepEqual(current?.lease, before?.lease, 'heartbeat without leaseMs leaves the lease alone');
                assert.equal(current?.sweepAt, before?.sweepAt, 'heartbeat without leaseMs leaves sweepAt alone');
              }
              if (message !== undefined) {
                assert.equal(current?.statusMessage, message, 'heartbeat writes the status message');
                assert.equal(current?.lastUpdatedAt, now, 'heartbeat with a message writes lastUpdatedAt');
              } else {
                assert.equal(current?.statusMessage, before?.statusMessage, 'heartbeat without a message leaves statusMessage alone');
              }
            }
          : undefined,
      };
    },
  };
}

function finishOp(world: World, task: Tracked, batchKeys: string[]): Op | undefined {
  const claim = pickClaim(world, task);
  if (!claim) return undefined;
  const outcome = randomOutcome(world, task, batchKeys);
  return {
    label: `finish ${claim.leaseOwner} ${describeOutcome(outcome)}`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const { value, error } = await expecting(() => w.store.finish(claim.record, claim.leaseOwner, outcome, now), LeaseLostError);
      if (solo) {
        const ours = before !== undefined && !isTerminal(before.status) && before.lease?.owner === claim.leaseOwner;
        assert.equal(
          error === undefined,
          ours,
          `finish should ${ours ? 'succeed' : 'throw LeaseLostError'} (lease ${JSON.stringify(before?.lease)}, status ${before?.status})`,
        );
      }
      if (value) {
        assert.equal(value.status, outcome.status, 'finish returns the outcome status');
        assert.equal(value.lease, undefined, 'finish releases the lease');
      }
      return {
        note: error ? 'lease lost' : 'written',
        finished: value !== undefined,
        after: value
          ? (current) => {
              assert.equal(current?.status, outcome.status, 'the outcome is in the row');
              if (current?.status === 'input_required' && outcome.status === 'input_required') {
                assert.deepEqual(current.inputRequests, outcome.inputRequests, 'the new requests are outstanding');
              }
            }
          : undefined,
      };
    },
  };
}

function releaseOp(world: World, task: Tracked): Op | undefined {
  const claim = pickClaim(world, task);
  if (!claim) return undefined;
  const delay = world.rng.int(0, 60_000);
  const handedOver = world.rng.int(0, 1) === 1;
  return {
    label: `release ${claim.leaseOwner} resume+${delay}ms${handedOver ? ' handed over' : ''}`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const resumeAt = now + delay;
      await w.store.release(task.taskId, claim.leaseOwner, resumeAt, { handedOver });
      if (!solo) return { note: 'done' };
      const ours = before !== undefined && !isTerminal(before.status) && before.lease?.owner === claim.leaseOwner;
      return {
        note: ours ? 'released' : 'not ours',
        after: (current) => {
          if (!ours) {
            if (before && current) assert.deepEqual(current, before, 'releasing a lease that is not ours changes nothing');
            return;
          }
          assert.equal(current?.lease, undefined, 'release removes the lease');
          assert.equal(current?.status, before?.status, 'release keeps the status');
          assert.equal(current?.sweepAt, resumeAt + WINDOW, 'release makes the task due at resumeAt + leaseMs + sweepGraceMs');
          assert.equal(
            current?.attempts,
            handedOver ? 0 : before?.attempts,
            'a clean hand-over restarts attempts, any other release keeps them',
          );
        },
      };
    },
  };
}

function failOp(world: World, task: Tracked): Op {
  const error: JsonRpcErrorObject = { code: -32603, message: 'Internal error' };
  const message = fresh(world, 'dlq');
  return {
    label: `fail "${message}"`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const failed = (await w.store.fail(task.taskId, { error: error, statusMessage: message, now: now })) !== undefined;
      if (solo) {
        const expected = before !== undefined && !isTerminal(before.status) && !isRunning(before, now);
        assert.equal(failed, expected, `fail should return ${expected} (status ${before?.status}, lease ${JSON.stringify(before?.lease)})`);
      }
      return {
        note: String(failed),
        after: failed
          ? (current) => {
              assert.equal(current?.status, 'failed', 'fail ends the task failed');
              if (current?.status === 'failed') assert.deepEqual(current.error, error);
              assert.equal(current?.statusMessage, message, 'fail writes the diagnostic statusMessage');
            }
          : undefined,
      };
    },
  };
}

function answerOp(world: World, task: Tracked, batchKeys: string[]): Op {
  const { rng } = world;
  const outstanding = task.last?.status === 'input_required' ? Object.keys(task.last.inputRequests) : [];
  const open = [...outstanding, ...batchKeys];
  // Mostly some of the open keys (often all of them, to drive resumption), plus noise.
  const keys = new Set(rng.chance(0.4) ? open : open.filter(() => rng.chance(0.5)));
  if (rng.chance(0.3)) keys.add(fresh(world, 'unknown'));
  if (rng.chance(0.2) && task.answered.size > 0) keys.add(rng.pick([...task.answered]));
  if (rng.chance(0.05)) keys.add('toString');
  const responses: Record<string, unknown> = {};
  for (const key of rng.shuffle([...keys])) responses[key] = { action: 'accept', content: { n: rng.int(0, 999) } };
  return {
    label: `answer {${Object.keys(responses).join(',')}}`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const { value, error } = await expecting(() => w.store.answer(task.taskId, OWNER, responses, now), TaskNotFoundError);
      for (const key of value?.accepted ?? []) task.answered.add(key);
      if (value) {
        for (const key of value.accepted) assert.ok(Object.hasOwn(responses, key), `answer accepted ${key}, which it was not given`);
      }
      if (solo) {
        assert.equal(error !== undefined, before === undefined, `answer should ${before ? 'not throw' : 'throw TaskNotFoundError'}`);
        if (value && before) {
          const open = before.status === 'input_required' ? Object.keys(before.inputRequests) : [];
          const expected = Object.keys(responses).filter((key) => open.includes(key));
          assert.deepEqual([...value.accepted].sort(), expected.sort(), 'answer accepts exactly the outstanding keys it is given');
          const resumed = expected.length > 0 && open.every((key) => expected.includes(key));
          assert.equal(value.resumed, resumed, 'answer resumes exactly when the last outstanding key is answered');
        }
      }
      return {
        note: error ? 'not found' : `accepted=[${value?.accepted.join(',')}] resumed=${value?.resumed}`,
        after:
          value && value.accepted.length > 0
            ? (current) => {
                for (const key of value.accepted)
                  assert.deepEqual(current?.inputResponses[key], responses[key], `the answer to ${key} is recorded`);
                if (value.resumed) {
                  assert.equal(current?.status, 'working', 'answering the last key resumes the task');
                  assert.equal(current?.sweepAt, now + WINDOW, 'a resumed task is due at now + leaseMs + sweepGraceMs');
                } else assert.equal(current?.status, 'input_required', 'a partial answer leaves the task waiting');
              }
            : undefined,
      };
    },
  };
}

function cancelOp(_world: World, task: Tracked): Op {
  return {
    label: 'cancel',
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const { value: outcome, error } = await expecting(() => w.store.cancel(task.taskId, OWNER, now), TaskNotFoundError);
      const value = outcome?.result;
      if (solo) {
        const expected =
          before === undefined ? 'not found' : isTerminal(before.status) ? 'terminal' : isRunning(before, now) ? 'requested' : 'cancelled';
        assert.equal(error ? 'not found' : value, expected, 'cancel result');
      }
      return {
        note: error ? 'not found' : String(value),
        after:
          value === 'cancelled'
            ? (current) => {
                assert.equal(current?.status, 'cancelled', "cancel 'cancelled' ends the task");
                assert.equal(current?.cancelRequested, true);
              }
            : value === 'requested'
              ? (current) => {
                  assert.equal(current?.cancelRequested, true, "cancel 'requested' sets cancelRequested");
                  assert.equal(current?.status, before?.status, "cancel 'requested' keeps the status");
                }
              : undefined,
      };
    },
  };
}

export function rescheduleOp(world: World, task: Tracked): Op {
  const delay = world.rng.int(1_000, 200_000);
  return {
    label: `reschedule +${delay}ms`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const nextAt = now + delay;
      const moved = await w.store.reschedule(task.taskId, now, nextAt);
      if (solo) {
        const due = before?.sweepAt !== undefined && before.sweepAt <= now;
        assert.equal(moved, due, `reschedule should return ${due} (sweepAt ${before?.sweepAt}, now ${now})`);
      }
      return {
        note: String(moved),
        after: moved ? (current) => assert.equal(current?.sweepAt, nextAt, 'reschedule moves sweepAt') : undefined,
      };
    },
  };
}

// --- steps ----------------------------------------------------------------------

export async function createTask(world: World): Promise<void> {
  const index = world.tasks.length;
  const ttlMs = world.rng.pick(TTLS);
  const taskId = `${world.prefix}-t${index}`;
  const { task, created } = await world.store.create(newTask({ taskId, owner: OWNER, arguments: { n: index }, now: world.now, ttlMs }));
  assert.equal(created, true);
  assert.equal(task.status, 'working', 'tasks begin in working (spec §2)');
  assert.equal(task.lease, undefined);
  assert.equal(task.sweepAt, world.now + WINDOW, 'a new task is on the sweeper index, due at now + leaseMs + sweepGraceMs');
  world.tasks.push({ name: `t${index}`, taskId, last: task, gone: false, claims: [], answered: new Set(), nextKey: 0 });
  world.trace.push(`@${world.now - T0} create t${index} ttl=${ttlMs}ms`);
}

/** One operation on `task` of a random kind (`batchKeys`: input keys issued earlier in the same concurrent step). */
export function randomOp(world: World, task: Tracked, batchKeys: string[]): Op {
  // Weighted by the state last seen, so that runs go deep (leases taken and
  // used, input rounds answered) instead of ending every task at once; every
  // operation keeps some weight in every state, stale and misplaced ones included.
  const last = task.last;
  const state =
    !last || isTerminal(last.status)
      ? 'ended'
      : last.status === 'input_required'
        ? 'waiting'
        : isRunning(last, world.now)
          ? 'running'
          : 'idle';
  //                claim heartbeat finish release fail answer cancel reschedule
  const weights = {
    idle: /*     */ [30, 5, 5, 4, 6, 4, 5, 4],
    running: /*  */ [6, 15, 25, 8, 3, 3, 5, 3],
    waiting: /*  */ [4, 3, 4, 2, 3, 30, 4, 2],
    ended: /*    */ [3, 3, 3, 2, 2, 3, 3, 2],
  }[state];
  for (;;) {
    const make = world.rng.weighted<() => Op | undefined>([
      [weights[0]!, () => claimOp(world, task)],
      [weights[1]!, () => heartbeatOp(world, task)],
      [weights[2]!, () => finishOp(world, task, batchKeys)],
      [weights[3]!, () => releaseOp(world, task)],
      [weights[4]!, () => failOp(world, task)],
      [weights[5]!, () => answerOp(world, task, batchKeys)],
      [weights[6]!, () => cancelOp(world, task)],
      [weights[7]!, () => rescheduleOp(world, task)],
    ]);
    const op = make();
    if (op) return op;
  }
}

/** Mostly a task that is not terminal; sometimes an ended or expired one (every operation on it must be a no-op). */
export function pickTask(world: World): Tracked {
  const active = world.tasks.filter((task) => task.last && !isTerminal(task.last.status));
  return active.length > 0 && world.rng.chance(0.8) ? world.rng.pick(active) : world.rng.pick(world.tasks);
}

export function activeCount(world: World): number {
  return world.tasks.filter((task) => task.last && !isTerminal(task.last.status)).length;
}
