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

/** An execution as the engine describes it (Step Functions' `DescribeExecution`; times in epoch ms). */
export interface ExecutionDescription {
  executionArn: string;
  status: 'RUNNING' | 'PENDING_REDRIVE' | WorkflowEndStatus;
  startDate: number;
  /** SUCCEEDED: the output's JSON text. */
  output?: string;
  error?: string;
  cause?: string;
}

/** What a start gave: the execution's id (an ARN on AWS) and when it started. */
export interface StartedExecution {
  executionArn: string;
  startDate: number;
}

/** An error and its cause, as a stop and a decline carry them. */
export interface Failure {
  error: string;
  cause: string;
}

/**
 * The engine a tool runs on, as a declaration names it and the row records
 * it (`WorkflowRecord.engine`): each wing's folder name (`stepfunctions`).
 */
export type EngineName = string;

/** The engine of a declaration or a row that names none: rows and tools written before engines had names are Step Functions'. */
const DEFAULT_ENGINE: EngineName = 'stepfunctions';

/** The engine a declaration or a row names (`engine` absent: {@link DEFAULT_ENGINE}). */
export function engineNamed(named: { engine?: EngineName | undefined } | undefined): EngineName {
  return named?.engine ?? DEFAULT_ENGINE;
}

/**
 * What a tool declares of the work an engine runs for it (its declaration
 * kind): the engine it names (absent: Step Functions), the name its status
 * shows, and how the result reads as text. Each engine's declaration adds
 * what the tool names to run: an ASL file, a handler file, a repository's
 * workflow.
 */
export interface EngineDeclaration {
  engine?: EngineName;
  /** The work's name, as the task's status says it ("Running deploy-release"): no ARN or id is ever shown. */
  name: string;
  /** How the result reads as text (default: its JSON, cut at 2,000 characters). */
  text?: (output: unknown) => string;
}

/**
 * An engine's adapter. Its executions are started once by a name derived
 * from the task, described, stopped, and, for an engine with questions of its
 * own, a waiting state is answered or declined by its opaque token.
 */
export interface EngineAdapter {
  /**
   * Starts execution `name` of `target` (what the tool is bound to: a state
   * machine's ARN, a function's qualified ARN, a repository's workflow) with
   * `input` (JSON text). Idempotent: an open execution of that name with
   * identical input is returned as it is;
   * @throws {@link ExecutionAlreadyExistsError} once it has closed, or with other input
   */
  start(target: string, name: string, input: string): Promise<StartedExecution>;
  /** One look at the execution. */
  describe(execution: string): Promise<ExecutionDescription>;
  /** Stops the execution with `failure` as its error and cause; one that does not exist (or is gone) is left alone. */
  stop(execution: string, failure: Failure): Promise<void>;
  /**
   * Answers the waiting state `token` stands for with `output` (JSON text).
   * @throws {@link TaskTokenGoneError} when the state no longer waits for it
   */
  answer(token: string, output: string): Promise<void>;
  /** Declines the waiting state with `failure` (a named error the work may catch). Throws as {@link EngineAdapter.answer}. */
  decline(token: string, failure: Failure): Promise<void>;
}

/** The adapter's earlier name. */
export type WorkflowEngine = EngineAdapter;

/** A start refused the name: the execution has closed, or was started with other input. */
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
