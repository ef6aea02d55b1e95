import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../shared/config.ts';
import { type DurableTimings, VISIBILITY_TIMEOUT_FACTOR } from '../timings.ts';

/** Deliveries of one message before it moves to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/**
 * The dead-letter handler's timeout: one conditional write per record, generous
 * for a cold start plus retries of the SDK. Here because the dead-letter
 * queue's visibility timeout is derived from it.
 */
export const DEAD_LETTER_HANDLER_TIMEOUT = Duration.seconds(30);

export interface TaskQueueProps {
  /** Environment shared by every function (table name, timings, index partitions); the queue URL is added here. */
  readonly environment: Record<string, string>;
  /** The visibility timeout, checked against the other timings (`infra/timings.ts`). */
  readonly timings: DurableTimings;
}

/**
 * The task queue and its dead-letter queue. The functions around them are
 * constructs of their own (`task-worker.ts`, `sweep-schedule.ts`), created in
 * this construct's scope: their construct paths, and so the logical ids of
 * the deployed resources, are those of children of this construct.
 */
export class TaskQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  /** The shared environment plus this queue's URL: what every function of the stack gets. */
  readonly environment: Record<string, string>;
  /** Of {@link TaskQueue.queue}: how long a failed delivery waits before it is retried. */
  readonly visibilityTimeout: Duration;

  constructor(scope: Construct, id: string, props: TaskQueueProps) {
    super(scope, id);
    const visibilityTimeout = props.timings.visibilityTimeout;
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
  }
}
