/**
 * Property-based test of the {@link TaskStore} port (issue 3): a seeded random
 * driver applies random interleavings of worker progress (claims by fresh and
 * stale lease owners, heartbeats, finishes with every outcome, releases), the
 * DLQ path (`fail`), client answers and cancels, the sweeper (`findDue` +
 * `reschedule`) and jumps of the clock past leases, TTLs and retention, some
 * of them concurrently (`Promise.all` of 2–3 operations on one task). After
 * every step it reads every task at the current clock and checks the
 * invariants of spec §2 and of the port's doc comments.
 *
 * Both stores run the same seeds: the in-memory reference and the DynamoDB
 * adapter on dynalite (fewer seeds, a fresh table per seed). A failure names
 * its seed and prints the trace of the run; replay with
 * `PROPERTY_SEEDS=17,42 node --import tsx --test test/property/task-store.property.test.ts`
 * (`PROPERTY_OPS` changes the number of operations per seed). On the
 * DynamoDB store the outcome of a race inside a concurrent step may differ
 * from run to run; everything else is determined by the seed.
 *
 * Two kinds of checks:
 * - invariants, checked on every observation whatever happened: status changes
 *   allowed by `TRANSITIONS`; a terminal record never changes again and
 *   disappears only once expired; a non-terminal task never disappears;
 *   `input_required` has ≥ 1 outstanding request; answered keys never come
 *   back as outstanding; `version` never decreases and grows with every change;
 *   no live lease on a terminal task; a renewed lease covered by `sweepAt`
 *   (a claim leaves `sweepAt` alone); bookkeeping (`sweepAt`, `ttlMs`,
 *   `issuedKeys`, `inputResponses`, status-specific fields) consistent;
 * - results of single (non-concurrent) operations against what the port's
 *   doc comments promise, given the state observed just before.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTaskTable, startDynalite, type LocalDynamoDb } from '../../infra/local/dynamodb.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb-store.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory-store.ts';
import {
  canTransition,
  isExpired,
  isRunning,
  isTerminal,
  type InputRequest,
  type JsonRpcErrorObject,
  type TaskOutcome,
  type TaskRecord,
} from '../../shared/tasks/model.ts';
import { LeaseLostError, TaskNotFoundError, type StorePolicy, type TaskStore } from '../../shared/tasks/store.ts';
import { CONTRACT_POLICY } from '../contract/task-store.contract.ts';

const POLICY: StorePolicy = CONTRACT_POLICY;
/** W: a task is due for the sweeper one lease plus the grace after it is due to run. */
const WINDOW = POLICY.leaseMs + POLICY.sweepGraceMs;
const T0 = 1_700_000_000_000;
const OWNER = 'alice';
const OPS_PER_SEED = positiveInt(process.env['PROPERTY_OPS'], 40);
const MEMORY_SEEDS = seedList(200);
const DYNAMODB_SEEDS = seedList(25);
const LEASES = [5_000, 30_000, 120_000] as const;
const MAX_LEASE = Math.max(...LEASES);
const TTLS = [30_000, 10 * 60_000, 60 * 60_000, 2 * 60 * 60_000] as const;
/** Tasks per seed, ended and expired ones included (every step reads them all). */
const MAX_TASKS = 8;
const FAR_FUTURE_MS = 100 * 365 * 86_400_000;

// --- a small seeded PRNG (mulberry32) ---------------------------------------

