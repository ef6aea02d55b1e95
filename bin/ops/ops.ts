/**
 * Operator commands: look inside a task, list working and waiting tasks,
 * end a task as operator, redrive the dead-letter queue. They read the sparse
 * active-tasks index (never a table scan) and change tasks only through the
 * store, so every change is the same conditional write the functions make.
 *
 * The same code runs against a deployed stack (credentials from the usual AWS
 * chain, names from the stack's outputs) and the local stack (its emulators'
 * endpoints): see `cli.ts`.
 */
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { whoAsks } from '../../shared/console/words.ts';
import { SqsTaskQueue } from '../../shared/queue/sqs-queue.ts';
import {
  activeIndexEntries,
  activeShards,
  DynamoDbTaskStore,
  shardsOf,
  TABLE_KEYS,
  TASK_ROW_SK,
  taskFromItem,
} from '../../shared/tasks/dynamodb/index.ts';
import { isRunning, isTerminal, type TaskRecord } from '../../shared/tasks/model.ts';
import { statusMessageOf } from '../../shared/tasks/status-message.ts';
import type { StorePolicy } from '../../shared/tasks/store-types.ts';
import { type Timeline, timelineOf } from '../../shared/tasks/timeline.ts';
import { type WorkflowEndStatus, workflowEnd, workflowQuestions } from '../../shared/tasks/workflows-model.ts';
import { INTERNAL_ERROR } from '../../shared/wire.ts';

/**
 * The X-Ray console's page of trace `traceId` (OpenTelemetry's 32 hex digits,
 * written as X-Ray writes it: `1-<first 8>-<last 24>`) in `region`: where a
 * stack that exports to X-Ray sends its spans.
 */
export function xrayTraceUrl(region: string, traceId: string): string {
  const xrayId = `1-${traceId.slice(0, 8)}-${traceId.slice(8)}`;
  return `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#xray:traces/${xrayId}`;
}

export interface OpsDeps {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  tableName: string;
  queueUrl: string;
  deadLetterQueueUrl: string;
  /** The deployment's timings (the store applies them to what it writes). */
  policy: StorePolicy & { maxInputWaitMs: number };
  now?: () => number;
  /** A deployed stack's region, whose X-Ray console a task's trace is linked to (absent locally). */
  traceRegion?: string;
}

/** What `inspect` shows of a task. */
export interface TaskInspection {
  taskId: string;
  status: TaskRecord['status'];
  owner: string;
  tool: string;
  createdAt: string;
  ageMs: number;
  lastUpdatedAt: string;
  ttlMs: number;
  statusMessage?: string;
  cancelRequested: boolean;
  /** Runs started since the last clean hand-over. */
  attempts: number;
  lease?: { owner: string; until: string; live: boolean };
  /** When the sweeper looks at the task next, and what it will do then. */
  nextSweep?: { at: string; inMs: number; action: 'requeue' | 'end-wait' };
  waitingForInput?: string[];
  /** Who decided each question for a person, and when (never what they answered). */
  decisions?: Record<string, { by: string; name?: string; as: 'owner' | 'approver'; via: 'page' | 'client'; at: string }>;
  /**
   * Who asks, by the rule of the task's pages: the name or email their token
   * carried (kept on the row), else the name of their last console sign-in,
   * else their subject; `requesterFrom` says which. Personal data, shown to
   * operators here and on the task's pages only.
   */
  requester: string;
  requesterFrom: 'token' | 'console sign-in' | 'subject';
  /** Recorded step checkpoints, by name (values are not shown: they may be user data). */
  steps: string[];
  /** A workflow tool's task: the execution it follows, as its row records it. */
  execution?: ExecutionInspection;
  version: number;
}

/**
 * The execution a workflow tool's task follows, as the task's row records it
 * (nothing is asked of Step Functions): `RUNNING` until its end is recorded,
 * `UNKNOWN` for a task that ended without it (cancelled, or ended by an
 * operator, before the execution's end came in).
 */
export interface ExecutionInspection {
  arn: string;
  name: string;
  status: 'RUNNING' | WorkflowEndStatus | 'UNKNOWN';
  /** The keys (on the task) of the questions its task-token states asked and have not been answered back yet. */
  openQuestions: string[];
  /** Its last progress message. */
  progress?: string;
  /** How it failed, as its end recorded it. */
  error?: string;
  cause?: string;
}

/** The execution part of `inspect`, for a task whose row names an execution. */
function executionOf(task: TaskRecord): { execution?: ExecutionInspection } {
  const arn = task.workflow?.execution;
  if (arn === undefined) return {};
  const end = workflowEnd(task.callbacks);
  const tokens = task.workflow?.tokens ?? {};
  return {
    execution: {
      arn,
      name: arn.slice(arn.lastIndexOf(':') + 1),
      status: end?.status ?? (isTerminal(task.status) ? 'UNKNOWN' : 'RUNNING'),
      openQuestions: workflowQuestions(task.callbacks)
        .filter((question) => Object.hasOwn(tokens, question.id))
        .map((question) => question.key),
      ...(task.workflow?.progress === undefined ? {} : { progress: task.workflow.progress }),
      ...(end?.error === undefined ? {} : { error: end.error }),
      ...(end?.cause === undefined ? {} : { cause: end.cause }),
    },
  };
}

