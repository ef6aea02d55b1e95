/**
 * The workflow engine port: the Step Functions calls a workflow tool's run
 * makes. The adapter over `@aws-sdk/client-sfn` is `sfn-engine.ts` (the
 * functions import it by path, so a bundle without workflow tools carries no
 * Step Functions client); tests use their own.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { TasksError } from '../errors.ts';
import type { WorkflowEndStatus } from '../tasks/workflows-model.ts';

/** An execution as `DescribeExecution` tells it (times in epoch ms). */
export interface ExecutionDescription {
  executionArn: string;
  status: 'RUNNING' | 'PENDING_REDRIVE' | WorkflowEndStatus;
  startDate: number;
  /** SUCCEEDED: the output's JSON text. */
  output?: string;
  error?: string;
  cause?: string;
}

/** What a `StartExecution` gave: the execution's ARN and when it started. */
export interface StartedExecution {
  executionArn: string;
  startDate: number;
}

/** An error and its cause, as `StopExecution` and `SendTaskFailure` carry them. */
export interface Failure {
  error: string;
  cause: string;
}

export interface WorkflowEngine {
  /**
   * Starts execution `name` of `stateMachineArn` with `input` (JSON text). An
   * open execution of that name with identical input is returned as it is;
   * @throws {@link ExecutionAlreadyExistsError} once it has closed, or with other input
   */
  start(stateMachineArn: string, name: string, input: string): Promise<StartedExecution>;
  /** One `DescribeExecution`. */
  describe(executionArn: string): Promise<ExecutionDescription>;
  /** Stops the execution with `failure` as its error and cause; one that does not exist (or is gone) is left alone. */
  stop(executionArn: string, failure: Failure): Promise<void>;
  /**
   * Answers a task-token state with `output` (JSON text).
   * @throws {@link TaskTokenGoneError} when the state no longer waits for it
   */
  sendSuccess(token: string, output: string): Promise<void>;
  /** Fails a task-token state with `failure` (a named error the machine may `Catch`). Throws as {@link WorkflowEngine.sendSuccess}. */
  sendFailure(token: string, failure: Failure): Promise<void>;
}

/** `StartExecution` refused the name: the execution has closed, or was started with other input. */
export class ExecutionAlreadyExistsError extends TasksError {
  constructor(readonly executionName: string) {
    super(`An execution named ${executionName} exists already`);
    this.name = 'ExecutionAlreadyExistsError';
  }
}

/**
 * The state no longer waits for this token (`TaskTimedOut`,
 * `TaskDoesNotExist`, `InvalidToken`): it timed out, its execution ended, or
 * it was answered already. Not retried.
 */
export class TaskTokenGoneError extends TasksError {
  constructor(readonly reason: string) {
    super(`The workflow no longer waits for this answer (${reason})`);
    this.name = 'TaskTokenGoneError';
  }
}
