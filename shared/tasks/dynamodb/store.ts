import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { decideInBandAnswer, decideOnPage, waitingForPerson } from '../approvals-decisions.ts';
import type { AnswerOptions, Decider, WaitingPage } from '../approvals-model.ts';
import type { CallbackStore } from '../callbacks-store.ts';
import { applyOutcome, decideCancel, decideExpireWait, decideFail, newTaskRecord } from '../decisions.ts';
import { type Decision, isExpired, isRunning, isTerminal, type TaskOutcome, type TaskRecord } from '../model.ts';
import { releaseMoment } from '../moments.ts';
import { heartbeatFields, leaseFor, releaseFields, visible } from '../predicates.ts';
import type { SignInNameStore } from '../sign-in-names-store.ts';
import type { SignOutStore } from '../sign-outs-store.ts';
import type { TaskStore } from '../store.ts';
import { LeaseLostError, TaskIdTakenError, TaskRowRejectedError } from '../store-errors.ts';
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
import { expiresAtSeconds } from '../ttl.ts';
import type { WorkflowStore } from '../workflows-store.ts';
import { activeIndexEntries } from './active-index.ts';
import { listWaiting, listWaitingPage, unlistWaiting } from './approvals.ts';
import { dynamoDbCallbacks } from './callbacks.ts';
import { fromItem, type Item, itemBytes, number, toItem } from './codec.ts';
import { createOnce } from './idempotent.ts';
import { loadJournal, saveStep } from './journal.ts';
import { listPage } from './list.ts';
import { countRunEnded } from './repeats.ts';
import { putChunks, readRow, withResult } from './results.ts';
import { endMinimal, rewriteRow } from './rewrite.ts';
import { ACTIVE_INDEX, activeShards, INLINE_ROW_LIMIT_BYTES, RESULT_REF } from './schema.ts';
import { dynamoDbSignInNames } from './sign-in-names.ts';
import { dynamoDbSignOuts } from './sign-outs.ts';
import { freeSlot, takeSlot } from './slots.ts';
import {
  appendMoment,
  changes,
  leaseHeldBy,
  momentWrite,
  putRow,
  ROW_REJECTED_ERROR,
  rejectedMessage,
  type StoreTable,
  shardsOf,
  updateRow,
} from './update.ts';
import { dynamoDbWorkflows } from './workflows.ts';

/**
 * {@link TaskStore} on one DynamoDB table (layout in `dynamodb/schema.ts`).
 *
 * Items of a task share its partition: the row (`sk = 'task'`), step
 * checkpoints (`step#<name>`) and, for a result too large for the row, its
 * chunks (`result#<id>#<n>`). Idempotency keys have partitions of their own
 * (`idem#<hash>`).
 *
 * Every state change is one conditional `PutItem`/`UpdateItem`; a failed
 * condition is translated here into the port's results and errors. What each
 * write changes is decided in `decisions.ts`, as for the in-memory store.
 * Writes made under a lease (`claim`, `heartbeat`, `finish`, `release`) and
 * `reschedule` need no read: they write the fields the decision would, under
 * a condition expression that states the decision's rule. `answer`, `cancel`
 * and `fail` read once, decide on the row read, and write the difference
 * guarded by the `version` they read, retrying a few times when another
 * writer got there first.
 *
 * Terminal rows carry the TTL attribute at their end plus the retention; a
 * row waiting for input until a deadline carries it at that deadline plus
 * the retention (a backstop: the wait ends through its deadline, by the
 * sweeper); a working row carries none and is never deleted by DynamoDB. Working rows, and waiting rows with a deadline, carry
 * `activeShard` and `sweepAt`, which put them in the sparse
 * {@link ACTIVE_INDEX}; every write that ends a task removes both in the
 * same request. The index is
 * keys-only, so a write costs it something only when it adds, moves or
 * removes those keys: entering and leaving are one index write each, moving
 * `sweepAt` two. `claim` and progress-only heartbeats leave `sweepAt` alone
 * (see the port's schedule), so a task that finishes within its first lease
 * enters the index once and leaves it once.
 *
 * This class says what each port method writes; the rest lives beside it:
 * the row codec and item keys (`dynamodb/codec.ts`), the update builder and
 * write guards (`dynamodb/update.ts`), rows with chunked results
 * (`dynamodb/results.ts`), idempotent creation (`dynamodb/idempotent.ts`),
 * the cap on unfinished tasks (`dynamodb/slots.ts`), the step journal
 * (`dynamodb/journal.ts`), the reads of the active-task index
 * (`dynamodb/active-index.ts`) and the owners' task lists (`dynamodb/list.ts`).
 */
