import { isExpired, isRunning, isTerminal, type JsonRpcErrorObject, type TaskOutcome, type TaskRecord } from './model.ts';
import { applyOutcome, newTaskRecord } from './outcome.ts';
import {
  IdempotencyConflictError,
  LeaseLostError,
  TaskNotFoundError,
  type AnswerResult,
  type CancelResult,
  type HeartbeatOptions,
  type NewTask,
  type StorePolicy,
  type TaskStore,
} from './store.ts';

/**
 * An in-process {@link TaskStore}: the reference semantics the DynamoDB
 * adapter is held to by the shared contract suite. Records are copied in and
 * out, so callers never share state with the store.
 */
export class InMemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #steps = new Map<string, Map<string, unknown>>();
  readonly #idempotency = new Map<string, { taskId: string; fingerprint: string }>();
  readonly #policy: StorePolicy;

  constructor(policy: StorePolicy) {
    this.#policy = policy;
  }

  async create(task: NewTask, options: { idempotencyKey?: string } = {}): Promise<{ task: TaskRecord; created: boolean }> {
    const scope = options.idempotencyKey === undefined ? undefined : `${task.owner}\u0000${options.idempotencyKey}`;
    const fingerprint = JSON.stringify([task.tool, task.arguments]);
    if (scope !== undefined) {
      const earlier = this.#idempotency.get(scope);
      if (earlier) {
        if (earlier.fingerprint !== fingerprint) throw new IdempotencyConflictError();
        // Once the first task has expired, the key starts over with this call's task.
        const existing = this.#live(earlier.taskId, task.now);
        if (existing) return { task: copy(existing), created: false };
      }
    }
    // Checked before the key is recorded, so that a key never names another's task.
    if (this.#tasks.has(task.taskId)) throw new Error(`Task id collision: ${task.taskId}`);
    if (scope !== undefined) this.#idempotency.set(scope, { taskId: task.taskId, fingerprint });
    const record = newTaskRecord(task, this.#policy);
    this.#tasks.set(task.taskId, copy(record));
    return { task: copy(record), created: true };
  }

  async get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined> {
    const task = this.#live(taskId, now);
    return task && task.owner === owner ? copy(task) : undefined;
  }

  async claim(taskId: string, leaseOwner: string, now: number, leaseMs: number): Promise<TaskRecord | undefined> {
    const task = this.#live(taskId, now);
    if (!task || task.status !== 'working' || isRunning(task, now)) return undefined;
    // `sweepAt` stays: create, release and answer scheduled it past one lease.
    task.lease = { owner: leaseOwner, until: now + leaseMs };
    task.attempts += 1;
    task.version += 1;
    return copy(task);
  }

  async heartbeat(taskId: string, leaseOwner: string, now: number, { leaseMs, statusMessage }: HeartbeatOptions) {
    const stored = this.#leased(taskId, leaseOwner);
    if (leaseMs !== undefined) {
      stored.lease = { owner: leaseOwner, until: now + leaseMs };
      stored.sweepAt = now + leaseMs + this.#policy.sweepGraceMs;
    }
    if (statusMessage !== undefined) {
      stored.statusMessage = statusMessage;
      stored.lastUpdatedAt = now;
    }
    stored.version += 1;
    return { cancelRequested: stored.cancelRequested };
  }

  async finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord> {
    const stored = this.#leased(task.taskId, leaseOwner);
    const next = applyOutcome(stored, outcome, now, this.#policy.retentionMs, this.#policy.maxInputWaitMs);
    this.#tasks.set(task.taskId, next);
    return copy(next);
  }

  async release(taskId: string, leaseOwner: string, _now: number, resumeAt: number, options: { handedOver?: boolean } = {}): Promise<void> {
    const task = this.#tasks.get(taskId);
    if (task?.lease?.owner !== leaseOwner || isTerminal(task.status)) return;
    delete task.lease;
    if (options.handedOver) task.attempts = 0;
    task.sweepAt = resumeAt + this.#window();
    task.version += 1;
  }

  async fail(taskId: string, error: { code: number; message: string }, statusMessage: string, now: number): Promise<boolean> {
    const task = this.#tasks.get(taskId);
    if (!task || isTerminal(task.status) || isRunning(task, now)) return false;
    this.#tasks.set(taskId, applyOutcome(task, { status: 'failed', error, statusMessage }, now, this.#policy.retentionMs));
    return true;
  }

  async answer(taskId: string, owner: string, responses: Record<string, unknown>, now: number): Promise<AnswerResult> {
    const task = this.#live(taskId, now);
    if (!task || task.owner !== owner) throw new TaskNotFoundError(taskId);
    if (task.status !== 'input_required') return { accepted: [], resumed: false };
    const accepted = Object.keys(responses).filter((key) => Object.hasOwn(task.inputRequests, key));
    if (accepted.length === 0) return { accepted, resumed: false };
    for (const key of accepted) {
      delete task.inputRequests[key];
      task.inputResponses[key] = responses[key];
    }
    task.lastUpdatedAt = now;
    task.version += 1;
    const resumed = Object.keys(task.inputRequests).length === 0;
    if (resumed) {
      const { inputRequests: _answered, ...rest } = task;
      this.#tasks.set(taskId, { ...rest, status: 'working', sweepAt: now + this.#window() });
    }
    return { accepted, resumed };
  }

  async cancel(taskId: string, owner: string, now: number, options: { statusMessage?: string } = {}): Promise<CancelResult> {
    const task = this.#live(taskId, now);
    if (!task || task.owner !== owner) throw new TaskNotFoundError(taskId);
    if (isTerminal(task.status)) return 'terminal';
    if (isRunning(task, now)) {
      task.cancelRequested = true;
      task.version += 1;
      return 'requested';
    }
    const cancelled = applyOutcome({ ...task, cancelRequested: true }, { status: 'cancelled', ...options }, now, this.#policy.retentionMs);
    this.#tasks.set(taskId, cancelled);
    return 'cancelled';
  }

  async loadSteps(taskId: string): Promise<Map<string, unknown>> {
    return copy(this.#steps.get(taskId) ?? new Map());
  }

  async saveStep(taskId: string, name: string, value: unknown): Promise<unknown> {
    const steps = this.#steps.get(taskId) ?? new Map<string, unknown>();
    this.#steps.set(taskId, steps);
    if (!steps.has(name)) steps.set(name, copy(value));
    return copy(steps.get(name));
  }

  async findDue(now: number, limit: number): Promise<string[]> {
    return [...this.#tasks.values()]
      .filter((task) => task.sweepAt !== undefined && task.sweepAt <= now)
      .sort((a, b) => (a.sweepAt ?? 0) - (b.sweepAt ?? 0))
      .slice(0, limit)
      .map((task) => task.taskId);
  }

  async expireWait(taskId: string, error: JsonRpcErrorObject, statusMessage: string, now: number): Promise<TaskRecord | undefined> {
    const task = this.#tasks.get(taskId);
    if (!task || task.status !== 'input_required' || task.sweepAt === undefined || task.sweepAt > now) return undefined;
    const failed = applyOutcome(task, { status: 'failed', error, statusMessage }, now, this.#policy.retentionMs);
    this.#tasks.set(taskId, failed);
    return copy(failed);
  }

  async reschedule(taskId: string, now: number, nextAt: number): Promise<boolean> {
    const task = this.#tasks.get(taskId);
    if (!task || task.status !== 'working' || task.sweepAt === undefined || task.sweepAt > now) return false;
    task.sweepAt = nextAt;
    task.version += 1;
    return true;
  }

  /** W: how long after a task is due to run the sweeper looks at it (one lease plus the grace). */
  #window(): number {
    return this.#policy.leaseMs + this.#policy.sweepGraceMs;
  }

  #live(taskId: string, now: number): TaskRecord | undefined {
    const task = this.#tasks.get(taskId);
    return task && !isExpired(task, now) ? task : undefined;
  }

  #leased(taskId: string, leaseOwner: string): TaskRecord {
    const task = this.#tasks.get(taskId);
    if (!task || task.lease?.owner !== leaseOwner || isTerminal(task.status)) throw new LeaseLostError(taskId);
    return task;
  }
}

function copy<T>(value: T): T {
  return structuredClone(value);
}