class Rng {
  #state: number;
  constructor(seed: number) {
    // Spread small consecutive seeds over the state space.
    this.#state = Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
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
  /** A random subset, in random order. */
  subset<T>(items: readonly T[]): T[] {
    return this.shuffle(items.filter(() => this.chance(0.5)));
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

interface Claim {
  leaseOwner: string;
  /** The record `claim` returned: what a worker hands back to `finish`. */
  record: TaskRecord;
}

interface Tracked {
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
type AfterCheck = (current: TaskRecord | undefined) => void;

interface World {
  rng: Rng;
  store: TaskStore;
  prefix: string;
  now: number;
  tasks: Tracked[];
  trace: string[];
  counter: number;
  /** How often each kind of operation had each kind of result (printed, to show what the seeds exercise). */
  stats: Map<string, number>;
}

function count(world: World, key: string): void {
  world.stats.set(key, (world.stats.get(key) ?? 0) + 1);
}

/** `claim w3 30000ms` + `leased` → `claim:leased`; notes with values keep their first word. */
function statKey(label: string, note: string): string {
  const outcome = note.startsWith('accepted=[]') ? 'none accepted' : note.startsWith('accepted=') ? (note.endsWith('resumed=true') ? 'resumed' : 'partial') : note.split(' ')[0];
  return `${label.split(' ')[0]}:${outcome}`;
}

/** An operation on one task. `solo` is false inside a concurrent step (results are then not predicted). */
interface Op {
  label: string;
  run(world: World, solo: boolean): Promise<{ note: string; after?: AfterCheck; claimed?: boolean; finished?: boolean }>;
}

const ELICIT: InputRequest = { method: 'elicitation/create', params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } } };
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
    [45, () => {
      const count = rng.int(1, 3);
      const inputRequests: Record<string, InputRequest> = {};
      for (let i = 0; i < count; i++) {
        const key = `${task.name}-k${task.nextKey++}`;
        inputRequests[key] = rng.chance(0.5) ? ELICIT : SAMPLE;
        batchKeys.push(key);
      }
      return { status: 'input_required', inputRequests };
    }],
    [25, () => ({ status: 'completed', result: { content: [{ type: 'text', text: fresh(world, 'r') }], isError: rng.chance(0.2) } })],
    [20, () => ({ status: 'failed', error: { code: -32603, message: fresh(world, 'boom') }, ...(rng.chance(0.5) ? { statusMessage: 'it broke' } : {}) })],
    [20, () => ({ status: 'cancelled', ...(rng.chance(0.5) ? { statusMessage: 'stopped' } : {}) })],
  ])();
}

function describeOutcome(outcome: TaskOutcome): string {
  return outcome.status === 'input_required' ? `input_required{${Object.keys(outcome.inputRequests).join(',')}}` : outcome.status;
}