export class DynamoDbTaskStore implements TaskStore {
  readonly #policy: StorePolicy;
  readonly #table: StoreTable;
  // The callback operations live in `dynamodb/callbacks.ts`.
  readonly awaitCallbacks: CallbackStore['awaitCallbacks'];
  readonly completeCallback: CallbackStore['completeCallback'];
  readonly beatCallback: CallbackStore['beatCallback'];
  // The console's sign-out records live in `dynamodb/sign-outs.ts`.
  readonly recordSignOut: SignOutStore['recordSignOut'];
  readonly signedOutAfter: SignOutStore['signedOutAfter'];
  // The workflow operations live in `dynamodb/workflows.ts`.
  readonly followExecution: WorkflowStore['followExecution'];
  readonly askFromWorkflow: WorkflowStore['askFromWorkflow'];
  readonly workflowProgress: WorkflowStore['workflowProgress'];
  readonly dropWorkflowToken: WorkflowStore['dropWorkflowToken'];
  readonly endWorkflow: WorkflowStore['endWorkflow'];
  // The names people signed in to the console with live in `dynamodb/sign-in-names.ts`.
  readonly recordSignInName: SignInNameStore['recordSignInName'];
  readonly signInNameOf: SignInNameStore['signInNameOf'];

  constructor(options: { client: DynamoDBClient; tableName: string; policy: StorePolicy }) {
    this.#policy = options.policy;
    this.#table = { client: options.client, tableName: options.tableName, policy: options.policy };
    const callbacks = dynamoDbCallbacks(this.#table);
    ({ awaitCallbacks: this.awaitCallbacks, completeCallback: this.completeCallback, beatCallback: this.beatCallback } = callbacks);
    ({ recordSignOut: this.recordSignOut, signedOutAfter: this.signedOutAfter } = dynamoDbSignOuts(this.#table));
    ({
      followExecution: this.followExecution,
      askFromWorkflow: this.askFromWorkflow,
      workflowProgress: this.workflowProgress,
      dropWorkflowToken: this.dropWorkflowToken,
      endWorkflow: this.endWorkflow,
    } = dynamoDbWorkflows(this.#table));
    ({ recordSignInName: this.recordSignInName, signInNameOf: this.signInNameOf } = dynamoDbSignInNames(this.#table));
  }

  async create(task: NewTask, options: CreateOptions = {}): Promise<{ task: TaskRecord; created: boolean }> {
    const record = newTaskRecord(task, this.#policy);
    const capped = this.#policy.maxUnfinishedTasks !== undefined;
    if (capped) await takeSlot(this.#table, record.owner, record.taskId, task.now);
    try {
      let created: { task: TaskRecord; created: boolean };
      if (options.idempotencyKey === undefined) {
        created = (await putRow(this.#table, record))
          ? { task: fromItem(toItem(record, shardsOf(this.#policy))), created: true }
          : await this.#existing(record, options.join === true, task.now);
      } else {
        created = await createOnce(this.#table, record, options.idempotencyKey, task.now);
      }
      // An idempotent retry or a joined call returned an earlier task: this call's slot goes back.
      if (capped && !created.created) await freeSlot(this.#table, record.owner, record.taskId);
      return created;
    } catch (error) {
      if (capped) await freeSlot(this.#table, record.owner, record.taskId);
      throw error;
    }
  }

  /** The unfinished task already under `record`'s id, for a `create` that may join it (one read). */
  async #existing(record: TaskRecord, join: boolean, now: number): Promise<{ task: TaskRecord; created: false }> {
    if (!join) throw new Error('Task id collision');
    const item = await readRow(this.#table, record.taskId);
    const existing = item && visible(fromItem(item), record.owner, now);
    if (existing && !isTerminal(existing.status)) return { task: existing, created: false };
    throw new TaskIdTakenError(record.taskId);
  }

  async get(taskId: string, owner: string, now: number): Promise<TaskRecord | undefined> {
    const item = await readRow(this.#table, taskId);
    const task = item && visible(fromItem(item), owner, now);
    return task && item && withResult(this.#table, task, item);
  }

  async claim(taskId: string, leaseOwner: string, now: number): Promise<TaskRecord | undefined> {
    // A blind write of what `decideClaim` decides; its condition is the
    // `claimable` rule. No expiry check: only terminal tasks expire, and those
    // are never `working`. `sweepAt` (an index key) is left alone: create,
    // release and answer scheduled it past one lease, so the claim costs the
    // index nothing.
    const lease = leaseFor(leaseOwner, now, this.#policy.leaseMs);
    // The claim's moment is appended to the row's list, as `decideClaim` appends it (never folded).
    const moment = appendMoment({ kind: 'claim', at: now });
    const item = await updateRow(this.#table, taskId, {
      set: {
        leaseOwner: { S: lease.owner },
        leaseUntil: number(lease.until),
      },
      setExpressions: moment.setExpressions,
      increment: ['attempts'],
      condition: '#status = :working AND (attribute_not_exists(#leaseUntil) OR #leaseUntil <= :now)',
      values: { ':working': { S: 'working' }, ':now': number(now), ...moment.values },
      returnValues: 'ALL_NEW',
    });
    return item && fromItem(item);
  }

  async heartbeat(taskId: string, leaseOwner: string, now: number, options: HeartbeatOptions): Promise<{ cancelRequested: boolean }> {
    // A blind write of what `decideHeartbeat` decides, under the `leaseHeld` rule.
    const { renewal, progress, restart } = heartbeatFields(leaseOwner, now, options, this.#policy);
    const item = await updateRow(this.#table, taskId, {
      set: {
        // Only a renewal moves `sweepAt`, so only a renewal writes the index;
        // a progress message changes non-key attributes (keys-only index).
        // The lease stays in `leaseOwner`'s name: only its end is written.
        ...(renewal === undefined ? {} : { leaseUntil: number(renewal.lease.until), sweepAt: number(renewal.sweepAt) }),
        ...(progress === undefined ? {} : { statusMessage: { S: progress.statusMessage }, lastUpdatedAt: number(progress.lastUpdatedAt) }),
        ...(restart === undefined ? {} : { attempts: number(restart.attempts), progressMark: number(restart.progressMark) }),
      },
      // A no-op assignment, so that `UPDATED_NEW` reports `cancelRequested`
      // without sending back the whole row.
      setExpressions: ['#cancelRequested = if_not_exists(#cancelRequested, :false)'],
      ...leaseHeldBy(leaseOwner, { ':false': { BOOL: false } }),
      returnValues: 'UPDATED_NEW',
    });
    if (!item) throw new LeaseLostError(taskId);
    return { cancelRequested: item['cancelRequested']?.BOOL === true };
  }

  async finish(task: TaskRecord, leaseOwner: string, outcome: TaskOutcome, now: number): Promise<TaskRecord> {
    // What `decideFinish` decides, computed on the record as claimed (no read):
    // the write's condition checks the `leaseHeld` rule on the row instead.
    // A record that is already terminal holds no lease, and its row is
    // terminal for good, so that condition could only fail: the outcome is
    // not applied to it (the table forbids that) and nothing is sent.
    if (isTerminal(task.status)) throw new LeaseLostError(task.taskId);
    const next = applyOutcome(task, outcome, now, this.#policy.retentionMs, this.#policy.maxInputWaitMs);
    // Only what this outcome decides is written: `cancelRequested`, a newer
    // heartbeat `statusMessage` and the answers stay as other writers left them.
    const forced = [
      'status',
      'lastUpdatedAt',
      ...('statusMessage' in outcome && outcome.statusMessage !== undefined ? ['statusMessage'] : []),
    ];
    const write = changes(task, next, shardsOf(this.#policy), forced);

    let chunkedResult: Record<string, unknown> | undefined;
    const text = write.set['result']?.S;
    if (next.status === 'completed' && text !== undefined && itemBytes(toItem(next, shardsOf(this.#policy))) > INLINE_ROW_LIMIT_BYTES) {
      // The chunks go first, under an id of this call's own: a row only ever
      // names chunks that were complete before it was written, and chunks of
      // an attempt whose write below fails are never named (their TTL removes them).
      const id = randomUUID();
      const chunks = await putChunks(this.#table, task.taskId, id, Buffer.from(text, 'utf8'), expiresAtSeconds(next.createdAt, next.ttlMs));
      delete write.set['result'];
      write.set[RESULT_REF] = { M: { id: { S: id }, chunks: number(chunks) } };
      chunkedResult = JSON.parse(text) as Record<string, unknown>;
    }

    let item: Item | undefined;
    try {
      item = await updateRow(this.#table, task.taskId, { ...write, ...leaseHeldBy(leaseOwner), returnValues: 'ALL_NEW' });
    } catch (error) {
      if (!(error instanceof TaskRowRejectedError)) throw error;
      // The outcome cannot be stored (e.g. a row at the size limit): the task
      // ends `failed` through a minimal write that says why.
      const message = rejectedMessage(error, 'its outcome was written');
      const ended = await endMinimal(
        this.#table,
        task,
        { status: 'failed', error: ROW_REJECTED_ERROR },
        message,
        now,
        leaseHeldBy(leaseOwner),
      );
      if (!ended) throw new LeaseLostError(task.taskId);
      return ended;
    }
    if (!item) throw new LeaseLostError(task.taskId);
    const finished = fromItem(item);
    if (isTerminal(finished.status)) {
      await freeSlot(this.#table, finished.owner, finished.taskId);
      await countRunEnded(this.#table, finished);
    }
    await listWaiting(this.#table, finished, now);
    return chunkedResult && finished.status === 'completed' ? { ...finished, result: chunkedResult } : finished;
  }

  async release(taskId: string, leaseOwner: string, resumeAt: number, options: ReleaseOptions = {}): Promise<void> {
    // A blind write of what `decideRelease` decides, under the `leaseHeld`
    // rule. A failed condition means the lease is not ours (any more):
    // nothing to release.
    const fields = releaseFields(resumeAt, options, this.#policy);
    const moment = momentWrite(releaseMoment(options, resumeAt), options.claimed);
    const guard = leaseHeldBy(leaseOwner, moment.values);
    await updateRow(this.#table, taskId, {
      set: {
        sweepAt: number(fields.sweepAt),
        ...(fields.attempts === undefined ? {} : { attempts: number(fields.attempts) }),
        ...(fields.progressMark === undefined ? {} : { progressMark: number(fields.progressMark) }),
        ...moment.set,
      },
      ...(moment.setExpressions ? { setExpressions: moment.setExpressions } : {}),
      remove: ['leaseOwner', 'leaseUntil'],
      ...guard,
    });
  }

  async fail(taskId: string, { error, statusMessage, now, ...options }: Failure): Promise<TaskRecord | undefined> {
    return rewriteRow(this.#table, taskId, (task) => decideFail(task, error, statusMessage, now, this.#policy, options));
  }

  async answer(
    taskId: string,
    owner: string,
    responses: Record<string, unknown>,
    now: number,
    options?: AnswerOptions,
  ): Promise<AnswerResult> {
    const result = await rewriteRow(this.#table, taskId, (task) =>
      decideInBandAnswer(taskId, task, owner, responses, now, this.#policy, options),
    );
    await unlistWaiting(this.#table, taskId, result.decided);
    return result;
  }

  async decide(taskId: string, decider: Decider, responses: Record<string, unknown>, now: number): Promise<AnswerResult> {
    const result = await rewriteRow(this.#table, taskId, (task) => decideOnPage(taskId, task, decider, responses, now, this.#policy));
    await unlistWaiting(this.#table, taskId, result.decided);
    return result;
  }

  async getDecision(taskId: string, key: string, now: number): Promise<Decision | undefined> {
    const item = await readRow(this.#table, taskId);
    const task = item && fromItem(item);
    return task && !isExpired(task, now) ? task.decisions?.[key] : undefined;
  }

  async getWaitingForPerson(taskId: string, now: number): Promise<TaskRecord | undefined> {
    const item = await readRow(this.#table, taskId);
    return waitingForPerson(item && fromItem(item), now);
  }

  async listWaitingForPeople(now: number, options: ListOptions): Promise<WaitingPage> {
    return listWaitingPage(this.#table, now, options);
  }

  async cancel(taskId: string, owner: string, now: number, options: CancelOptions = {}): Promise<CancelOutcome> {
    return rewriteRow(
      this.#table,
      taskId,
      (task) => decideCancel(taskId, task, owner, now, this.#policy, options),
      (current, decision) => {
        // A suspended run woken to run its `onCancel` is written under the version read.
        if (decision.result.result !== 'requested' || !isRunning(current, now)) return undefined;
        // Requesting cancellation of a running task only ever sets one flag:
        // concurrent cancels (and the worker's heartbeats) need not be ordered,
        // so the write is guarded by the rule (still this status, lease still
        // live), not by the version read. Already requested: nothing to write.
        if (current.cancelRequested) return 'skip';
        return {
          set: { cancelRequested: { BOOL: true } },
          condition: '#status = :readStatus AND #leaseUntil > :now',
          values: { ':readStatus': { S: current.status }, ':now': number(now) },
        };
      },
    );
  }

  async list(owner: string, now: number, options: ListOptions): Promise<TaskPage> {
    return listPage(this.#table, owner, now, options);
  }

  async loadSteps(taskId: string): Promise<Map<string, unknown>> {
    return new Map([...(await this.loadJournal(taskId))].map(([name, step]) => [name, step.value]));
  }

  async loadJournal(taskId: string): Promise<Map<string, StepRecord>> {
    return loadJournal(this.#table, taskId);
  }

  async saveStep(taskId: string, step: StepToSave): Promise<unknown> {
    return saveStep(this.#table, taskId, step);
  }

  async findDue(now: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    // Every shard of the current count: by the names' prefix stability, also every shard a smaller earlier count wrote.
    const shards = activeShards(shardsOf(this.#policy));
    const due = (await Promise.all(shards.map((shard) => activeIndexEntries(this.#table, shard, { upTo: now, limit })))).flat();
    return due
      .sort((a, b) => a.sweepAt - b.sweepAt)
      .slice(0, limit)
      .map((entry) => entry.taskId);
  }

  async reschedule(taskId: string, now: number, nextAt: number): Promise<boolean> {
    // A blind write of what `decideReschedule` decides; the condition is the
    // `isDueToRun` rule (a row has `activeShard` exactly when it has `sweepAt`;
    // waiting tasks are on the index too, at their wait's deadline).
    const item = await updateRow(this.#table, taskId, {
      set: { sweepAt: number(nextAt) },
      condition: 'attribute_exists(#activeShard) AND #sweepAt <= :now AND #status = :working',
      values: { ':now': number(now), ':working': { S: 'working' } },
    });
    return item !== undefined;
  }

  async expireWait(taskId: string, { error, statusMessage, now }: Ending): Promise<TaskRecord | undefined> {
    return rewriteRow(this.#table, taskId, (task) => decideExpireWait(task, error, statusMessage, now, this.#policy));
  }
}
