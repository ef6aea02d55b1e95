import { isExpired, isRunning, isTerminal, type TaskOutcome, type TaskRecord, type WorkingTask } from './model.ts';
import { LeaseLostError, TaskNotFoundError, type AnswerResult, type CancelResult, type NewTask, type TaskStore } from './store.ts';
import { applyOutcome } from './outcome.ts';

/**
 * An in-process {@link TaskStore}: the reference semantics the DynamoDB
 * adapter is held to by the shared contract suite. Records are copied in and
 * out, so callers never share state with the store.
 */
export class InMemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #retentionMs: number;

  constructor(options: { retentionMs: number }) {
    this.#retentionMs = options.retentionMs;
  }

  async create(task: NewTask): Promise<WorkingTask> {
    if (this.#tasks.has(task.taskId)) throw new Error(`Task id collision: ${task.taskId}`);
    const record: WorkingTask = {
      taskId: task.taskId,
      owner: task.owner,
      tool: task.tool,
      arguments: task.arguments,
      clientCapabilities: task.clientCapabilities,
      status: 'working',
      createdAt: task.now,
      lastUpdatedAt: task.now,
      ttlMs: task.ttlMs,
      pollIntervalMs: task.pollIntervalMs,
      inputResponses: task.inputResponses,
      issuedKeys: [],
      cancelRequested: false,
      attempts: 0,
      version: 1,
    };
    this.#tasks.set(task.taskId, copy(record));
    return copy(record);
  }

  async get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined> {
    const task = this.#live(taskId, now);
    return task && task.owner === owner ? copy(task) : undefined;
  }

  async claim(taskId: string, leaseOwner: string, now: number, leaseMs: number): Promise<TaskRecord | undefined> {
    const task = this.#live(taskId, now);
    if (!task || task.status !== 'working' || isRunning(task, now)) return undefined;
    task.lease = { owner: leaseOwner, until: now + leaseMs };
    task.attempts += 1;
    task.version += 1;
    return copy(task);
  }

  async progress(task: TaskRecord, leaseOwner: string, statusMessage: string, now: number) {
    const stored = this.#leased(task.taskId, leaseOwner);
    stored.statusMessage = statusMessage;
    stored.lastUpdatedAt = now;
    stored.version += 1;
    return { cancelRequested: stored.cancelRequested };
  }

  async finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord> {
    const stored = this.#leased(task.taskId, leaseOwner);
    const next = applyOutcome(stored, outcome, now, this.#retentionMs);
    this.#tasks.set(task.taskId, next);
    return copy(next);
  }

  async release(taskId: string, leaseOwner: string): Promise<void> {
    const task = this.#tasks.get(taskId);
    if (task?.lease?.owner !== leaseOwner) return;
    delete task.lease;
    task.version += 1;
  }

  async fail(taskId: string, error: { code: number; message: string }, statusMessage: string, now: number): Promise<boolean> {
    const task = this.#tasks.get(taskId);
    if (!task || isTerminal(task.status)) return false;
    this.#tasks.set(taskId, applyOutcome(task, { status: 'failed', error, statusMessage }, now, this.#retentionMs));
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
      this.#tasks.set(taskId, { ...rest, status: 'working' });
    }
    return { accepted, resumed };
  }

  async cancel(taskId: string, owner: string, now: number): Promise<CancelResult> {
    const task = this.#live(taskId, now);
    if (!task || task.owner !== owner) throw new TaskNotFoundError(taskId);
    if (isTerminal(task.status)) return 'terminal';
    if (isRunning(task, now)) {
      task.cancelRequested = true;
      task.version += 1;
      return 'requested';
    }
    const cancelled = applyOutcome({ ...task, cancelRequested: true }, { status: 'cancelled' }, now, this.#retentionMs);
    this.#tasks.set(taskId, cancelled);
    return 'cancelled';
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
