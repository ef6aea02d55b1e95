/**
 * Property-based test of the {@link TaskStore} port, model-based
 * with fast-check: a run is a list of commands — worker progress (claims by
 * fresh and stale lease owners, heartbeats, finishes with every outcome,
 * releases), the DLQ path (`fail`), client answers and cancels, the sweeper
 * (`findDue` + `reschedule`) and jumps of the clock past leases, TTLs and
 * retention — some of them concurrent (2–3 operations on one task, started
 * in an order a fast-check scheduler picks). After every command it reads
 * every task at the current clock and checks the invariants of spec §2 and
 * of the port's doc comments (`task-store-checks.ts`).
 *
 * Both stores run the same property: the in-memory reference and the
 * DynamoDB adapter on dynalite (fewer runs, a fresh table per run). A failure
 * is shrunk to a minimal list of commands; the report names the violated
 * property, the trace of the shrunk run, and fast-check's seed and path.
 * Replay it (the shrunk run first) with
 * `PROPERTY_SEED=<seed> PROPERTY_PATH=<path> node --import tsx --test test/property/task-store.property.test.ts`
 * (`PROPERTY_REPLAY_PATH` takes the commands' `replayPath` of the report;
 * `PROPERTY_RUNS` and `PROPERTY_STEPS` change the budget). On the DynamoDB
 * store the outcome of a race inside a concurrent step may differ from run to
 * run; everything else is determined by the seed and path.
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
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { ensureTaskTable, type LocalDynamoDb, startDynalite } from '../../bin/local/dynamodb.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb/index.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory/index.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { observe } from './task-store-checks.ts';
import {
  type AfterCheck,
  activeCount,
  count,
  createTask,
  Dice,
  MAX_LEASE,
  MAX_TASKS,
  POLICY,
  pickTask,
  randomOp,
  rescheduleOp,
  statKey,
  T0,
  TAPE_LENGTH,
  TAPE_RANGE,
  type Tracked,
  TTLS,
  type World,
} from './task-store-world.ts';

const STEPS = positiveInt(process.env['PROPERTY_STEPS'], 40);
/** Commands generated per run: more than {@link STEPS}, as some are skipped (a task beyond MAX_TASKS) and runs stop at STEPS. */
const COMMANDS = 2 * STEPS;
const MEMORY_RUNS = positiveInt(process.env['PROPERTY_RUNS'], 200);
const DYNAMODB_RUNS = positiveInt(process.env['PROPERTY_RUNS'], 25);

// --- commands -----------------------------------------------------------------

/** The numbers a command's choices are read from (see {@link Dice}). */
const tape = fc.array(fc.nat({ max: TAPE_RANGE - 1 }), { minLength: TAPE_LENGTH, maxLength: TAPE_LENGTH });
/** Workers and sweepers see small gaps between steps. */
const gap = fc.integer({ min: 0, max: 200 });

type Afters = Map<Tracked, AfterCheck>;

/**
 * One step of a run: applies itself to the store, then reads every task and
 * checks the invariants (every fourth step also reads far in the future).
 */
abstract class Step implements fc.AsyncCommand<World, TaskStore> {
  constructor(readonly gapMs: number) {}
  /** A run ends after {@link STEPS} steps (the commands past them are skipped). */
  check(world: Readonly<World>): boolean {
    return world.steps < STEPS;
  }
  abstract apply(world: World, afters: Afters): Promise<void>;
  abstract toString(): string;
  async run(world: World): Promise<void> {
    const afters: Afters = new Map();
    await this.apply(world, afters);
    world.now += this.gapMs;
    world.steps += 1;
    await observe(world, afters, false, world.steps % 4 === 0);
  }
}

/** The clock moves: a little, past every lease (and the grace), or past every TTL and the retention. */
class Tick extends Step {
  constructor(
    readonly kind: 'tick' | 'past-lease' | 'past-ttl',
    readonly ms: number,
    gapMs: number,
  ) {
    super(gapMs);
  }
  async apply(world: World): Promise<void> {
    count(world, this.kind);
    const at = `@${world.now - T0}`;
    world.now += this.ms;
    const what = { tick: 'tick', 'past-lease': 'jump past leases', 'past-ttl': 'jump past TTL and retention' }[this.kind];
    world.trace.push(`${at} ${what} → @${world.now - T0}`);
  }
  toString(): string {
    return `${this.kind}(+${this.ms}ms, gap ${this.gapMs}ms)`;
  }
}

/** A new task: more likely while fewer than two are active, never beyond {@link MAX_TASKS}. */
class Create extends Step {
  constructor(
    readonly roll: number,
    readonly tape: number[],
    gapMs: number,
  ) {
    super(gapMs);
  }
  override check(world: Readonly<World>): boolean {
    return super.check(world) && world.tasks.length < MAX_TASKS && (activeCount(world as World) < 2 || this.roll < 25);
  }
  async apply(world: World): Promise<void> {
    world.rng = new Dice(this.tape);
    count(world, 'create');
    await createTask(world);
  }
  toString(): string {
    return `create(roll ${this.roll}, tape ${tapeText(this.tape)}, gap ${this.gapMs}ms)`;
  }
}

