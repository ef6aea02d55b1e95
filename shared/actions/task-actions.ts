/**
 * The task actions: what any surface may do to a task on behalf of a caller.
 * Both eras' task methods, the fallback tools, and every later surface that
 * reads, answers, cancels or waits on a task call these, so each rule (who
 * may see a task, what an answer resumes, what a cancel does and logs, how
 * often a waiting request reads) lives here once. A surface keeps only its
 * wire form: how it words a result or an error.
 *
 * No MCP SDK and no AWS SDK in here: the store and the queue are ports.
 */
import { randomUUID } from 'node:crypto';
import { parsePrincipal } from '../auth/principal.ts';
import { delay } from '../delay.ts';
import type { LifecycleEvents } from '../events/publisher.ts';
import { errorName, type Log } from '../log.ts';
import { logTaskEnded, withMetrics } from '../metrics.ts';
import type { TaskMessage, TaskQueue } from '../queue/queue.ts';
import { type AnswerOptions, type Decider, DecisionRefusedError, type WaitingPage } from '../tasks/approvals-model.ts';
import type { CompletionResult, HeartbeatResult, PostedCompletion } from '../tasks/callbacks-model.ts';
import { checkAnswers } from '../tasks/limits.ts';
import { type ClientCapabilities, type Decision, isTerminal, type RepeatRun, type TaskRecord } from '../tasks/model.ts';
import type { TaskStore } from '../tasks/store.ts';
import { TaskIdTakenError, TaskNotFoundError } from '../tasks/store-errors.ts';
import type { AnswerResult, CancelOptions, CancelResult, ListOptions, TaskPage } from '../tasks/store-types.ts';
import type { RestartResult } from '../tasks/workflows-decisions.ts';
import type { AskedQuestion, ExpectedExecution, WorkflowEnd, WorkflowWriteResult } from '../tasks/workflows-model.ts';
import { createdIn, resumeLink } from '../tracing/actions.ts';
import type { Tracing } from '../tracing/tracing.ts';
import type { RepeatWindow } from './repeat-calls.ts';

/** Runs of a repeated call tried past the last one its head counted (an end counted late, or rows of an earlier release). */
const UNCOUNTED_RUNS_TRIED = 4;

/** How often a waiting request reads the task: at most one strongly consistent read a second. */
const WAIT_READ_MS = 1_000;

/** The store's operations the task actions call: a function that composes its store for them gives it these. */
export type ActionStore = Pick<
  TaskStore,
  | 'create'
  | 'get'
  | 'list'
  | 'loadSteps'
  | 'answer'
  | 'decide'
  | 'getDecision'
  | 'getWaitingForPerson'
  | 'listWaitingForPeople'
  | 'cancel'
  | 'completeCallback'
  | 'beatCallback'
  | 'askFromWorkflow'
  | 'workflowProgress'
  | 'endWorkflow'
  | 'restartExecution'
>;

export interface TaskActionDeps {
  store: ActionStore;
  queue: TaskQueue;
  log: Log;
  now: () => number;
  /** Lifecycle events of the tasks a cancel ends here; absent: none (`-c events=off`). */
  events?: LifecycleEvents;
  /** The request's span: a created task keeps its context, a resume links it (absent: the installed tracing, off by default). */
  tracing?: Tracing | undefined;
}

/** What {@link TaskActions.create} needs to know of the task to start. */
export interface TaskToStart {
  owner: string;
  tool: string;
  arguments: Record<string, unknown>;
  clientCapabilities: ClientCapabilities;
  /** Answers gathered before the task exists (`prepare`), keyed like `inputResponses`. */
  inputResponses?: Record<string, unknown>;
  ttlMs: number;
  pollIntervalMs: number;
  toolVersion?: string;
  idempotencyKey?: string;
  /** A later run of a repeated call (set by `createOrJoin`). */
  repeat?: RepeatRun;
  /** The owner is a machine (`TaskRecord.machineOwner`). */
  machineOwner?: true;
  /** Who starts it, as a person reads it (their token's name or email claim): kept on the row for its pages. */
  requester?: string;
  /** The tool's title, kept on the row for its pages (the console runs no tool, so knows none). */
  toolTitle?: string;
}

/** What {@link TaskActions.createOrJoin} did: started the task, or joined an unfinished one an identical call started. */
export interface Joined {
  task: TaskRecord;
  joined: boolean;
}

/** The task actions over one store and queue. */
export class TaskActions {
  constructor(private readonly deps: TaskActionDeps) {}

