import {
  checkWaitingPage,
  decideInBandAnswer,
  decideOnPage,
  lateDecision,
  openPersonQuestions,
  waitingForPerson,
  waitingSortKey,
} from '../approvals-decisions.ts';
import type { AnswerOptions, Decider, WaitingPage, WaitingQuestion } from '../approvals-model.ts';
import { decideAwaitCallbacks, decideBeatCallback, decideCompleteCallback } from '../callbacks-decisions.ts';
import type { AwaitCallbacksOptions, CompletionResult, HeartbeatResult, PostedCompletion } from '../callbacks-model.ts';
import {
  type Decision,
  decideCancel,
  decideClaim,
  decideExpireWait,
  decideFail,
  decideFinish,
  decideHeartbeat,
  decideRelease,
  decideReschedule,
  newTaskRecord,
} from '../decisions.ts';
import { checkPage, listSortKey } from '../listing.ts';
import { type Decision as DecidedBy, isExpired, isTerminal, type TaskOutcome, type TaskRecord } from '../model.ts';
import { isDue, visible } from '../predicates.ts';
import type { TaskStore } from '../store.ts';
import { IdempotencyConflictError, TaskIdTakenError, TooManyTasksError } from '../store-errors.ts';
import type {
  AnswerResult,
  CancelOptions,
  CancelOutcome,
  CreateOptions,
  Ending,
  Failure,
  HeartbeatOptions,
  ListOptions,
  NewTask,
  ReleaseOptions,
  StepRecord,
  StepToSave,
  StorePolicy,
  TaskPage,
} from '../store-types.ts';
import {
  decideAskFromWorkflow,
  decideDropWorkflowToken,
  decideEndWorkflow,
  decideFollowExecution,
  decideRestartExecution,
  decideWorkflowProgress,
  type RestartResult,
} from '../workflows-decisions.ts';
import type { AskedQuestion, ExpectedExecution, FollowOptions, WorkflowEnd, WorkflowWriteResult } from '../workflows-model.ts';

/**
 * An in-process {@link TaskStore}: the reference semantics the DynamoDB
 * adapter is held to by the shared contract suite. Every change is a
 * decision of `decisions.ts` applied to the stored record, as the DynamoDB
 * store applies the same decisions to its rows. Records are copied in and
 * out, so callers never share state with the store.
 */