/** One line of `working` or `waiting`. */
export interface TaskSummary {
  taskId: string;
  status: TaskRecord['status'];
  tool: string;
  ageMs: number;
  /** For waiting tasks: how long they have been waiting. */
  waitingMs?: number;
  attempts: number;
  running: boolean;
  nextSweepAt?: string;
}

export interface EndResult {
  taskId: string;
  /** `cancelled`/`failed`: ended now; `requested`: a worker is running it and stops at its next check; `unchanged`: see `reason`. */
  outcome: 'cancelled' | 'failed' | 'requested' | 'unchanged';
  reason?: string;
}

export class Ops {
  readonly #deps: OpsDeps;
  readonly #store: DynamoDbTaskStore;
  readonly #now: () => number;

  constructor(deps: OpsDeps) {
    this.#deps = deps;
    this.#store = new DynamoDbTaskStore({ client: deps.dynamodb, tableName: deps.tableName, policy: deps.policy });
    this.#now = deps.now ?? Date.now;
  }

  /** The row, steps, attempts, lease and next sweep of one task (any owner); `undefined` when there is no such row. */
  async inspect(taskId: string): Promise<TaskInspection | undefined> {
    const task = await this.#row(taskId);
    if (!task) return undefined;
    const now = this.#now();
    const steps = [...(await this.#store.loadSteps(taskId)).keys()];
    const message = statusMessageOf(task);
    // The row's own name needs no read; else one eventually consistent read of the owner's last sign-in.
    const signedInAs = task.requester === undefined ? await this.#store.signInNameOf(task.owner, now) : undefined;
    return {
      taskId,
      status: task.status,
      owner: task.owner,
      tool: task.tool,
      createdAt: iso(task.createdAt),
      ageMs: now - task.createdAt,
      lastUpdatedAt: iso(task.lastUpdatedAt),
      ttlMs: task.ttlMs,
      ...(message === undefined ? {} : { statusMessage: message }),
      cancelRequested: task.cancelRequested,
      attempts: task.attempts,
      ...(task.lease ? { lease: { owner: task.lease.owner, until: iso(task.lease.until), live: isRunning(task, now) } } : {}),
      ...(task.sweepAt === undefined
        ? {}
        : {
            nextSweep: {
              at: iso(task.sweepAt),
              inMs: task.sweepAt - now,
              action: task.status === 'input_required' ? 'end-wait' : 'requeue',
            },
          }),
      ...(task.status === 'input_required' ? { waitingForInput: Object.keys(task.inputRequests) } : {}),
      requester: whoAsks(task, signedInAs),
      requesterFrom: task.requester !== undefined ? 'token' : signedInAs !== undefined ? 'console sign-in' : 'subject',
      ...(task.decisions === undefined
        ? {}
        : { decisions: Object.fromEntries(Object.entries(task.decisions).map(([key, d]) => [key, { ...d, at: iso(d.at) }])) }),
      steps,
      ...executionOf(task),
      version: task.version,
    } satisfies TaskInspection;
  }

  /** The task's life as phases in order (any owner), from its row alone; `undefined` when there is no such row. */
  async trace(taskId: string): Promise<(Timeline & { traceUrl?: string }) | undefined> {
    const task = await this.#row(taskId);
    if (!task) return undefined;
    const timeline = timelineOf(task, this.#now());
    const region = this.#deps.traceRegion;
    return timeline.traceId && region ? { ...timeline, traceUrl: xrayTraceUrl(region, timeline.traceId) } : timeline;
  }

  /** Working tasks, oldest first (from the active-tasks index, then their rows). */
  async working(limit = 50): Promise<TaskSummary[]> {
    const tasks = await this.#indexed(Number.MAX_SAFE_INTEGER);
    return tasks
      .filter((task) => task.status === 'working')
      .sort((a, b) => a.createdAt - b.createdAt)
      .slice(0, limit)
      .map((task) => this.#summary(task));
  }

  /**
   * Tasks waiting for input for at least `olderThanMs`, longest waiting first.
   * A waiting task's `sweepAt` is the end of its wait (start + maxInputWaitMs),
   * so the index query reads only entries that can qualify.
   */
  async waiting(olderThanMs: number, limit = 50): Promise<TaskSummary[]> {
    const now = this.#now();
    const tasks = await this.#indexed(now - olderThanMs + this.#deps.policy.maxInputWaitMs);
    return tasks
      .filter((task) => task.status === 'input_required' && this.#waitingMs(task, now)! >= olderThanMs)
      .map((task) => this.#summary(task))
      .sort((a, b) => (b.waitingMs ?? 0) - (a.waitingMs ?? 0))
      .slice(0, limit);
  }

  /**
   * Cancels a task as operator, with `reason` as its status message. A task a
   * worker is running is asked to stop (the worker ends it at its next check).
   */
  async cancel(taskId: string, reason: string): Promise<EndResult> {
    const task = await this.#row(taskId);
    if (!task) return { taskId, outcome: 'unchanged', reason: 'no such task' };
    const { result, resumes } = await this.#store.cancel(taskId, task.owner, this.#now(), { statusMessage: operatorMessage(reason) });
    if (result === 'terminal') return { taskId, outcome: 'unchanged', reason: `already ${task.status}` };
    // Made due so that its run stops its workflow or runs its `onCancel`: queued now (else the next sweep carries it).
    if (resumes) await new SqsTaskQueue({ client: this.#deps.sqs, queueUrl: this.#deps.queueUrl }).send({ taskId, reason: 'resume' });
    return { taskId, outcome: result };
  }

  /** Ends a task `failed` as operator; refused while a worker holds its lease (cancel it instead). */
  async fail(taskId: string, reason: string): Promise<EndResult> {
    const message = operatorMessage(reason);
    const task = await this.#row(taskId);
    if (!task) return { taskId, outcome: 'unchanged', reason: 'no such task' };
    if (await this.#store.fail(taskId, { error: { code: INTERNAL_ERROR, message }, statusMessage: message, now: this.#now() }))
      return { taskId, outcome: 'failed' };
    const now = await this.#row(taskId);
    return {
      taskId,
      outcome: 'unchanged',
      reason: now && isRunning(now, this.#now()) ? 'a worker holds its lease: cancel it instead' : `already ${now?.status ?? 'gone'}`,
    };
  }

  /**
   * Moves dead-lettered messages back to the task queue (at most `limit`):
   * each is sent, then deleted from the DLQ, so a crash in between leaves a
   * duplicate (which a task's lease makes harmless), never a loss.
   */
  async redrive(limit = 100): Promise<{ moved: number; taskIds: string[] }> {
    const { sqs, queueUrl, deadLetterQueueUrl } = this.#deps;
    const taskIds: string[] = [];
    while (taskIds.length < limit) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: deadLetterQueueUrl,
          MaxNumberOfMessages: Math.min(10, limit - taskIds.length),
          WaitTimeSeconds: 1,
        }),
      );
      if (Messages.length === 0) break;
      for (const message of Messages) {
        await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: message.Body ?? '' }));
        taskIds.push(taskIdOf(message.Body));
      }
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: deadLetterQueueUrl,
          Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
    return { moved: taskIds.length, taskIds };
  }

  #summary(task: TaskRecord): TaskSummary {
    const now = this.#now();
    const waitingMs = this.#waitingMs(task, now);
    return {
      taskId: task.taskId,
      status: task.status,
      tool: task.tool,
      ageMs: now - task.createdAt,
      ...(waitingMs === undefined ? {} : { waitingMs }),
      attempts: task.attempts,
      running: isRunning(task, now),
      ...(task.sweepAt === undefined ? {} : { nextSweepAt: iso(task.sweepAt) }),
    };
  }

  #waitingMs(task: TaskRecord, now: number): number | undefined {
    if (task.status !== 'input_required' || task.sweepAt === undefined) return undefined;
    return now - (task.sweepAt - this.#deps.policy.maxInputWaitMs);
  }

  /** Rows of every index entry with `sweepAt <= upTo`, from every shard (index query, then one read per row). */
  async #indexed(upTo: number): Promise<TaskRecord[]> {
    const ids: string[] = [];
    const table = { client: this.#deps.dynamodb, tableName: this.#deps.tableName };
    // The deployment's count (its `OpsActiveIndexShards` output): every shard a smaller earlier count wrote is among them.
    for (const shard of activeShards(shardsOf(this.#deps.policy))) {
      for (const entry of await activeIndexEntries(table, shard, { upTo })) ids.push(entry.taskId);
    }
    const rows = await Promise.all(ids.map((id) => this.#row(id)));
    return rows.filter((row): row is TaskRecord => row !== undefined);
  }

  async #row(taskId: string): Promise<TaskRecord | undefined> {
    const { Item } = await this.#deps.dynamodb.send(
      new GetItemCommand({
        TableName: this.#deps.tableName,
        Key: { [TABLE_KEYS.partition]: { S: taskId }, [TABLE_KEYS.sort]: { S: TASK_ROW_SK } },
        ConsistentRead: true,
      }),
    );
    return Item && taskFromItem(Item);
  }
}

function operatorMessage(reason: string): string {
  return `Ended by an operator: ${reason}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function taskIdOf(body: string | undefined): string {
  try {
    const parsed = JSON.parse(body ?? '') as { taskId?: unknown };
    return typeof parsed.taskId === 'string' ? parsed.taskId : '(not a task message)';
  } catch {
    return '(not a task message)';
  }
}

/** Rows as an aligned text table. */
export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => (row[column] === undefined ? '' : String(row[column]))));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
