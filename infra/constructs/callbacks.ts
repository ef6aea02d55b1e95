import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ENV } from '../../shared/config.ts';
import type { FunctionCode } from './function-code.ts';
import type { StackSecret } from './stack-secret.ts';
import { TaskFunction } from './task-function.ts';
import type { TaskQueue } from './task-queue.ts';
import type { TaskTable } from './task-table.ts';

export interface CallbacksProps {
  /** Where the functions' code is (`function-code.ts`). */
  readonly code: FunctionCode;
  readonly table: TaskTable;
  readonly tasks: TaskQueue;
  readonly stackSecret: StackSecret;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /**
   * Active X-Ray tracing, as the stack's other functions.
   * @default `false`
   */
  readonly tracing?: boolean | undefined;
}

/**
 * The completion endpoint's function, behind `POST /callbacks/{token}`: it
 * unseals the token (a key derived from the stack's secret: `GetParameter`
 * on its parameter), records the first completion or a heartbeat on the
 * task row (`GetItem`, `UpdateItem`: `grantCallbacks`) and enqueues the task
 * it resumes (`SendMessage`). No tool runs here.
 */
export function callbacksFunction(scope: Construct, props: CallbacksProps): TaskFunction {
  const fn = new TaskFunction(scope, 'Callbacks', {
    logRetention: props.logRetention,
    removalPolicy: props.removalPolicy,
    ...(props.tracing === undefined ? {} : { tracing: props.tracing }),
    entry: 'callbacks',
    code: props.code,
    description: "MCP tasks: callbacks (an outside system's completion resumes a task, POST /callbacks/{token})",
    memorySize: 256,
    timeout: Duration.seconds(10),
    environment: { ...props.tasks.environment, [ENV.stackSecretParameter]: props.stackSecret.parameterName },
  });
  fn.function.node.addDependency(props.stackSecret.resource);
  props.stackSecret.grantRead(fn.role);
  props.table.grantCallbacks(fn);
  props.tasks.queue.grantSendMessages(fn.function);
  return fn;
}
