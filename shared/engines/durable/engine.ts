/**
 * The engine port on Lambda durable functions (`@aws-sdk/client-lambda`):
 * the client is injected, and the service's errors that carry meaning for a
 * task are translated here (a name already started, a callback no longer
 * waited for, an execution that does not exist); any other is rethrown as
 * it is, for the run's retry rules to judge.
 *
 * Starting exactly once: an asynchronous `Invoke` whose durable execution
 * name is the task id. The same name and payload while the execution runs
 * give that execution; otherwise Lambda answers
 * `DurableExecutionAlreadyStartedException`, which carries no ARN, so the
 * execution is found with one `ListDurableExecutionsByFunction` filtered by
 * the name (matched exactly) and settled with one `GetDurableExecution`.
 */
import {
  GetDurableExecutionCommand,
  InvokeCommand,
  type LambdaClient,
  ListDurableExecutionsByFunctionCommand,
  SendDurableExecutionCallbackFailureCommand,
  SendDurableExecutionCallbackSuccessCommand,
  StopDurableExecutionCommand,
} from '@aws-sdk/client-lambda';
import {
  ExecutionAlreadyExistsError,
  type ExecutionDescription,
  type Failure,
  type StartedExecution,
  TaskTokenGoneError,
  type WorkflowEngine,
} from '../port.ts';
import { endStatusOf, failureOf } from './events.ts';

/** The service's error names that mean a callback is no longer waited for. */
const CALLBACK_GONE = new Set(['CallbackTimeoutException', 'ResourceNotFoundException']);

/** Lambda's limits on an error object's type and message kept here. */
const MAX_ERROR = 256;
const MAX_CAUSE = 32_768;

/** A retried start found its execution ended: the description settles the task as its end event would. */
export class DurableExecutionClosedError extends ExecutionAlreadyExistsError {
  constructor(
    executionName: string,
    readonly described: ExecutionDescription,
  ) {
    super(executionName);
    this.name = 'DurableExecutionClosedError';
  }
}

export class DurableEngine implements WorkflowEngine {
  readonly #client: LambdaClient;
  readonly #now: () => number;

  constructor(options: { client: LambdaClient; now?: () => number }) {
    this.#client = options.client;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Starts durable execution `name` of the qualified function `functionArn`
   * with `payload` (JSON text), asynchronously. An open execution of that
   * name with identical payload is returned as it is.
   * @throws {@link DurableExecutionClosedError} once it has ended (with its description)
   * @throws {@link ExecutionAlreadyExistsError} when it runs with another payload
   */
  async start(functionArn: string, name: string, payload: string): Promise<StartedExecution> {
    const at = this.#now();
    try {
      const invoked = await this.#client.send(
        new InvokeCommand({
          FunctionName: functionArn,
          InvocationType: 'Event',
          DurableExecutionName: name,
          Payload: Buffer.from(payload),
        }),
      );
      if (invoked.DurableExecutionArn) return { executionArn: invoked.DurableExecutionArn, startDate: at };
    } catch (error) {
      if (nameOf(error) !== 'DurableExecutionAlreadyStartedException') throw error;
    }
    return this.#settleStarted(functionArn, name, payload);
  }

  /**
   * The execution a refused (or ARN-less) start named: one list by name, then
   * one describe. Running with this payload: it is this task's; running with
   * another: refused; ended: its description settles the task.
   */
  async #settleStarted(functionArn: string, name: string, payload: string): Promise<StartedExecution> {
    const executionArn = await this.find(functionArn, name);
    if (executionArn === undefined) throw new ExecutionAlreadyExistsError(name);
    const described = await this.describe(executionArn);
    if (described.status !== 'RUNNING') throw new DurableExecutionClosedError(name, described);
    if (described.input !== payload) throw new ExecutionAlreadyExistsError(name);
    return { executionArn, startDate: described.startDate };
  }

  /** The ARN of the qualified function's execution named exactly `name` (the list's filter is not relied on to be exact), if any. */
  async find(functionArn: string, name: string): Promise<string | undefined> {
    const { functionName, qualifier } = splitQualifier(functionArn);
    let marker: string | undefined;
    do {
      const page = await this.#client.send(
        new ListDurableExecutionsByFunctionCommand({
          FunctionName: functionName,
          Qualifier: qualifier,
          DurableExecutionName: name,
          ...(marker === undefined ? {} : { Marker: marker }),
        }),
      );
      const found = page.DurableExecutions?.find((execution) => execution.DurableExecutionName === name);
      if (found?.DurableExecutionArn) return found.DurableExecutionArn;
      marker = page.NextMarker;
    } while (marker);
    return undefined;
  }

  /** One `GetDurableExecution`: RUNNING while it runs (or is paused), else the port's end status (STOPPED is `ABORTED`). */
  async describe(executionArn: string): Promise<ExecutionDescription & { input?: string }> {
    const got = await this.#client.send(new GetDurableExecutionCommand({ DurableExecutionArn: executionArn, IncludeExecutionData: true }));
    const status = endStatusOf(got.Status ?? '') ?? 'RUNNING';
    return {
      executionArn: got.DurableExecutionArn ?? executionArn,
      status,
      startDate: got.StartTimestamp?.getTime() ?? 0,
      ...(status === 'SUCCEEDED' ? { output: got.Result ?? 'null' } : {}),
      ...(status === 'SUCCEEDED' || status === 'RUNNING' ? {} : failureOf(got.Error)),
      ...(got.InputPayload === undefined ? {} : { input: got.InputPayload }),
    };
  }

  /** Stops the execution with `failure` as its error (who cancelled); one that does not exist, or has ended, is left alone. */
  async stop(executionArn: string, failure: Failure): Promise<void> {
    try {
      await this.#client.send(new StopDurableExecutionCommand({ DurableExecutionArn: executionArn, Error: errorObject(failure) }));
    } catch (error) {
      if (nameOf(error) === 'ResourceNotFoundException') return;
      // Refused: stopped already, or ended meanwhile? Then there is nothing left to stop.
      const { status } = await this.describe(executionArn);
      if (status === 'RUNNING') throw error;
    }
  }

  /** Completes the `waitForCallback` waiting on `callbackId` with `output` (JSON text). */
  async answer(callbackId: string, output: string): Promise<void> {
    await this.#callback(() =>
      this.#client.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: callbackId, Result: Buffer.from(output) })),
    );
  }

  /** Fails the `waitForCallback` waiting on `callbackId` with a named error the handler can catch. */
  async decline(callbackId: string, failure: Failure): Promise<void> {
    await this.#callback(() =>
      this.#client.send(new SendDurableExecutionCallbackFailureCommand({ CallbackId: callbackId, Error: errorObject(failure) })),
    );
  }

  async #callback(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (error) {
      const name = nameOf(error);
      if (CALLBACK_GONE.has(name)) throw new TaskTokenGoneError(name);
      throw error;
    }
  }
}

/** `arn:…:function:<name>:<qualifier>` → the unqualified ARN and the qualifier, as the list takes them. */
export function splitQualifier(functionArn: string): { functionName: string; qualifier: string } {
  const at = functionArn.lastIndexOf(':');
  return { functionName: functionArn.slice(0, at), qualifier: functionArn.slice(at + 1) };
}

function errorObject(failure: Failure): { ErrorType: string; ErrorMessage: string } {
  return { ErrorType: failure.error.slice(0, MAX_ERROR), ErrorMessage: failure.cause.slice(0, MAX_CAUSE) };
}

function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : '';
}