  /**
   * Creates the task durably, then queues its start. With an idempotency key a retry returns the first call's task and
   * queues nothing. Resolves once the task is readable by `read`.
   */
  async create(task: TaskToStart): Promise<TaskRecord> {
    return (await this.#start(task, randomUUID(), {})).task;
  }

  /**
   * Starts the task under an id its call derives, or joins the owner's unfinished task an identical call started
   * (`repeat-calls.ts`). One read of this window's head decides: running, it is joined; ended after n runs, run n is
   * created (or joined, by the create's own conditional put); absent, the previous window's head (and, when later runs
   * ended there, its latest run) is read for a task to join, then the head is created. The cost does not grow with the
   * runs before: at most three reads and the create.
   */
  async createOrJoin(task: TaskToStart, windows: { current: RepeatWindow; previous: RepeatWindow }): Promise<Joined> {
    const head = await this.read(windows.current.head, task.owner);
    if (head && !isTerminal(head.status)) return this.#joined(head);
    if (head) return this.#startRun(task, windows.current, head.runsEnded ?? 1);
    const earlier = await this.#unfinishedRun(windows.previous, task.owner);
    return earlier ? this.#joined(earlier) : this.#startRun(task, windows.current, 0);
  }

  /** The unfinished run of `window`, if any: its head, or the run after the last one its head counted. */
  async #unfinishedRun(window: RepeatWindow, owner: string): Promise<TaskRecord | undefined> {
    const head = await this.read(window.head, owner);
    if (!head || !isTerminal(head.status)) return head;
    const latest = await this.read(window.run(head.runsEnded ?? 1), owner);
    return latest && !isTerminal(latest.status) ? latest : undefined;
  }

