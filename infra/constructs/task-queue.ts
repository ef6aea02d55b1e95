import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../shared/config.ts';
import { TaskFunction } from './task-function.ts';
import type { TaskTable } from './task-table.ts';

/**
 * AWS's rule for SQS event sources: the queue's visibility timeout is at least
 * six times the function timeout, so a batch that is retried after throttling
 * is not redelivered while an earlier attempt may still run.
 */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/** Deliveries of one message before it moves to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/**
 * How long one worker invocation may run. Bounded on both sides by the task
 * lease (`leaseMs`, 5 minutes by default):
 * - below it, so a lease always outlives the invocation that took it;
 * - at least a sixth of it, so the visibility timeout (6 × this) outlasts a
 *   lease left behind by a crashed or timed-out invocation. Otherwise the
 *   redelivered message would find the lease still live and be dropped,
 *   leaving the task to the sweeper.
 * Two minutes keeps both margins wide and redelivery after a failure at 12 minutes.
 * (The first bound exists because the runtime does not renew a lease while a
 * handler runs; once it heartbeats, only the second remains, and any
 * per-invocation time budget the runtime keeps must stay below this timeout.)
 */
export const WORKER_TIMEOUT = Duration.minutes(2);

/** One conditional write per record; generous for a cold start plus retries of the SDK. */
const DEAD_LETTER_HANDLER_TIMEOUT = Duration.seconds(30);

export interface TaskQueueProps {
  readonly table: TaskTable;
  /** Environment shared by every function (table name, toolset); the queue URL is added here. */
  readonly environment: Record<string, string>;
  /** The lease a worker takes on a task (`ENV.leaseMs`); checked against {@link WORKER_TIMEOUT}. */
  readonly leaseMs: number;
  /** Upper bound on concurrent worker invocations the queue may drive (2–1000). */
  readonly workerMaxConcurrency: number;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The task queue, its dead-letter queue, the worker that runs tasks from the
 * queue and the handler that marks dead-lettered tasks failed.
 *
 * Extension point: the sweeper (a later issue) belongs here too — a
 * {@link TaskFunction} on a schedule, with `queue.grantSendMessages` and
 * `table.grantReadWriteData`, built from {@link TaskQueue.environment}.
 */
export class TaskQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly worker: TaskFunction;
  readonly deadLetterHandler: TaskFunction;
  /** The shared environment plus this queue's URL: what every function of the stack gets. */
  readonly environment: Record<string, string>;
  /** Of {@link TaskQueue.queue}: how long a failed delivery waits before it is retried. */
  readonly visibilityTimeout: Duration;

  constructor(scope: Construct, id: string, props: TaskQueueProps) {
    super(scope, id);
    const visibilityTimeout = Duration.seconds(WORKER_TIMEOUT.toSeconds() * VISIBILITY_TIMEOUT_FACTOR);
    this.visibilityTimeout = visibilityTimeout;
    if (WORKER_TIMEOUT.toMilliseconds() >= props.leaseMs || visibilityTimeout.toMilliseconds() <= props.leaseMs) {
      throw new Error(
        `The worker timeout (${WORKER_TIMEOUT.toHumanString()}) must be shorter than the task lease (${props.leaseMs} ms), and the visibility timeout (${visibilityTimeout.toHumanString()}) longer`,
      );
    }

    // The DLQ keeps messages for the maximum 14 days: its handler retries
    // until it succeeds, and an operator alarmed by a stuck DLQ needs time.
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      visibilityTimeout: Duration.seconds(DEAD_LETTER_HANDLER_TIMEOUT.toSeconds() * VISIBILITY_TIMEOUT_FACTOR),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });

    this.environment = { ...props.environment, [ENV.queueUrl]: this.queue.queueUrl };

    this.worker = new TaskFunction(this, 'Worker', {
      entry: 'functions/worker/handler.ts',
      description: 'MCP tasks: runs queued tasks (SQS event source, partial batch responses)',
      // Tool handlers run here; more memory also buys proportionally more CPU.
      memorySize: 512,
      timeout: WORKER_TIMEOUT,
      environment: { ...this.environment, [ENV.leaseMs]: String(props.leaseMs) },
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      // The worker hands tasks over to its own queue (below), so SQS → Lambda
      // → SQS chains are by design, bounded by the task; Lambda's recursive-
      // loop guard, which drops a chain's 16th hop, would cut long tasks short.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    props.table.grantReadWriteData(this.worker);
    // Continuations, durable timers and retries hand a task over by sending a
    // new message to this queue (`shared/runtime/worker.ts`).
    this.queue.grantSendMessages(this.worker.function);
    this.worker.function.addEventSource(
      new SqsEventSource(this.queue, {
        // Records of a batch run concurrently in one invocation; a handful
        // shares the invocation cost of waiting tools without letting one
        // slow task hold many others behind the same timeout.
        batchSize: 5,
        reportBatchItemFailures: true,
        maxConcurrency: props.workerMaxConcurrency,
      }),
    );

    this.deadLetterHandler = new TaskFunction(this, 'DeadLetterHandler', {
      entry: 'functions/dlq/handler.ts',
      description: 'MCP tasks: marks tasks whose messages were dead-lettered as failed',
      memorySize: 256,
      timeout: DEAD_LETTER_HANDLER_TIMEOUT,
      environment: this.environment,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    props.table.grantReadWriteData(this.deadLetterHandler);
    this.deadLetterHandler.function.addEventSource(
      new SqsEventSource(this.deadLetterQueue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 2 }),
    );
  }
}