/** Runs `action`, turning the errors the port documents for it into a note. */
async function expecting<T>(action: () => Promise<T>, ...allowed: Array<new (...args: never[]) => Error>): Promise<{ value?: T; error?: Error }> {
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
  const leaseMs = world.rng.pick(LEASES);
  return {
    label: `claim ${leaseOwner} ${leaseMs}ms`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const leased = await w.store.claim(task.taskId, leaseOwner, now, leaseMs);
      if (leased) task.claims.push({ leaseOwner, record: leased });
      if (solo) {
        const expected = before !== undefined && before.status === 'working' && !isRunning(before, now);
        assert.equal(leased !== undefined, expected, `claim should ${expected ? 'succeed' : 'return undefined'} (status ${before?.status}, lease ${JSON.stringify(before?.lease)})`);
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
  const message = leaseMs === undefined || world.rng.chance(0.5) ? (world.rng.chance(0.9) ? fresh(world, 'progress') : undefined) : undefined;
  const options = { ...(leaseMs === undefined ? {} : { leaseMs }), ...(message === undefined ? {} : { statusMessage: message }) };
  return {
    label: `${leaseMs === undefined ? 'progress' : `heartbeat ${leaseMs}ms`} ${claim.leaseOwner}${message ? ` "${message}"` : ''}`,
    async run(w, solo) {
      const before = task.last;
      const now = w.now;
      const { value, error } = await expecting(() => w.store.heartbeat(task.taskId, claim.leaseOwner, now, options), LeaseLostError);
      if (solo) {
        const ours = before !== undefined && !isTerminal(before.status) && before.lease?.owner === claim.leaseOwner;
        assert.equal(error === undefined, ours, `heartbeat should ${ours ? 'renew' : 'throw LeaseLostError'} (lease ${JSON.stringify(before?.lease)}, status ${before?.status})`);
        if (value && before) assert.equal(value.cancelRequested, before.cancelRequested, 'heartbeat reports cancelRequested');
      }
      return {
        note: error ? 'lease lost' : `ok cancelRequested=${value?.cancelRequested}`,
        after: value
          ? (current) => {
              if (leaseMs !== undefined) {
                assert.deepEqual(current?.lease, { owner: claim.leaseOwner, until: now + leaseMs }, 'heartbeat with leaseMs renews the lease');
                assert.equal(current?.sweepAt, now + leaseMs + POLICY.sweepGraceMs, 'heartbeat with leaseMs moves sweepAt past the renewed lease');
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
        assert.equal(error === undefined, ours, `finish should ${ours ? 'succeed' : 'throw LeaseLostError'} (lease ${JSON.stringify(before?.lease)}, status ${before?.status})`);
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
      await w.store.release(task.taskId, claim.leaseOwner, now, resumeAt, { handedOver });
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
          assert.equal(current?.attempts, handedOver ? 0 : before?.attempts, 'a clean hand-over restarts attempts, any other release keeps them');
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
      const failed = await w.store.fail(task.taskId, error, message, now);
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
                for (const key of value.accepted) assert.deepEqual(current?.inputResponses[key], responses[key], `the answer to ${key} is recorded`);
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
      const { value, error } = await expecting(() => w.store.cancel(task.taskId, OWNER, now), TaskNotFoundError);
      if (solo) {
        const expected = before === undefined ? 'not found' : isTerminal(before.status) ? 'terminal' : isRunning(before, now) ? 'requested' : 'cancelled';
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

function rescheduleOp(world: World, task: Tracked): Op {
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
      return { note: String(moved), after: moved ? (current) => assert.equal(current?.sweepAt, nextAt, 'reschedule moves sweepAt') : undefined };
    },
  };
}

// --- steps ----------------------------------------------------------------------

async function createTask(world: World): Promise<void> {
  const index = world.tasks.length;
  const ttlMs = world.rng.pick(TTLS);
  const taskId = `${world.prefix}-t${index}`;
  const { task, created } = await world.store.create({
    taskId,
    owner: OWNER,
    tool: 'echo',
    arguments: { n: index },
    clientCapabilities: {},
    inputResponses: {},
    now: world.now,
    ttlMs,
    pollIntervalMs: 1000,
  });
  assert.equal(created, true);
  assert.equal(task.status, 'working', 'tasks begin in working (spec §2)');
  assert.equal(task.lease, undefined);
  assert.equal(task.sweepAt, world.now + WINDOW, 'a new task is on the sweeper index, due at now + leaseMs + sweepGraceMs');
  world.tasks.push({ name: `t${index}`, taskId, last: task, gone: false, claims: [], answered: new Set(), nextKey: 0 });
  world.trace.push(`@${world.now - T0} create t${index} ttl=${ttlMs}ms`);
}

/** One operation on `task` of a random kind (`batchKeys`: input keys issued earlier in the same concurrent step). */
function randomOp(world: World, task: Tracked, batchKeys: string[]): Op {
  // Weighted by the state last seen, so that runs go deep (leases taken and
  // used, input rounds answered) instead of ending every task at once; every
  // operation keeps some weight in every state, stale and misplaced ones included.
  const last = task.last;
  const state = !last || isTerminal(last.status) ? 'ended' : last.status === 'input_required' ? 'waiting' : isRunning(last, world.now) ? 'running' : 'idle';
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
function pickTask(world: World): Tracked {
  const active = world.tasks.filter((task) => task.last && !isTerminal(task.last.status));
  return active.length > 0 && world.rng.chance(0.8) ? world.rng.pick(active) : world.rng.pick(world.tasks);
}

function activeCount(world: World): number {
  return world.tasks.filter((task) => task.last && !isTerminal(task.last.status)).length;
}

/** One step of the run; resolves to the after-checks of single operations, by task. */
async function step(world: World): Promise<Map<Tracked, AfterCheck>> {
  const { rng } = world;
  const afters = new Map<Tracked, AfterCheck>();
  const kind = rng.weighted<string>([
    [60, 'single'],
    [14, 'concurrent'],
    [9, 'tick'],
    [5, 'past-lease'],
    [2, 'past-ttl'],
    [6, 'sweep'],
    [world.tasks.length >= MAX_TASKS ? 0 : activeCount(world) < 2 ? 12 : 3, 'create'],
  ]);
  const at = `@${world.now - T0}`;
  if (kind !== 'single' && kind !== 'concurrent' && kind !== 'sweep') count(world, kind);
  switch (kind) {
    case 'tick':
      world.now += rng.int(1, 3_000);
      world.trace.push(`${at} tick → @${world.now - T0}`);
      break;
    case 'past-lease':
      world.now += MAX_LEASE + rng.int(1, POLICY.sweepGraceMs * 2);
      world.trace.push(`${at} jump past leases → @${world.now - T0}`);
      break;
    case 'past-ttl':
      world.now += Math.max(...TTLS) + POLICY.retentionMs + rng.int(1, 60_000);
      world.trace.push(`${at} jump past TTL and retention → @${world.now - T0}`);
      break;
    case 'create':
      await createTask(world);
      break;
    case 'sweep': {
      const limit = rng.chance(0.8) ? 100 : 1;
      const due = await world.store.findDue(world.now, limit);
      const expected = world.tasks.filter((task) => task.last?.sweepAt !== undefined && task.last.sweepAt <= world.now).map((task) => task.taskId);
      const name = (id: string) => world.tasks.find((task) => task.taskId === id)?.name ?? `?${id}`;
      world.trace.push(`${at} findDue(limit ${limit}) → [${due.map(name).join(',')}]`);
      count(world, due.length > 0 ? 'findDue:some' : 'findDue:none');
      assert.equal(new Set(due).size, due.length, 'findDue returns each task once');
      for (const id of due) assert.ok(expected.includes(id), `findDue returned ${name(id)}, which is not due (${JSON.stringify(world.tasks.find((t) => t.taskId === id)?.last)})`);
      if (limit === 100) assert.deepEqual([...due].sort(), [...expected].sort(), 'findDue returns every due task');
      else assert.equal(due.length, Math.min(1, expected.length), 'findDue fills its limit');
      for (const id of due) {
        const task = world.tasks.find((t) => t.taskId === id)!;
        if (!rng.chance(0.7)) continue;
        const op = rescheduleOp(world, task);
        const { note, after } = await op.run(world, true);
        world.trace.push(`${at} [${task.name}] ${op.label} → ${note}`);
        count(world, statKey(op.label, note));
        if (after) afters.set(task, after);
      }
      break;
    }
    case 'single': {
      const task = pickTask(world);
      const op = randomOp(world, task, []);
      const { note, after } = await op.run(world, true);
      world.trace.push(`${at} [${task.name}] ${op.label} → ${note}`);
      count(world, statKey(op.label, note));
      if (after) afters.set(task, after);
      break;
    }
    case 'concurrent': {
      const task = pickTask(world);
      const batchKeys: string[] = [];
      const ops = Array.from({ length: rng.int(2, 3) }, () => randomOp(world, task, batchKeys));
      const results = await Promise.all(ops.map((op) => op.run(world, false)));
      world.trace.push(`${at} [${task.name}] ${ops.map((op, i) => `${op.label} → ${results[i]!.note}`).join('  ‖  ')}`);
      count(world, `concurrent step (${ops.length} ops)`);
      ops.forEach((op, i) => count(world, `‖${statKey(op.label, results[i]!.note)}`));
      assert.ok(results.filter((r) => r.claimed).length <= 1, 'two concurrent claims both took the lease');
      assert.ok(results.filter((r) => r.finished).length <= 1, 'two concurrent finishes were both written');
      break;
    }
  }
  // Workers and sweepers see small gaps between steps.
  world.now += rng.int(0, 200);
  return afters;
}

/**
 * Reads every task at the current clock and checks the invariants against
 * the previous observation. Expired tasks are read again only with `all`
 * (at the end of a seed): reads are what a DynamoDB step mostly costs.
 * With `probeFarFuture`, every task is also read far past every TTL.
 */
async function observe(world: World, afters: Map<Tracked, AfterCheck>, all = false, probeFarFuture = false): Promise<void> {
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
        error.message += `\n  task ${task.name} at @${now - T0}\n  before: ${JSON.stringify(task.last)}\n  after:  ${JSON.stringify(current)}`;
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
  for (const key of Object.keys(before.inputResponses)) assert.ok(Object.hasOwn(current.inputResponses, key), `the answer to ${key} was lost`);
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
        assert.ok(current.sweepAt >= current.lease!.until + POLICY.sweepGraceMs, 'a renewed lease is due for the sweeper before it ends + sweepGraceMs');
      }
    }
  }

  // Bookkeeping.
  assert.ok(current.ttlMs >= before.ttlMs, `ttlMs shrank from ${before.ttlMs} to ${current.ttlMs}`);
  assert.ok(current.lastUpdatedAt >= before.lastUpdatedAt, 'lastUpdatedAt went back');
  // attempts restart at 0 only on a clean hand-over (a release with handedOver, or waiting for
  // input); claims in the same concurrent step (at most 3 operations) may have counted since.
  if (current.attempts < before.attempts) assert.ok(current.attempts <= 3, `attempts went back from ${before.attempts} to ${current.attempts}, more than a restart`);
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
  assert.equal('inputRequests' in fields, current.status === 'input_required', `${current.status} task ${'inputRequests' in fields ? 'has' : 'lacks'} inputRequests`);
}

/** Runs one seed; throws with the seed and the trace on the first violated property. */
async function runSeed(seed: number, store: TaskStore, prefix: string, ops: number, stats: Map<string, number>): Promise<void> {
  const world: World = { rng: new Rng(seed), store, prefix, now: T0, tasks: [], trace: [], counter: 0, stats };
  try {
    const initial = world.rng.int(2, 4);
    for (let i = 0; i < initial; i++) await createTask(world);
    for (let i = 0; i < ops; i++) {
      const afters = await step(world);
      await observe(world, afters, false, i % 4 === 3);
    }
    await observe(world, new Map(), true);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const trace = world.trace.slice(-25).map((line) => `    ${line}`).join('\n');
    throw new PropertyFailure(seed, `seed ${seed}: ${message}\n  last steps:\n${trace}`, { cause: error });
  }
}

class PropertyFailure extends Error {
  constructor(readonly seed: number, message: string, options: ErrorOptions) {
    super(message, options);
    this.name = 'PropertyFailure';
  }
}

/** Runs every seed (all of them, so that a report lists each failing seed) and fails with a summary. */
async function runSeeds(label: string, seeds: readonly number[], makeStore: (seed: number) => Promise<TaskStore>): Promise<void> {
  const failures: PropertyFailure[] = [];
  const stats = new Map<string, number>();
  const started = Date.now();
  for (const seed of seeds) {
    const store = await makeStore(seed);
    try {
      await runSeed(seed, store, `s${seed}`, OPS_PER_SEED, stats);
    } catch (error) {
      if (!(error instanceof PropertyFailure)) throw error;
      failures.push(error);
    }
  }
  console.log(`# ${label}: ${seeds.length} seeds × ${OPS_PER_SEED} steps in ${Date.now() - started} ms, ${failures.length} failing`);
  const sorted = [...stats].sort(([a], [b]) => a.localeCompare(b));
  console.log(`#   exercised: ${sorted.map(([key, n]) => `${key} ${n}`).join(', ')}`);
  if (failures.length === 0) return;
  // Group by the violated property (first line) so that one bug reads as one entry.
  const groups = new Map<string, number[]>();
  for (const failure of failures) {
    const headline = failure.message
      .split('\n')[0]!
      .replace(/^seed \d+: /, '')
      .replace(/ \(.*\)$/, '')
      .replace(/\bt\d+-k\d+\b/g, '<key>');
    groups.set(headline, [...(groups.get(headline) ?? []), failure.seed]);
  }
  const summary = [...groups].map(([headline, failing]) => `  - ${headline} (seeds ${failing.join(', ')})`).join('\n');
  assert.fail(
    `${failures.length} of ${seeds.length} seeds violate a property on ${label}:\n${summary}\n` +
      `replay one with PROPERTY_SEEDS=${failures[0]!.seed}\n\nfirst failure, ${failures[0]!.message}`,
  );
}

describe('TaskStore properties (seeded random interleavings)', () => {
  it(`InMemoryTaskStore: ${MEMORY_SEEDS.length} seeds × ${OPS_PER_SEED} steps`, async () => {
    await runSeeds('InMemoryTaskStore', MEMORY_SEEDS, async () => new InMemoryTaskStore(POLICY));
  });

  describe('DynamoDbTaskStore on dynalite', () => {
    let local: LocalDynamoDb;
    let client: DynamoDBClient;
    before(async () => {
      local = await startDynalite();
      client = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    });
    after(async () => {
      client?.destroy();
      await local?.close();
    });

    it(`${DYNAMODB_SEEDS.length} seeds × ${OPS_PER_SEED} steps (a fresh table per seed)`, async () => {
      await runSeeds('DynamoDbTaskStore', DYNAMODB_SEEDS, async (seed) => {
        // A table per seed: findDue sees only this seed's tasks.
        const tableName = `property-${seed}-${randomUUID()}`;
        await ensureTaskTable(client, tableName);
        return new DynamoDbTaskStore({ client, tableName, policy: POLICY });
      });
    });
  });
});

function seedList(count: number): number[] {
  const chosen = process.env['PROPERTY_SEEDS'];
  if (chosen) return chosen.split(',').map((seed) => Number(seed.trim()));
  return Array.from({ length: count }, (_, i) => i + 1);
}

function positiveInt(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}
