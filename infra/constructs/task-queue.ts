import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../shared/config.ts';
import type { SettingStores } from '../../shared/runtime/settings.ts';
import { WORKER_BATCH_SIZE } from '../event-sources.ts';
import { type DurableTimings, VISIBILITY_TIMEOUT_FACTOR } from '../timings.ts';
import { FUNCTION_ENTRIES, TaskFunction } from './task-function.ts';
import type { TaskTable } from './task-table.ts';

/** Deliveries of one message before it moves to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/** One conditional write per record; generous for a cold start plus retries of the SDK. */
const DEAD_LETTER_HANDLER_TIMEOUT = Duration.seconds(30);

export interface TaskQueueProps {
  readonly table: TaskTable;
  /** Environment shared by every function (table name, toolset, timings); the queue URL is added here. */
  readonly environment: Record<string, string>;
  /** Worker and sweeper timeouts, the visibility timeout and the sweep interval, checked against each other (`infra/timings.ts`). */
  readonly timings: DurableTimings;
  /** Upper bound on concurrent worker invocations the queue may drive (2–1000). */
  readonly workerMaxConcurrency: number;
  /** The setting stores the tools the worker runs read (bundles their clients; the grants are the stack's). */
  readonly workerSettingStores?: SettingStores;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /** Active X-Ray tracing on the functions. */
  readonly tracing: boolean;
}

/**
 * The task queue, its dead-letter queue, and the functions around them: the
 * worker that runs tasks from the queue, the handler that marks dead-lettered
 * tasks failed, and the sweeper that puts stuck tasks back on the queue.
 */
export class TaskQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly worker: TaskFunction;
  readonly deadLetterHandler: TaskFunction;
  readonly sweeper: TaskFunction;
  /** Runs the sweeper every {@link DurableTimings.sweepInterval}. */
  readonly sweepSchedule: Rule;
  /** The shared environment plus this queue's URL: what every function of the stack gets. */
  readonly environment: Record<string, string>;
  /** Of {@link TaskQueue.queue}: how long a failed delivery waits before it is retried. */
  readonly visibilityTimeout: Duration;

  constructor(scope: Construct, id: string, props: TaskQueueProps) {
    super(scope, id);
    const { timings } = props;
    const visibilityTimeout = timings.visibilityTimeout;
    this.visibilityTimeout = visibilityTimeout;

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
      entry: FUNCTION_ENTRIES.worker,
      description: 'MCP tasks: runs queued tasks (SQS event source, partial batch responses)',
      // Tool handlers run here; more memory also buys proportionally more CPU.
      memorySize: 512,
      timeout: timings.workerTimeout,
      environment: this.environment,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
      // The worker hands tasks over to its own queue (below), so SQS → Lambda
      // → SQS chains are by design, bounded by the task; Lambda's recursive-
      // loop guard, which drops a chain's 16th hop, would cut long tasks short.
      recursiveLoop: RecursiveLoop.ALLOW,
      ...(props.workerSettingStores ? { settingStores: props.workerSettingStores } : {}),
    });
    props.table.grantReadWriteData(this.worker);
    // Continuations, durable timers and retries hand a task over by sending a
    // new message to this queue (`shared/runtime/worker.ts`).
    this.queue.grantSendMessages(this.worker.function);
    this.worker.function.addEventSource(
      new SqsEventSource(this.queue, {
        // Shared with the local stack's emulation (`infra/event-sources.ts`).
        batchSize: WORKER_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: props.workerMaxConcurrency,
      }),
    );

    this.deadLetterHandler = new TaskFunction(this, 'DeadLetterHandler', {
      entry: FUNCTION_ENTRIES.deadLetter,
      description: 'MCP tasks: marks tasks whose messages were dead-lettered as failed',
      memorySize: 256,
      timeout: DEAD_LETTER_HANDLER_TIMEOUT,
      environment: { ...this.environment, [ENV.deadLetterQueueUrl]: this.deadLetterQueue.queueUrl },
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
      // Like the sweeper: the next scheduled run is the retry.
      retryAttempts: 0,
      maxEventAge: timings.sweepInterval,
    });
    props.table.grantReadWriteData(this.deadLetterHandler);
    // No event source mapping: an idle mapping's pollers would make some
    // 650,000 empty long polls a month (about $0.26). The sweep schedule
    // invokes the handler, which receives from the queue itself (one request
    // a minute when it is empty) and deletes what it handled.
    this.deadLetterQueue.grantConsumeMessages(this.deadLetterHandler.function);

    this.sweeper = new TaskFunction(this, 'Sweeper', {
      entry: FUNCTION_ENTRIES.sweeper,
      description: 'MCP tasks: sweeper, re-enqueues tasks no worker is running (scheduled)',
      // One index query and two calls per due task: I/O, not CPU.
      memorySize: 256,
      timeout: timings.sweeperTimeout,
      environment: this.environment,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
      // The next scheduled run is the retry: Lambda's own retries of a failed
      // asynchronous invocation would only overlap it, and an event older
      // than one interval has been superseded.
      retryAttempts: 0,
      maxEventAge: timings.sweepInterval,
    });
    // Query on the active-tasks index, GetItem and UpdateItem on the table, nothing else.
    props.table.grantSweep(this.sweeper);
    this.queue.grantSendMessages(this.sweeper.function);
    this.sweepSchedule = new Rule(this, 'SweepSchedule', {
      description: 'Runs the MCP tasks sweeper and drains the dead-letter queue',
      schedule: Schedule.rate(timings.sweepInterval),
      targets: [
        new LambdaFunction(this.sweeper.function, { retryAttempts: 2, maxEventAge: timings.sweepInterval }),
        new LambdaFunction(this.deadLetterHandler.function, { retryAttempts: 2, maxEventAge: timings.sweepInterval }),
      ],
    });
  }
}