/** One operation on one task, alone: its result is checked against the port's promise. */
class Single extends Step {
  constructor(
    readonly tape: number[],
    gapMs: number,
  ) {
    super(gapMs);
  }
  async apply(world: World, afters: Afters): Promise<void> {
    world.rng = new Dice(this.tape);
    const at = `@${world.now - T0}`;
    const task = pickTask(world);
    const op = randomOp(world, task, []);
    const { note, after } = await op.run(world, true);
    world.trace.push(`${at} [${task.name}] ${op.label} → ${note}`);
    count(world, statKey(op.label, note));
    if (after) afters.set(task, after);
  }
  toString(): string {
    return `single(tape ${tapeText(this.tape)}, gap ${this.gapMs}ms)`;
  }
}

/**
 * Two or three operations on one task at once. Each store call waits for the
 * scheduler to let it start, so the order of the calls is one fast-check
 * picks (and reports, and shrinks).
 */
class Concurrent extends Step {
  constructor(
    readonly tape: number[],
    readonly scheduler: fc.Scheduler,
    gapMs: number,
  ) {
    super(gapMs);
  }
  async apply(world: World): Promise<void> {
    world.rng = new Dice(this.tape);
    const at = `@${world.now - T0}`;
    const task = pickTask(world);
    const batchKeys: string[] = [];
    const ops = Array.from({ length: world.rng.int(2, 3) }, () => randomOp(world, task, batchKeys));
    const gated = { ...world, store: scheduled(world.store, this.scheduler) };
    const results = await this.scheduler.waitFor(Promise.all(ops.map((op) => op.run(gated, false))));
    world.trace.push(`${at} [${task.name}] ${ops.map((op, i) => `${op.label} → ${results[i]!.note}`).join('  ‖  ')}`);
    count(world, `concurrent step (${ops.length} ops)`);
    for (const [i, op] of ops.entries()) count(world, `‖${statKey(op.label, results[i]!.note)}`);
    assert.ok(results.filter((r) => r.claimed).length <= 1, 'two concurrent claims both took the lease');
    assert.ok(results.filter((r) => r.finished).length <= 1, 'two concurrent finishes were both written');
  }
  /** A fresh scheduler for every execution of this command (fast-check clones the command before each run). */
  [fc.cloneMethod](): Concurrent {
    return new Concurrent(this.tape, fc.hasCloneMethod(this.scheduler) ? this.scheduler[fc.cloneMethod]() : this.scheduler, this.gapMs);
  }
  toString(): string {
    return `concurrent(tape ${tapeText(this.tape)}, gap ${this.gapMs}ms, ${String(this.scheduler)})`;
  }
}

/** The sweeper: `findDue`, then `reschedule` of most of what it found. */
class Sweep extends Step {
  constructor(
    readonly tape: number[],
    gapMs: number,
  ) {
    super(gapMs);
  }
  async apply(world: World, afters: Afters): Promise<void> {
    const rng = (world.rng = new Dice(this.tape));
    const at = `@${world.now - T0}`;
    const limit = rng.chance(0.8) ? 100 : 1;
    const due = await world.store.findDue(world.now, limit);
    const expected = world.tasks
      .filter((task) => task.last?.sweepAt !== undefined && task.last.sweepAt <= world.now)
      .map((task) => task.taskId);
    const name = (id: string) => world.tasks.find((task) => task.taskId === id)?.name ?? `?${id}`;
    world.trace.push(`${at} findDue(limit ${limit}) → [${due.map(name).join(',')}]`);
    count(world, due.length > 0 ? 'findDue:some' : 'findDue:none');
    assert.equal(new Set(due).size, due.length, 'findDue returns each task once');
    for (const id of due)
      assert.ok(
        expected.includes(id),
        `findDue returned ${name(id)}, which is not due (${JSON.stringify(world.tasks.find((t) => t.taskId === id)?.last)})`,
      );
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
  }
  toString(): string {
    return `sweep(tape ${tapeText(this.tape)}, gap ${this.gapMs}ms)`;
  }
}