export class InMemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #steps = new Map<string, Map<string, unknown>>();
  /** Positions of the steps recorded with one, by task and name. */
  readonly #positions = new Map<string, Map<string, number>>();
  readonly #idempotency = new Map<string, { taskId: string; fingerprint: string }>();
  /** Tasks created while the policy lists them (the DynamoDB store's list index entries). */
  readonly #listed = new Set<string>();
  readonly #policy: StorePolicy;
  /** Questions for a person waiting for a decision, by sort key (the DynamoDB store's approvals list entries). */
  readonly #waiting = new Map<string, WaitingQuestion & { sort: string }>();
  /** Sign-out records by principal (the DynamoDB store's `sign-out#` items). */
  readonly #signOuts = new Map<string, { at: number; keepUntil: number }>();
  /** Names from console sign-ins by principal (the DynamoDB store's `sign-in-name#` items). */
  readonly #signInNames = new Map<string, { name: string; at: number; keepUntil: number }>();

  constructor(policy: StorePolicy) {
    this.#policy = policy;
  }

  async create(task: NewTask, options: CreateOptions = {}): Promise<{ task: TaskRecord; created: boolean }> {
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
    if (this.#tasks.has(task.taskId)) {
      if (!options.join) throw new Error('Task id collision');
      const existing = visible(this.#tasks.get(task.taskId), task.owner, task.now);
      if (existing && !isTerminal(existing.status)) return { task: copy(existing), created: false };
      throw new TaskIdTakenError(task.taskId);
    }
    const cap = this.#policy.maxUnfinishedTasks;
    const unfinished = cap === undefined ? [] : [...this.#tasks.values()].filter((t) => t.owner === task.owner && !isTerminal(t.status));
    if (cap !== undefined && unfinished.length >= cap) {
      throw new TooManyTasksError(
        cap,
        unfinished.map((t) => t.pollIntervalMs),
      );
    }
    if (scope !== undefined) this.#idempotency.set(scope, { taskId: task.taskId, fingerprint });
    const record = newTaskRecord(task, this.#policy);
    this.#tasks.set(task.taskId, copy(record));
    if (this.#policy.listing) this.#listed.add(task.taskId);
    return { task: copy(record), created: true };
  }

  async get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined> {
    return copy(visible(this.#tasks.get(taskId), owner, now));
  }

  async claim(taskId: string, leaseOwner: string, now: number): Promise<TaskRecord | undefined> {
    return this.#apply(taskId, decideClaim(this.#tasks.get(taskId), leaseOwner, now, this.#policy.leaseMs));
  }

  async heartbeat(taskId: string, leaseOwner: string, now: number, options: HeartbeatOptions): Promise<{ cancelRequested: boolean }> {
    return this.#apply(taskId, decideHeartbeat(taskId, this.#tasks.get(taskId), leaseOwner, now, options, this.#policy));
  }

  async finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord> {
    // Decided on the stored record, not the caller's: the lease is checked on
    // it, and what others wrote since the claim (a heartbeat's message,
    // `cancelRequested`) is kept.
    const finished = this.#apply(
      task.taskId,
      decideFinish(task.taskId, this.#tasks.get(task.taskId), leaseOwner, outcome, now, this.#policy),
    );
    if (this.#policy.approvals) {
      for (const key of openPersonQuestions(finished)) {
        const sort = waitingSortKey(now, finished.taskId, key);
        this.#waiting.set(sort, { task: finished, key, sort });
      }
    }
    return finished;
  }

  async release(taskId: string, leaseOwner: string, resumeAt: number, options: ReleaseOptions = {}): Promise<void> {
    return this.#apply(taskId, decideRelease(this.#tasks.get(taskId), leaseOwner, resumeAt, options, this.#policy));
  }

  async fail(taskId: string, { error, statusMessage, now, ...options }: Failure): Promise<TaskRecord | undefined> {
    return this.#apply(taskId, decideFail(this.#tasks.get(taskId), error, statusMessage, now, this.#policy, options));
  }

  async answer(
    taskId: string,
    owner: string,
    responses: Record<string, unknown>,
    now: number,
    options?: AnswerOptions,
  ): Promise<AnswerResult> {
    return this.#unlisted(
      taskId,
      this.#apply(taskId, decideInBandAnswer(taskId, this.#tasks.get(taskId), owner, responses, now, this.#policy, options)),
    );
  }

  async decide(taskId: string, decider: Decider, responses: Record<string, unknown>, now: number): Promise<AnswerResult> {
    return this.#unlisted(
      taskId,
      this.#apply(taskId, decideOnPage(taskId, this.#tasks.get(taskId), decider, responses, now, this.#policy)),
    );
  }

  async recordSignOut(principal: string, at: number, keepUntil: number): Promise<void> {
    const earlier = this.#signOuts.get(principal);
    if (!earlier || earlier.at < at) this.#signOuts.set(principal, { at, keepUntil });
  }

  async signedOutAfter(principal: string, now: number): Promise<number | undefined> {
    const record = this.#signOuts.get(principal);
    return record && record.keepUntil > now ? record.at : undefined;
  }

  async recordSignInName(principal: string, name: string, at: number, keepUntil: number): Promise<void> {
    const earlier = this.#signInNames.get(principal);
    if (!earlier || earlier.at < at) this.#signInNames.set(principal, { name, at, keepUntil });
  }

  async signInNameOf(principal: string, now: number): Promise<string | undefined> {
    const record = this.#signInNames.get(principal);
    return record && record.keepUntil > now ? record.name : undefined;
  }

  async getDecision(taskId: string, key: string, now: number): Promise<DecidedBy | 'withdrawn' | undefined> {
    const decision = lateDecision(this.#tasks.get(taskId), key, now);
    return typeof decision === 'object' ? { ...decision } : decision;
  }

  async getWaitingForPerson(taskId: string, now: number): Promise<TaskRecord | undefined> {
    return copy(waitingForPerson(this.#tasks.get(taskId), now));
  }

  async listWaitingForPeople(now: number, options: ListOptions): Promise<WaitingPage> {
    const { limit, after } = checkWaitingPage(options);
    const entries = [...this.#waiting.values()]
      .filter((entry) => after === undefined || entry.sort > after)
      .sort((a, b) => (a.sort < b.sort ? -1 : 1));
    const page = entries.slice(0, limit);
    const questions = page.flatMap(({ task: { taskId }, key }) => {
      const task = waitingForPerson(this.#tasks.get(taskId), now);
      return task && openPersonQuestions(task).includes(key) ? [{ task: copy(task), key }] : [];
    });
    return { questions, ...(entries.length > limit ? { next: page.at(-1)!.sort } : {}) };
  }

  /** `result`, its decided questions removed from the approvals list. */
  #unlisted(taskId: string, result: AnswerResult): AnswerResult {
    for (const [sort, entry] of this.#waiting) {
      if (entry.task.taskId === taskId && result.decided?.includes(entry.key)) this.#waiting.delete(sort);
    }
    return result;
  }

  async cancel(taskId: string, owner: string, now: number, options: CancelOptions = {}): Promise<CancelOutcome> {
    return this.#apply(taskId, decideCancel(taskId, this.#tasks.get(taskId), owner, now, this.#policy, options));
  }

  async list(owner: string, now: number, options: ListOptions): Promise<TaskPage> {
    const { limit, after } = checkPage(options);
    const entries = [...this.#listed]
      .map((taskId) => this.#tasks.get(taskId)!)
      .filter((task) => task.owner === owner)
      .map((task) => ({ key: listSortKey(task.createdAt, task.taskId), task }))
      .filter((entry) => after === undefined || entry.key < after)
      .sort((a, b) => (a.key < b.key ? 1 : -1));
    const page = entries.slice(0, limit);
    const tasks = page.flatMap((entry) => {
      const shown = visible(entry.task, owner, now);
      return shown ? [copy(shown)] : [];
    });
    return { tasks, ...(entries.length > limit ? { next: page.at(-1)!.key } : {}) };
  }

  async loadSteps(taskId: string): Promise<Map<string, unknown>> {
    return copy(this.#steps.get(taskId) ?? new Map());
  }

  async loadJournal(taskId: string): Promise<Map<string, StepRecord>> {
    const positions = this.#positions.get(taskId);
    const journal = new Map<string, StepRecord>();
    for (const [name, value] of this.#steps.get(taskId) ?? []) {
      const position = positions?.get(name);
      journal.set(name, position === undefined ? { value: copy(value) } : { value: copy(value), position });
    }
    return journal;
  }

  async saveStep(taskId: string, { name, value, position }: StepToSave): Promise<unknown> {
    const steps = this.#steps.get(taskId) ?? new Map<string, unknown>();
    this.#steps.set(taskId, steps);
    if (!steps.has(name)) {
      steps.set(name, copy(value));
      if (position !== undefined) {
        const positions = this.#positions.get(taskId) ?? new Map<string, number>();
        this.#positions.set(taskId, positions);
        positions.set(name, position);
      }
    }
    return copy(steps.get(name));
  }

  async findDue(now: number, limit: number): Promise<string[]> {
    return [...this.#tasks.values()]
      .filter((task) => isDue(task, now))
      .sort((a, b) => (a.sweepAt ?? 0) - (b.sweepAt ?? 0))
      .slice(0, limit)
      .map((task) => task.taskId);
  }

  async reschedule(taskId: string, now: number, nextAt: number): Promise<boolean> {
    return this.#apply(taskId, decideReschedule(this.#tasks.get(taskId), now, nextAt));
  }

  async expireWait(taskId: string, { error, statusMessage, now }: Ending): Promise<TaskRecord | undefined> {
    return this.#apply(taskId, decideExpireWait(this.#tasks.get(taskId), error, statusMessage, now, this.#policy));
  }

  async awaitCallbacks(taskId: string, leaseOwner: string, options: AwaitCallbacksOptions, now: number): Promise<'waiting' | 'signalled'> {
    return this.#apply(taskId, decideAwaitCallbacks(taskId, this.#tasks.get(taskId), leaseOwner, options, now));
  }

  async completeCallback(taskId: string, callbackId: string, posted: PostedCompletion, now: number): Promise<CompletionResult> {
    return this.#apply(taskId, decideCompleteCallback(this.#tasks.get(taskId), callbackId, posted, now, this.#policy));
  }

  async beatCallback(taskId: string, callbackId: string, now: number): Promise<HeartbeatResult> {
    return this.#apply(taskId, decideBeatCallback(this.#tasks.get(taskId), callbackId, now));
  }

  async followExecution(taskId: string, execution: string, options?: FollowOptions): Promise<string | undefined> {
    return this.#apply(taskId, decideFollowExecution(this.#tasks.get(taskId), execution, options));
  }

  async restartExecution(taskId: string, execution: string, replaced: string, now: number): Promise<RestartResult> {
    return this.#apply(taskId, decideRestartExecution(this.#tasks.get(taskId), execution, replaced, now));
  }

  async askFromWorkflow(taskId: string, asked: AskedQuestion, expected: ExpectedExecution, now: number): Promise<WorkflowWriteResult> {
    return this.#apply(taskId, decideAskFromWorkflow(this.#tasks.get(taskId), asked, expected, now, this.#policy));
  }

  async workflowProgress(
    taskId: string,
    execution: string,
    expected: ExpectedExecution,
    message: string,
    now: number,
  ): Promise<WorkflowWriteResult> {
    return this.#apply(taskId, decideWorkflowProgress(this.#tasks.get(taskId), execution, expected, message, now));
  }

  async dropWorkflowToken(taskId: string, id: string): Promise<void> {
    return this.#apply(taskId, decideDropWorkflowToken(this.#tasks.get(taskId), id));
  }

  async endWorkflow(
    taskId: string,
    end: WorkflowEnd,
    expected: ExpectedExecution,
    now: number,
  ): Promise<CompletionResult | 'not-followed'> {
    return this.#apply(taskId, decideEndWorkflow(this.#tasks.get(taskId), end, expected, now, this.#policy));
  }

  /**
   * Stores a copy of the decision's next record, if any, and answers a copy
   * of its result: decisions may share nested objects with their inputs
   * (the caller's outcome, answers, arguments), which the store must not keep.
   */
  #apply<R>(taskId: string, { result, next }: Decision<R>): R {
    if (next) {
      const ended = isTerminal(next.status) && !isTerminal(this.#tasks.get(taskId)?.status ?? next.status);
      this.#tasks.set(taskId, copy(next));
      // A later run of a repeated call is counted on its head as it ends (the DynamoDB store's `countRunEnded`).
      const head = ended && next.repeat ? this.#tasks.get(next.repeat.head) : undefined;
      if (head && next.repeat && (head.runsEnded ?? 0) < next.repeat.run + 1) head.runsEnded = next.repeat.run + 1;
    }
    return copy(result);
  }

  #live(taskId: string, now: number): TaskRecord | undefined {
    const task = this.#tasks.get(taskId);
    return task && !isExpired(task, now) ? task : undefined;
  }
}

function copy<T>(value: T): T {
  return structuredClone(value);
}
