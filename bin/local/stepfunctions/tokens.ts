/**
 * Task tokens: one minted each time a task-token state is entered (each Map
 * iteration, each Parallel branch, each retry), answered by `SendTaskSuccess`
 * / `SendTaskFailure`, kept alive by `SendTaskHeartbeat`, and timed by the
 * state's `TimeoutSeconds` (from entry) and `HeartbeatSeconds` (from the
 * invoke's return, as AWS counts it).
 *
 * A token is 32 random bytes: unguessable, and never logged. One that is not
 * of that form answers `InvalidToken`; one this life never minted,
 * `TaskDoesNotExist`; one whose state stopped waiting (answered, timed out,
 * its execution ended), `TaskTimedOut` ("Provided task does not exist
 * anymore"), as AWS answers them.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from './api-errors.ts';
import type { Json } from './definition.ts';
import { statesRuntimeError } from './interpreter.ts';

const TOKEN = /^sfn-local-[A-Za-z0-9_-]{43}$/;

/** What an answered token gives its state: the output, or the error it fails with. */
type Settle = { resolve: (output: Json) => void; reject: (error: Error) => void };

interface OpenTask extends Settle {
  executionArn: string;
  timers: Set<NodeJS.Timeout>;
  heartbeatMs?: number;
  heartbeat?: NodeJS.Timeout;
}

/** A task-token state's wait, as its handler sees it. */
export interface TokenWait {
  token: string;
  /** Resolves with the `SendTaskSuccess` output; rejects with the `SendTaskFailure` error or `States.Timeout`. */
  answer: Promise<Json>;
  /** Starts the heartbeat clock (after the invoke returned). */
  startHeartbeat(): void;
  /** Ends the wait without an answer; with `reason`, the answer rejects with it (the execution stopped). */
  close(reason?: Error): void;
}

export interface TokenTimes {
  timeoutMs?: number;
  heartbeatMs?: number;
}

export class TaskTokens {
  readonly #open = new Map<string, OpenTask>();
  /** Tokens whose state stopped waiting, kept so that a late answer gets `TaskTimedOut`. */
  readonly #ended = new Set<string>();
  readonly #timeoutError: () => Error;

  /** `timeoutError` makes the `States.Timeout` error a timed-out state fails with. */
  constructor(timeoutError: () => Error) {
    this.#timeoutError = timeoutError;
  }

  /** Mints a token for a task-token state `executionArn` just entered, and starts its `TimeoutSeconds` clock. */
  open(executionArn: string, times: TokenTimes): TokenWait {
    const token = `sfn-local-${randomBytes(32).toString('base64url')}`;
    let settle: Settle | undefined;
    const answer = new Promise<Json>((resolve, reject) => (settle = { resolve, reject }));
    const task: OpenTask = {
      ...settle!,
      executionArn,
      timers: new Set(),
      ...(times.heartbeatMs === undefined ? {} : { heartbeatMs: times.heartbeatMs }),
    };
    this.#open.set(token, task);
    if (times.timeoutMs !== undefined) task.timers.add(setTimeout(() => this.#timeOut(token), times.timeoutMs));
    return {
      token,
      answer,
      startHeartbeat: () => this.#armHeartbeat(token),
      close: (reason) => this.#end(token, reason),
    };
  }

  /** `SendTaskSuccess`: the state succeeds with `output`. */
  succeed(token: string, output: Json): void {
    const task = this.#take(token);
    task.resolve(output);
  }

  /** `SendTaskFailure`: the state fails with `error` and `cause`, which its `Catch` and `Retry` see. */
  fail(token: string, error: string | undefined, cause: string | undefined): void {
    const task = this.#take(token);
    const failure = new Error(cause ?? '');
    failure.name = error ?? '';
    task.reject(failure);
  }

  /** `SendTaskHeartbeat`: the heartbeat clock starts again. */
  heartbeat(token: string): void {
    const task = this.#find(token);
    if (task.heartbeat !== undefined) this.#armHeartbeat(token);
  }

  /**
   * Ends the waits of an execution that ended (a wait can outlive its state
   * when a sibling Parallel branch or Map iteration failed): their tokens
   * answer `TaskTimedOut` from now on, and their handlers return.
   */
  closeExecution(executionArn: string): void {
    for (const [token, task] of this.#open) {
      if (task.executionArn === executionArn)
        this.#end(token, statesRuntimeError('The execution ended while this state waited for its task token'));
    }
  }

  #armHeartbeat(token: string): void {
    const task = this.#open.get(token);
    if (task?.heartbeatMs === undefined) return;
    if (task.heartbeat !== undefined) {
      clearTimeout(task.heartbeat);
      task.timers.delete(task.heartbeat);
    }
    task.heartbeat = setTimeout(() => this.#timeOut(token), task.heartbeatMs);
    task.timers.add(task.heartbeat);
  }

  #timeOut(token: string): void {
    this.#end(token, this.#timeoutError());
  }

  #find(token: string): OpenTask {
    if (!TOKEN.test(token)) throw new ApiError('InvalidToken', 'Invalid Token');
    const task = this.#open.get(token);
    if (task !== undefined) return task;
    if (this.#ended.has(token)) throw new ApiError('TaskTimedOut', "Task Timed Out: 'Provided task does not exist anymore'");
    throw new ApiError('TaskDoesNotExist', 'Task does not exist');
  }

  #take(token: string): OpenTask {
    const task = this.#find(token);
    this.#end(token);
    return task;
  }

  #end(token: string, reason?: Error): void {
    const task = this.#open.get(token);
    if (task === undefined) return;
    for (const timer of task.timers) clearTimeout(timer);
    this.#open.delete(token);
    this.#ended.add(token);
    if (reason !== undefined) task.reject(reason);
  }
}
