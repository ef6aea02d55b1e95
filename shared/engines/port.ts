/**
 * The engine port: what a tool's run asks of the engine that runs its work
 * outside this server (start once by a name derived from the task, describe,
 * stop, and, for an engine with questions of its own, answer or decline a
 * waiting state by its opaque token). Each engine is a wing beside this file,
 * `shared/engines/<engine>/`, reached through its `index.ts`; Step Functions
 * is the first (`stepfunctions/`). The functions import a wing by path only
 * through the worker's entry of a deployment with that engine's tools, so a
 * bundle carries no engine it does not run; tests use their own.
 *
 * No AWS SDK and no wing in here (the layout test checks it): this module is
 * part of every worker that runs engine tools.
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