/** The steps, weighted as a run should see them (mostly single operations, some races, clock jumps and sweeps). */
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 60, arbitrary: fc.tuple(tape, gap).map(([t, g]) => new Single(t, g)) },
  { weight: 14, arbitrary: fc.tuple(tape, fc.scheduler(), gap).map(([t, s, g]) => new Concurrent(t, s, g)) },
  { weight: 9, arbitrary: fc.tuple(fc.integer({ min: 1, max: 3_000 }), gap).map(([ms, g]) => new Tick('tick', ms, g)) },
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: POLICY.sweepGraceMs * 2 }), gap)
      .map(([ms, g]) => new Tick('past-lease', MAX_LEASE + ms, g)),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 60_000 }), gap)
      .map(([ms, g]) => new Tick('past-ttl', Math.max(...TTLS) + POLICY.retentionMs + ms, g)),
  },
  { weight: 6, arbitrary: fc.tuple(tape, gap).map(([t, g]) => new Sweep(t, g)) },
  // Weight 12 while fewer than two tasks are active, 3 otherwise (see Create.check).
  { weight: 12, arbitrary: fc.tuple(fc.integer({ min: 0, max: 99 }), tape, gap).map(([roll, t, g]) => new Create(roll, t, g)) },
);

/** A store whose calls each wait for the scheduler before they start. */
function scheduled(store: TaskStore, scheduler: fc.Scheduler): TaskStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => scheduler.schedule(Promise.resolve(), String(key)).then(() => value.apply(target, args));
    },
  });
}

function tapeText(values: readonly number[]): string {
  const used = values.findLastIndex((value) => value !== 0) + 1;
  const zeros = used < values.length ? `0 × ${values.length - used}` : '';
  return `[${[values.slice(0, used).join(','), zeros].filter(Boolean).join(', ')}]`;
}

// --- runs -----------------------------------------------------------------------

interface Budget {
  label: string;
  runs: number;
  makeStore: () => Promise<TaskStore>;
}

/** Asserts the property over `runs` runs of up to {@link STEPS} steps; prints what they exercised. */
async function checkStore({ label, runs, makeStore }: Budget): Promise<void> {
  const stats = new Map<string, number>();
  let executed = 0;
  let steps = 0;
  const started = Date.now();
  const property = fc.asyncProperty(
    fc.integer({ min: 2, max: 4 }),
    tape,
    fc.commands([step], { maxCommands: COMMANDS, size: 'max', ...(replayPath ? { replayPath } : {}) }),
    async (initial, initialTape, commands) => {
      const store = await makeStore();
      const world: World = {
        rng: new Dice(initialTape),
        store,
        prefix: `r${executed++}`,
        now: T0,
        tasks: [],
        trace: [],
        counter: 0,
        steps: 0,
        stats,
      };
      try {
        for (let i = 0; i < initial; i++) await createTask(world);
        await fc.asyncModelRun(() => ({ model: world, real: store }), commands);
        await observe(world, new Map(), true);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const trace = world.trace
          .slice(-25)
          .map((line) => `    ${line}`)
          .join('\n');
        throw new Error(`${message}\n  last steps:\n${trace}`, { cause: error });
      } finally {
        steps += world.steps;
      }
    },
  );
  await fc.assert(property, { numRuns: runs, includeErrorInReport: true, ...replay });
  console.log(
    `# ${label}: ${runs} runs (${executed} executed, shrinking included), ${steps} steps ` +
      `(${(steps / Math.max(executed, 1)).toFixed(1)} a run) in ${Date.now() - started} ms`,
  );
  const sorted = [...stats].sort(([a], [b]) => a.localeCompare(b));
  console.log(`#   exercised: ${sorted.map(([key, n]) => `${key} ${n}`).join(', ')}`);
}

const replayPath = process.env['PROPERTY_REPLAY_PATH'];
const replay = {
  ...(process.env['PROPERTY_SEED'] ? { seed: Number(process.env['PROPERTY_SEED']) } : {}),
  ...(process.env['PROPERTY_PATH'] ? { path: process.env['PROPERTY_PATH'], endOnFailure: true } : {}),
};

describe('TaskStore properties (seeded random interleavings)', () => {
  it(`InMemoryTaskStore: ${MEMORY_RUNS} runs × up to ${STEPS} steps`, async () => {
    await checkStore({ label: 'InMemoryTaskStore', runs: MEMORY_RUNS, makeStore: async () => new InMemoryTaskStore(POLICY) });
  });

  describe('DynamoDbTaskStore on dynalite', () => {
    let local: LocalDynamoDb;
    let client: DynamoDBClient;
    before(async () => {
      local = await startDynalite();
      client = new DynamoDBClient({
        endpoint: local.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
    });
    after(async () => {
      client?.destroy();
      await local?.close();
    });

    it(`${DYNAMODB_RUNS} runs × up to ${STEPS} steps (a fresh table per run)`, async () => {
      await checkStore({
        label: 'DynamoDbTaskStore',
        runs: DYNAMODB_RUNS,
        makeStore: async () => {
          // A table per run: findDue sees only this run's tasks.
          const tableName = `property-${randomUUID()}`;
          await ensureTaskTable(client, tableName);
          return new DynamoDbTaskStore({ client, tableName, policy: POLICY });
        },
      });
    });
  });
});

function positiveInt(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}
