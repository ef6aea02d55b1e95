import type { RemovalPolicy } from 'aws-cdk-lib';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { SettingStores } from '../../shared/runtime/settings.ts';
import { WORKER_BATCH_SIZE } from '../event-sources.ts';
import type { DurableTimings } from '../timings.ts';
import type { FunctionCode } from './function-code.ts';
import { TaskFunction } from './task-function.ts';
import type { TaskQueue } from './task-queue.ts';
import type { TaskTable } from './task-table.ts';

export interface TaskWorkerProps {
  /** Where the functions' code is (`function-code.ts`). */
  readonly code: FunctionCode;
  readonly table: TaskTable;
  /** The queue the worker runs tasks from, and hands them over to; its environment is the worker's. */
  readonly tasks: TaskQueue;
  /** The worker's timeout, checked against the queue's visibility timeout (`infra/timings.ts`). */
  readonly timings: DurableTimings;
  /** Upper bound on concurrent worker invocations the queue may drive (2–1000). */
  readonly maxConcurrency: number;
  /**
   * The setting stores the tools the worker runs read (bundles their clients; the grants are the stack's).
   * @default none
   */
  readonly settingStores?: SettingStores;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /** Active X-Ray tracing. */
  readonly tracing: boolean;
}

/**
 * The worker: the function that runs tasks from the task queue, driven by an
 * SQS event source with partial batch responses, allowed to read and write
 * the table and to send to its own queue.
 */
export class TaskWorker extends TaskFunction {
  constructor(scope: Construct, id: string, props: TaskWorkerProps) {
    super(scope, id, {
      entry: 'worker',
      code: props.code,
      description: 'MCP tasks: runs queued tasks (SQS event source, partial batch responses)',
      // Tool handlers run here; more memory also buys proportionally more CPU.
      memorySize: 512,
      timeout: props.timings.workerTimeout,
      environment: props.tasks.environment,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
      // The worker hands tasks over to its own queue (below), so SQS → Lambda
      // → SQS chains are by design, bounded by the task; Lambda's recursive-
      // loop guard, which drops a chain's 16th hop, would cut long tasks short.
      recursiveLoop: RecursiveLoop.ALLOW,
      ...(props.settingStores ? { settingStores: props.settingStores } : {}),
    });
    props.table.grantReadWriteData(this);
    // Continuations, durable timers and retries hand a task over by sending a
    // new message to this queue (`shared/runtime/worker.ts`).
    props.tasks.queue.grantSendMessages(this.function);
    this.function.addEventSource(
      new SqsEventSource(props.tasks.queue, {
        // Shared with the local stack's emulation (`infra/event-sources.ts`).
        batchSize: WORKER_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: props.maxConcurrency,
      }),
    );
  }
}
