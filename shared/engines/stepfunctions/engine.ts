/**
 * The workflow engine on Step Functions (`@aws-sdk/client-sfn`): the client
 * is injected, and the service's errors that carry meaning for a task are
 * translated here (`ExecutionAlreadyExists`, a task token that no longer
 * waits, an execution that does not exist); any other is rethrown as it is,
 * for the run's retry rules to judge.
 */
import {
  DescribeExecutionCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import {
  type EngineAdapter,
  ExecutionAlreadyExistsError,
  type ExecutionDescription,
  type Failure,
  type StartedExecution,
  TaskTokenGoneError,
} from '../port.ts';

/** The service's error names that mean a task token is no longer waited for. */
const TOKEN_GONE = new Set(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

/** Step Functions' limits on an error and a cause. */
const MAX_ERROR = 256;
const MAX_CAUSE = 32_768;

export class SfnWorkflowEngine implements EngineAdapter {
  readonly #client: SFNClient;

  constructor(options: { client: SFNClient }) {
    this.#client = options.client;
  }

  async start(stateMachineArn: string, name: string, input: string): Promise<StartedExecution> {
    try {
      const started = await this.#client.send(new StartExecutionCommand({ stateMachineArn, name, input }));
      return { executionArn: started.executionArn!, startDate: started.startDate?.getTime() ?? Date.now() };
    } catch (error) {
      if (nameOf(error) === 'ExecutionAlreadyExists') throw new ExecutionAlreadyExistsError(name);
      throw error;
    }
  }

  async describe(executionArn: string): Promise<ExecutionDescription> {
    const described = await this.#client.send(new DescribeExecutionCommand({ executionArn }));
    return {
      executionArn: described.executionArn ?? executionArn,
      status: described.status as ExecutionDescription['status'],
      startDate: described.startDate?.getTime() ?? 0,
      ...(described.output === undefined ? {} : { output: described.output }),
      ...(described.error === undefined ? {} : { error: described.error }),
      ...(described.cause === undefined ? {} : { cause: described.cause }),
    };
  }

  async stop(executionArn: string, failure: Failure): Promise<void> {
    try {
      await this.#client.send(new StopExecutionCommand({ executionArn, ...limited(failure) }));
    } catch (error) {
      if (nameOf(error) === 'ExecutionDoesNotExist') return;
      // Refused: stopped already, or ended meanwhile? Then there is nothing left to stop.
      const { status } = await this.describe(executionArn);
      if (status === 'RUNNING') throw error;
    }
  }

  async answer(taskToken: string, output: string): Promise<void> {
    await this.#tokenCall(() => this.#client.send(new SendTaskSuccessCommand({ taskToken, output })));
  }

  async decline(taskToken: string, failure: Failure): Promise<void> {
    await this.#tokenCall(() => this.#client.send(new SendTaskFailureCommand({ taskToken, ...limited(failure) })));
  }

  async #tokenCall(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (error) {
      const name = nameOf(error);
      if (TOKEN_GONE.has(name)) throw new TaskTokenGoneError(name);
      throw error;
    }
  }
}

function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : '';
}

function limited(failure: Failure): Failure {
  return { error: failure.error.slice(0, MAX_ERROR), cause: failure.cause.slice(0, MAX_CAUSE) };
}
