import type { RemovalPolicy } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../../shared/config.ts';
import type { DurableTimings } from '../timings.ts';
import type { FunctionCode } from './function-code.ts';
import { TaskFunction } from './task-function.ts';
import { DEAD_LETTER_HANDLER_TIMEOUT, type TaskQueue } from './task-queue.ts';
import type { TaskTable } from './task-table.ts';

export interface SweepScheduleProps {
  /** Where the functions' code is (`function-code.ts`). */
  readonly code: FunctionCode;
  readonly table: TaskTable;
  /** The queue the sweeper puts stuck tasks back on, and whose dead-letter queue the handler drains. */
  readonly tasks: TaskQueue;
  /** The sweep interval and the sweeper's timeout (`infra/timings.ts`). */
  readonly timings: DurableTimings;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /** Active X-Ray tracing on both functions. */
  readonly tracing: boolean;
}

/**
 * What runs on the sweep schedule: the sweeper, which puts stuck tasks back
 * on the queue, and the dead-letter handler, which drains the dead-letter
 * queue and marks its tasks failed; one rule invokes both every
 * {@link DurableTimings.sweepInterval}.
 */
export class SweepSchedule extends Construct {
  readonly deadLetterHandler: TaskFunction;
  readonly sweeper: TaskFunction;
  /** Runs the sweeper and the dead-letter handler every {@link DurableTimings.sweepInterval}. */
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: SweepScheduleProps) {
    super(scope, id);
    const { timings, tasks } = props;
    const common = { code: props.code, logRetention: props.logRetention, removalPolicy: props.removalPolicy, tracing: props.tracing };

    this.deadLetterHandler = new TaskFunction(this, 'DeadLetterHandler', {
      ...common,
      entry: 'deadLetter',
      description: 'MCP tasks: marks tasks whose messages were dead-lettered as failed',
      memorySize: 256,
      timeout: DEAD_LETTER_HANDLER_TIMEOUT,
      environment: { ...tasks.environment, [ENV.deadLetterQueueUrl]: tasks.deadLetterQueue.queueUrl },
      // Like the sweeper: the next scheduled run is the retry.
      retryAttempts: 0,
      maxEventAge: timings.sweepInterval,
    });
    props.table.grantReadWriteData(this.deadLetterHandler);
    // No event source mapping: an idle mapping's pollers would make some
    // 650,000 empty long polls a month (about $0.26). The sweep schedule
    // invokes the handler, which receives from the queue itself (one request
    // a minute when it is empty) and deletes what it handled.
    tasks.deadLetterQueue.grantConsumeMessages(this.deadLetterHandler.function);

    this.sweeper = new TaskFunction(this, 'Sweeper', {
      ...common,
      entry: 'sweeper',
      description: 'MCP tasks: sweeper, re-enqueues tasks no worker is running (scheduled)',
      // One index query and two calls per due task: I/O, not CPU.
      memorySize: 256,
      timeout: timings.sweeperTimeout,
      environment: tasks.environment,
      // The next scheduled run is the retry: Lambda's own retries of a failed
      // asynchronous invocation would only overlap it, and an event older
      // than one interval has been superseded.
      retryAttempts: 0,
      maxEventAge: timings.sweepInterval,
    });
    // Query on the active-tasks index, GetItem and UpdateItem on the table, nothing else.
    props.table.grantSweep(this.sweeper);
    tasks.queue.grantSendMessages(this.sweeper.function);
    this.rule = new Rule(this, 'SweepSchedule', {
      description: 'Runs the MCP tasks sweeper and drains the dead-letter queue',
      schedule: Schedule.rate(timings.sweepInterval),
      targets: [
        new LambdaFunction(this.sweeper.function, { retryAttempts: 2, maxEventAge: timings.sweepInterval }),
        new LambdaFunction(this.deadLetterHandler.function, { retryAttempts: 2, maxEventAge: timings.sweepInterval }),
      ],
    });
  }
}