  /**
   * Creates run `first` of the call (or joins it, already running). A run found ended was not counted yet (its count is
   * written after its end, or it predates the count): the next is tried, a few at most; past them the call starts a
   * task of its own under a fresh id.
   */
  async #startRun(task: TaskToStart, window: RepeatWindow, first: number): Promise<Joined> {
    for (let run = first; run < first + UNCOUNTED_RUNS_TRIED; run++) {
      try {
        const repeat = run === 0 ? {} : { repeat: { head: window.head, run } };
        const started = await this.#start({ ...task, ...repeat }, window.run(run), { join: true });
        return started.created ? { task: started.task, joined: false } : this.#joined(started.task);
      } catch (error) {
        if (!(error instanceof TaskIdTakenError)) throw error;
      }
    }
    return { task: await this.create(task), joined: false };
  }

  #joined(task: TaskRecord): Joined {
    this.deps.log({ event: 'repeat-joined', taskId: task.taskId, tool: task.tool });
    return { task, joined: true };
  }

  async #start(task: TaskToStart, taskId: string, options: { join?: boolean }): Promise<{ task: TaskRecord; created: boolean }> {
    const { store, log, now } = this.deps;
    const { idempotencyKey, inputResponses = {}, toolVersion, ...fields } = task;
    const created = await store.create(
      {
        taskId,
        ...fields,
        inputResponses,
        now: now(),
        ...(toolVersion === undefined ? {} : { toolVersion }),
        ...createdIn(this.deps, taskId),
      },
      { ...options, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) },
    );
    if (created.created) {
      await this.#enqueue(created.task.taskId, 'start');
      log(
        withMetrics({ event: 'task-created', taskId: created.task.taskId, tool: task.tool }, { TasksCreated: 1 }, created.task.createdAt),
      );
    }
    return created;
  }

  /** The task as `principal` may see it: `undefined` for an unknown, expired or another principal's id alike. One read. */
  read(taskId: string, principal: string): Promise<TaskRecord | undefined> {
    return this.deps.store.get(taskId, principal, this.deps.now());
  }

  /** Like {@link TaskActions.read}, throwing {@link TaskNotFoundError} where that gives `undefined`. */
  async readOwn(taskId: string, principal: string): Promise<TaskRecord> {
    const task = await this.read(taskId, principal);
    if (!task) throw new TaskNotFoundError(taskId);
    return task;
  }

  /** Another principal's task as an approver may open it: while it waits on a question for a person, else `undefined`. One read. */
  readForApprover(taskId: string): Promise<TaskRecord | undefined> {
    return this.deps.store.getWaitingForPerson(taskId, this.deps.now());
  }

  /**
   * Who decided question `key` of a task, whoever owns it (never the answer), or `'withdrawn'` (a restart of its
   * workflow withdrew it unanswered): what an approver who comes late is told. One read.
   */
  decisionOf(taskId: string, key: string): Promise<Decision | 'withdrawn' | undefined> {
    return this.deps.store.getDecision(taskId, key, this.deps.now());
  }

  /** A page of the questions for a person waiting for a decision, every owner's, oldest first (see `TaskStore.listWaitingForPeople`). */
  waitingForPeople(options: ListOptions): Promise<WaitingPage> {
    return this.deps.store.listWaitingForPeople(this.deps.now(), options);
  }

  /** A page of the tasks `principal` owns, newest first, each as `read` would give it (see `TaskStore.list`). */
  list(principal: string, options: ListOptions): Promise<TaskPage> {
    return this.deps.store.list(principal, this.deps.now(), options);
  }

  /**
   * The task and its recorded steps by name, as `principal` may see them: the steps are read only once `read` has found
   * the task, so another principal's id reads like an unknown one. Throws {@link TaskNotFoundError}.
   */
  async withSteps(taskId: string, principal: string): Promise<{ task: TaskRecord; steps: Map<string, unknown> }> {
    const task = await this.readOwn(taskId, principal);
    return { task, steps: await this.deps.store.loadSteps(taskId) };
  }

  /**
   * Records answers to the task's open questions (other keys are ignored);
   * answering the last one makes the task `working` and queues its resume.
   * Throws {@link LimitExceededError} for answers over the budgets (nothing
   * recorded) and {@link TaskNotFoundError} as `read` would find nothing.
   */
  async answer(taskId: string, principal: string, responses: Record<string, unknown>, options?: AnswerOptions): Promise<AnswerResult> {
    checkAnswers(responses);
    // A decision recorded here names the owner by their token's subject, as the page names them.
    const subject = parsePrincipal(principal)?.subject;
    const recorded = await this.#refusalsLogged(taskId, principal, () =>
      this.deps.store.answer(taskId, principal, responses, this.deps.now(), {
        ...options,
        ...(subject === undefined ? {} : { name: subject }),
      }),
    );
    this.#decisionsLogged(taskId, principal, 'client', recorded);
    return this.#resumed(taskId, recorded, recorded.resumed);
  }

  /**
   * Records answers given on a task's page by `decider`: its owner (any open
   * question but one that needs another approver), or an approver of the
   * deployment (questions for a person only, of any task). Who decided each
   * question for a person is kept on the row and logged (never the answer).
   * Throws {@link DecisionRefusedError} (nothing recorded) and
   * {@link TaskNotFoundError} for anyone else.
   */
  async decide(taskId: string, decider: Decider, responses: Record<string, unknown>): Promise<AnswerResult> {
    checkAnswers(responses);
    const recorded = await this.#refusalsLogged(taskId, decider.principal, () =>
      this.deps.store.decide(taskId, decider, responses, this.deps.now()),
    );
    this.#decisionsLogged(taskId, decider.principal, 'page', recorded);
    return this.#resumed(taskId, recorded, recorded.resumed);
  }

  /**
   * Records what an outside system posted to a callback's URL: the first
   * completion wins, the same again is a `duplicate`; completing the last
   * callback a suspended run waits on resumes the task. No principal: the
   * callback's token is the capability (the caller has checked it).
   */
  async completeCallback(taskId: string, callbackId: string, posted: PostedCompletion): Promise<CompletionResult> {
    const result = await this.deps.store.completeCallback(taskId, callbackId, posted, this.deps.now());
    return this.#resumed(taskId, result, result === 'resumed');
  }

  /** Records a heartbeat of an open callback (no resume: the run still waits). No principal, as {@link completeCallback}. */
  beatCallback(taskId: string, callbackId: string): Promise<HeartbeatResult> {
    return this.deps.store.beatCallback(taskId, callbackId, this.deps.now());
  }

  /**
   * Records a question a workflow's task-token state asked (its token
   * sealed), from the execution the task follows (`expected` until the row
   * names it); a task suspended on its workflow resumes. No principal: the
   * state machine invokes the receiver.
   */
  async askFromWorkflow(taskId: string, asked: AskedQuestion, expected: ExpectedExecution): Promise<WorkflowWriteResult> {
    const result = await this.deps.store.askFromWorkflow(taskId, asked, expected, this.deps.now());
    return this.#resumed(taskId, result, result === 'resumed');
  }

  /**
   * The restart rule, for every engine: the execution `replaced` is started
   * again from the beginning as `execution` (an engine that lost it); the
   * task follows the new one, and the questions of the replaced one are
   * withdrawn at once (from the task, its page and the approvers' list). A
   * decision recorded for one of them is delivered when the restarted
   * execution asks the same question key with the same message and schema;
   * otherwise its decider is told it was not delivered
   * (`NOT_DELIVERED_MESSAGE`), and the question is asked anew. A task left
   * with nothing to answer resumes by the one rule, to wait on the new
   * execution. No principal: the engine's own recovery calls it.
   */
  async restartExecution(taskId: string, execution: string, replaced: string): Promise<RestartResult> {
    const result = await this.deps.store.restartExecution(taskId, execution, replaced, this.deps.now());
    return this.#resumed(taskId, result, result.resumes);
  }

  /** Records a workflow's progress message (no resume: the task still waits on its execution). No principal, as {@link askFromWorkflow}. */
  workflowProgress(taskId: string, execution: string, expected: ExpectedExecution, message: string): Promise<WorkflowWriteResult> {
    return this.deps.store.workflowProgress(taskId, execution, expected, message, this.deps.now());
  }

  /**
   * Records how a workflow's execution ended (first wins; from the execution
   * the task follows only); the task resumes, to end as the execution did.
   * No principal: the status-change event is the account's own.
   */
  async endWorkflow(taskId: string, end: WorkflowEnd, expected: ExpectedExecution): Promise<CompletionResult | 'not-followed'> {
    const result = await this.deps.store.endWorkflow(taskId, end, expected, this.deps.now());
    return this.#resumed(taskId, result, result === 'resumed');
  }

  /**
   * The one resume rule, for every change an outside party makes to a
   * waiting task (an answer, a decision, a callback's completion, a workflow's question or end): the
   * change is recorded first (`recorded`, already written); when it left the
   * task due (`resumes`), its resume is queued. A refused enqueue is logged
   * and left to the sweeper (the written row is due), and the caller gets
   * the recorded outcome: the change was made. A new way to resume records
   * its change through the store, then returns through here.
   */
  async #resumed<T>(taskId: string, recorded: T, resumes: boolean): Promise<T> {
    if (resumes) await this.#enqueue(taskId, 'resume');
    return recorded;
  }

  async #refusalsLogged(taskId: string, principal: string, record: () => Promise<AnswerResult>): Promise<AnswerResult> {
    try {
      return await record();
    } catch (error) {
      if (error instanceof DecisionRefusedError) {
        this.deps.log({ event: 'decision-refused', taskId, by: principal, reason: error.reason, keys: error.keys.length });
      }
      throw error;
    }
  }

  #decisionsLogged(taskId: string, principal: string, via: 'page' | 'client', recorded: AnswerResult): void {
    if (!recorded.decided?.length) return;
    this.deps.log({ event: 'question-decided', taskId, by: principal, via, keys: recorded.decided, resumed: recorded.resumed });
  }

  /**
   * Requests cancellation: a task that is not running ends `cancelled` now
   * (its end logged and its `Task Cancelled` event published here, after
   * the write); a running one is flagged for its worker (which ends it, and
   * announces that), or with `atOnce` ends now too, its lease voided. A
   * terminal task is left alone (`terminal`). A suspended task whose run
   * must act on the cancel (a callback's `onCancel`, a workflow's execution
   * to stop) is made due and resumed by the one rule. Throws
   * {@link TaskNotFoundError} as `read` would find nothing.
   */
  async cancel(taskId: string, principal: string, options?: CancelOptions): Promise<CancelResult> {
    const at = this.deps.now();
    const { result, task, resumes } = await this.deps.store.cancel(taskId, principal, at, options);
    if (result === 'cancelled') logTaskEnded(this.deps.log, task ?? { taskId }, 'cancelled', at);
    if (task) await this.deps.events?.announce(task);
    return this.#resumed(taskId, result, resumes === true);
  }

  /**
   * The one wait on a row: reads the task once every {@link WAIT_READ_MS}
   * while it is `working`, until it ends, asks something, `signal` aborts (the
   * client left) or `until` (epoch ms) is less than a read away. Returns the
   * last state read, or `undefined` once the task is gone.
   */
  async wait(task: TaskRecord, principal: string, until: number, signal: AbortSignal): Promise<TaskRecord | undefined> {
    let current: TaskRecord | undefined = task;
    while (current?.status === 'working' && !signal.aborted && until - this.deps.now() >= WAIT_READ_MS) {
      try {
        await delay(WAIT_READ_MS, signal);
      } catch (error) {
        if (signal.aborted) break; // the client left: nothing more to read for it
        throw error;
      }
      current = await this.read(task.taskId, principal);
    }
    return current;
  }

  /**
   * Queues a task that is already durable as `working`. If the queue refuses,
   * the task is still due for the sweeper (its `sweepAt` was written with
   * it), which enqueues it again: the caller succeeds rather than report an
   * error for a change that was made.
   */
  async #enqueue(taskId: string, reason: Extract<TaskMessage['reason'], 'start' | 'resume'>): Promise<void> {
    try {
      await this.deps.queue.send({ taskId, reason, ...resumeLink(this.deps, taskId, reason) });
    } catch (error) {
      this.deps.log({ event: 'enqueue-failed', taskId, reason, error: errorName(error) });
    }
  }
}
