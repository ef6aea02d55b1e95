/**
 * A Step Functions API emulator for the local stack: the real
 * `@aws-sdk/client-sfn` talks to it as to AWS (`endpoint`), it runs the ASL in
 * process with `aws-local-stepfunctions` (Node 22), and hands each status
 * change of a Standard execution to `onEvent`, shaped as EventBridge delivers
 * it. The other modules of this folder are private to it.
 *
 * What it serves: `CreateStateMachine` (STANDARD and EXPRESS; validated;
 * idempotent for the same name, definition, role and type),
 * `DescribeStateMachine`, `StartExecution` (a name used before: the original
 * while it is open with the same input, else `ExecutionAlreadyExists`),
 * `DescribeExecution`, `StopExecution` (→ `ABORTED` with its error and cause),
 * `ListExecutions`, `SendTaskSuccess`, `SendTaskFailure`, `SendTaskHeartbeat`.
 * Task states: `routeTask` says, as each starts, what runs it. A Lambda state
 * (`lambda:invoke`, `lambda:invoke.waitForTaskToken`, a function ARN) runs
 * its function through `invokeFunction` unless a local handler stands in for
 * it; any other resource (another service, `.waitForTaskToken` included, an
 * activity) runs only by a local handler. A state nothing runs fails its
 * execution with `States.TaskFailed` and the cause `routeTask` gives, past
 * any `Catch`. A machine using JSONata or variables (`Assign`), which the
 * interpreter does not run, is created; each of its executions fails at once
 * with `States.Runtime` and a cause naming the state that uses them.
 *
 * Where it differs from AWS, on purpose or by the interpreter:
 * - Express executions send no events (as in AWS) and are not journaled;
 *   they are described like Standard ones while this life lasts.
 * - No timer runs longer than 24.8 days (Node's limit): a longer task or
 *   machine timeout is cut to that; `RedriveExecution` is not served.
 * - A heartbeat timeout fails its state with `States.Timeout`, as a
 *   `TimeoutSeconds` one does.
 * - An Event invoke (`InvocationType: Event`) runs `invokeFunction` without
 *   waiting; its rejection is logged.
 *
 * Beside the contract this module was agreed on: an event's `outputDetails`
 * is `null` (not absent) and its `output` `null` until the execution
 * succeeded, as AWS sends them; `input` / `output` are absent when too large;
 * `LostExecution.startDate` is in epoch milliseconds, as the events' dates
 * are; `StopExecution` of a lost execution ends it `ABORTED` with an event.
 */
import { errorName, type Log } from '../../../shared/log.ts';
import type { Place } from './arns.ts';
import type { ExecutionStatusChangeEvent } from './events.ts';
import { Executions, type LostExecution } from './executions.ts';
import { loadInterpreter } from './interpreter.ts';
import { Journal } from './journal.ts';
import { Machines } from './machines.ts';
import { operations } from './operations.ts';
import type { TaskHandler, TaskRoute, TaskState, TaskStateContext } from './runner.ts';
import { startApiServer } from './server.ts';
import { TaskTokens } from './tokens.ts';

export type { ExecutionStatusChangeEvent, LostExecution, TaskHandler, TaskRoute, TaskState, TaskStateContext };

export interface StepFunctionsEmulatorOptions {
  /** The local stack's data directory: the journal of started executions lives under it (`stepfunctions/`). */
  dataDir: string;
  /** Default `us-east-1`. */
  region?: string;
  /** Default `000000000000`. */
  account?: string;
  /**
   * Each execution status change (RUNNING, SUCCEEDED, FAILED, TIMED_OUT,
   * ABORTED) of a STANDARD machine, shaped as EventBridge delivers a "Step
   * Functions Execution Status Change" event to a target, in order per
   * execution. Awaited; a rejection is logged, not retried.
   */
  onEvent: (event: ExecutionStatusChangeEvent) => Promise<void>;
  /**
   * Runs a Lambda function (named by name or ARN: a Task state's
   * `Parameters.FunctionName`, or its `Resource` when that is a function ARN)
   * with a payload and returns its result; `context` names the state (and
   * its token, in a `.waitForTaskToken` state). A rejection fails the state
   * with the thrown error's name as the error and
   * `{"errorType","errorMessage"}` as the cause, as Lambda reports a function
   * error.
   */
  invokeFunction: (functionName: string, payload: unknown, context: TaskStateContext) => Promise<unknown>;
  /**
   * What runs a Task state, asked each time one starts: a local handler
   * (`{ run: 'handler' }`: the state's input in, its result out; what it
   * throws fails the state with the error's name and message, so `Catch` and
   * `Retry` see it; in a `.waitForTaskToken` state it gets the token, its
   * result is ignored and the state waits for the token's answer), the
   * function (`{ run: 'function' }`, Lambda states only), or nothing
   * (`{ run: 'none', cause }`). Default: a Lambda state's function, nothing
   * for any other.
   */
  routeTask?: (state: TaskState) => TaskRoute;
  /** How long a Wait state of `seconds` waits here, in ms; default `seconds * 1000`. */
  waitMs?: (seconds: number, stateName: string) => number;
  log: Log;
  /** Its API's port on 127.0.0.1 (default: a free one). */
  port?: number;
}

export interface StepFunctionsEmulator {
  /** The endpoint for `new SFNClient({ endpoint, region, credentials })`: 127.0.0.1 on a free port. */
  endpoint: string;
  /**
   * Executions started in an earlier life of this data directory that never
   * ended: the emulator no longer runs them. `DescribeExecution` answers them
   * `RUNNING`, `StartExecution` with the same name and input answers the
   * original, and `StopExecution` ends them `ABORTED` (with an event), after
   * which they are no longer listed here.
   */
  lostExecutions(): LostExecution[];
  /** Aborts running executions without journal lines or events (a later life finds them lost), and closes the server. */
  stop(): Promise<void>;
}

/** Starts the emulator: reads the journal, then serves the API. */
export async function startStepFunctionsEmulator(options: StepFunctionsEmulatorOptions): Promise<StepFunctionsEmulator> {
  const place: Place = { region: options.region ?? 'us-east-1', account: options.account ?? '000000000000' };
  const { log } = options;
  const interpreter = await loadInterpreter();
  const { journal, records } = await Journal.open(options.dataDir, log);
  const tokens = new TaskTokens(() => interpreter.timeoutError());
  const machines = new Machines(place);
  const executions = new Executions({
    place,
    journal,
    earlier: records,
    onEvent: options.onEvent,
    log,
    run: {
      interpreter,
      tokens,
      invokeFunction: options.invokeFunction,
      route: options.routeTask ?? defaultRoute,
      waitMs: options.waitMs ?? ((seconds) => seconds * 1000),
      onAsyncInvokeFailed: (state, error) => log({ event: 'sfn-invoke-failed', state, error: errorName(error) }),
    },
  });
  const server = await startApiServer(operations({ place, machines, executions, tokens }), log, options.port);
  return {
    endpoint: server.endpoint,
    lostExecutions: () => executions.lost(),
    stop: async () => {
      await executions.shutDown();
      await server.close();
    },
  };
}

/** Without `routeTask`: Lambda states run their function; any other has nothing to run it. */
function defaultRoute(state: TaskState): TaskRoute {
  if (state.functionName !== undefined) return { run: 'function' };
  return { run: 'none', cause: `The state '${state.stateName}' calls ${state.resource}: the local emulator has no handler for it` };
}
