/**
 * One execution's run on the interpreter: the context object it reads
 * (`$$.Execution.*`, `$$.StateMachine.*`, `$$.Task.Token`), a handler for
 * each Task state (Lambda invokes, local handlers of other services, task
 * tokens, waits), and its end as a status with output or error.
 *
 * What runs a Task state is asked as the state starts ({@link RunDeps.route}):
 * a local handler (given the state's input, its result the state's), the
 * Lambda function through `invokeFunction`, or nothing, which fails the
 * execution there (`States.TaskFailed`, past any `Catch` or `Retry`: the
 * cause says what to add, and must reach the person running it).
 */
import { randomUUID } from 'node:crypto';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError } from 'aws-local-stepfunctions';
import { delay } from '../../../shared/delay.ts';
import {
  ENVELOPE,
  isObject,
  type Json,
  LAMBDA_INVOKE_TOKEN,
  MAX_TIMER_SECONDS,
  type PreparedDefinition,
  type TaskKind,
} from './definition.ts';
import { type Interpreter, statesError, statesRuntimeError } from './interpreter.ts';
import type { TaskTokens } from './tokens.ts';

/** How a run ended. */
export type Outcome =
  | { status: 'SUCCEEDED'; output: Json }
  | { status: 'FAILED'; error?: string; cause?: string }
  | { status: 'TIMED_OUT' }
  | { status: 'ABORTED' };

/** A Task state as it starts: what decides what runs it. */
export interface TaskState {
  stateName: string;
  /** The state's `Resource`. */
  resource: string;
  /** A Lambda state's function: `Parameters.FunctionName` of `lambda:invoke` (and `.waitForTaskToken`), or the function ARN that is the resource. */
  functionName?: string;
}

/** What a local handler or function is told of the state it runs for. */
export interface TaskStateContext {
  stateName: string;
  resource: string;
  /** A `.waitForTaskToken` state's token (also where `$$.Task.Token` stands in its input). */
  taskToken?: string;
}

/** A local handler: the state's input (after `InputPath` and `Parameters`) in, its result (before `ResultSelector`) out. */
export type TaskHandler = (input: unknown, context: TaskStateContext) => Promise<unknown>;

/** What runs a Task state: a local handler, the Lambda function (`invokeFunction`; Lambda states only), or nothing, and why. */
export type TaskRoute = { run: 'handler'; handler: TaskHandler } | { run: 'function' } | { run: 'none'; cause: string };

/** What a run needs from the emulator. */
export interface RunDeps {
  interpreter: Interpreter;
  tokens: TaskTokens;
  invokeFunction: (functionName: string, payload: unknown, context: TaskStateContext) => Promise<unknown>;
  route: (state: TaskState) => TaskRoute;
  waitMs: (seconds: number, stateName: string) => number;
  /** A fire-and-forget invoke (`InvocationType: Event`) failed: nobody else hears of it. */
  onAsyncInvokeFailed: (stateName: string, error: unknown) => void;
}

/** Who runs: the execution and its machine, as the context object names them. */
export interface RunIdentity {
  executionArn: string;
  name: string;
  stateMachineArn: string;
  stateMachineName: string;
  roleArn: string;
  startDate: number;
}

export interface Run {
  outcome: Promise<Outcome>;
  /** Stops the run: waits and token states are cut short, the outcome is `ABORTED`. */
  abort(): void;
}

/** Starts a run of `definition` with `input`. */
export function startRun(definition: PreparedDefinition, input: Json, identity: RunIdentity, deps: RunDeps): Run {
  if (definition.unsupported !== undefined) {
    const cause = `The local Step Functions emulator cannot run this state machine: ${definition.unsupported}`;
    return { outcome: Promise.resolve({ status: 'FAILED', error: 'States.Runtime', cause }), abort: () => {} };
  }
  const stopped = new AbortController();
  // $$.Task.Token is one value for the whole run in the interpreter: a random
  // stand-in that each task-token state replaces with a token of its own.
  const tokenStandIn = `sfn-local-token-${randomUUID()}`;
  const handlers: Record<string, (input: Json) => Promise<Json>> = {};
  for (const [stateName, kind] of definition.tasks) {
    handlers[stateName] = (stateInput) => runTask(kind, stateName, stateInput, { ...deps, identity, signal: stopped.signal, tokenStandIn });
  }
  const execution = deps.interpreter.machine(definition.runnable).run(input, {
    overrides: { taskResourceLocalHandlers: handlers },
    context: {
      Execution: {
        Id: identity.executionArn,
        Name: identity.name,
        RoleArn: identity.roleArn,
        StartTime: new Date(identity.startDate).toISOString(),
      },
      StateMachine: { Id: identity.stateMachineArn, Name: identity.stateMachineName },
      Task: { Token: tokenStandIn },
    },
  });
  const outcome = execution.result.then(
    (output): Outcome => ({ status: 'SUCCEEDED', output }),
    (error: unknown) => outcomeOf(error),
  );
  // The interpreter's event log queues every event until read: drain it.
  void (async () => {
    for await (const _ of execution.eventLogs);
  })();
  return {
    outcome: outcome.finally(() => {
      stopped.abort();
      deps.tokens.closeExecution(identity.executionArn);
    }),
    abort: () => {
      stopped.abort();
      execution.abort();
    },
  };
}

function outcomeOf(error: unknown): Outcome {
  if (error instanceof ExecutionAbortedError) return { status: 'ABORTED' };
  if (error instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT' };
  const failure = error instanceof ExecutionError && error.cause instanceof Error ? error.cause : undefined;
  if (failure === undefined) return { status: 'FAILED', error: 'States.Runtime', cause: 'The local emulator failed to run the execution' };
  return { status: 'FAILED', ...(failure.name ? { error: failure.name } : {}), ...(failure.message ? { cause: failure.message } : {}) };
}

interface TaskContext extends RunDeps {
  identity: RunIdentity;
  signal: AbortSignal;
  tokenStandIn: string;
}

async function runTask(kind: TaskKind, stateName: string, input: Json, context: TaskContext): Promise<Json> {
  if (kind.kind === 'wait') return runWait(stateName, input, context);
  const functionName = functionOf(kind, input);
  const state: TaskState = { stateName, resource: kind.resource, ...(functionName === undefined ? {} : { functionName }) };
  // Only a Lambda state (its function named) can be run by a function: any other has a local handler or none.
  const asked = context.route(state);
  const route: TaskRoute =
    asked.run === 'function' && functionName === undefined
      ? { run: 'none', cause: `The state '${stateName}' (${kind.resource}) is not a Lambda state: no function runs it` }
      : asked;
  if (route.run === 'none') throw statesError('States.TaskFailed', route.cause);
  const call: TaskStateContext = { stateName, resource: kind.resource };
  if (kind.kind === 'token') return runTokenTask(kind, route, call, input, context);
  if (route.run === 'handler') return callHandler(route.handler, input, call);
  if (kind.kind === 'invoke') return runInvoke(input, call, context);
  return (await invoke(context, kind.resource, input, call)) ?? null;
}

/** The function a Lambda state invokes, once its parameters are evaluated; none for another service. */
function functionOf(kind: Exclude<TaskKind, { kind: 'wait' }>, input: Json): string | undefined {
  if (kind.kind === 'function') return kind.resource;
  const parameters =
    kind.kind === 'invoke'
      ? input
      : kind.kind === 'token' && kind.resource === LAMBDA_INVOKE_TOKEN && isObject(input)
        ? input[ENVELOPE.parameters]
        : undefined;
  const name = isObject(parameters) ? parameters['FunctionName'] : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** Runs a local handler: its result as JSON (nothing → `null`); what it throws fails the state with the error's name and message. */
async function callHandler(handler: TaskHandler, input: Json, call: TaskStateContext): Promise<Json> {
  let result: unknown;
  try {
    result = await handler(input, call);
  } catch (error) {
    const failure = new Error(error instanceof Error ? error.message : String(error));
    failure.name = error instanceof Error && error.name ? error.name : 'Error';
    throw failure;
  }
  const text = JSON.stringify(result);
  return text === undefined ? null : (JSON.parse(text) as Json);
}

async function runWait(stateName: string, input: Json, { waitMs, signal }: TaskContext): Promise<Json> {
  const parameters = isObject(input) ? input : {};
  const at = parameters['timestamp'];
  const seconds = typeof at === 'string' ? (Date.parse(at) - Date.now()) / 1000 : parameters['seconds'];
  if (typeof seconds !== 'number' || Number.isNaN(seconds)) {
    throw statesRuntimeError(`The Wait state '${stateName}' was given no number of seconds and no valid timestamp`);
  }
  let remaining = Math.max(0, waitMs(Math.max(0, seconds), stateName));
  // Node arms timers up to 24.8 days: wait in pieces.
  while (remaining > 0 && !signal.aborted) {
    const piece = Math.min(remaining, MAX_TIMER_SECONDS * 1000);
    try {
      await delay(piece, signal);
    } catch (error) {
      // A stop cuts the wait short; the interpreter then ends the run as aborted.
      if (!signal.aborted) throw error;
    }
    remaining -= piece;
  }
  return parameters['input'] ?? null;
}

/** `lambda:invoke`: Lambda's response as the optimized integration gives it (`Payload` parsed), or the function's error. */
async function runInvoke(input: Json, call: TaskStateContext, context: TaskContext): Promise<Json> {
  const parameters = isObject(input) ? input : {};
  const functionName = String(parameters['FunctionName']);
  const payload = parameters['Payload'] ?? {};
  const requestId = randomUUID();
  const metadata = (status: number): Json => ({
    SdkHttpMetadata: { HttpHeaders: { 'Content-Type': 'application/json', 'x-amzn-RequestId': requestId }, HttpStatusCode: status },
    SdkResponseMetadata: { RequestId: requestId },
    StatusCode: status,
  });
  if (parameters['InvocationType'] === 'Event') {
    invoke(context, functionName, payload, call).catch((error: unknown) => context.onAsyncInvokeFailed(call.stateName, error));
    return { Payload: '', ...(metadata(202) as object) };
  }
  const result = await invoke(context, functionName, payload, call);
  return { ExecutedVersion: '$LATEST', Payload: result ?? null, ...(metadata(200) as object) };
}

/**
 * A `.waitForTaskToken` state: a fresh token in place of the run's stand-in,
 * the invoke (or the local handler, its result ignored), then the token's
 * answer. The answer may come while the invoke is still running (the
 * function may answer before it returns).
 */
async function runTokenTask(
  kind: Extract<TaskKind, { kind: 'token' }>,
  route: Exclude<TaskRoute, { run: 'none' }>,
  call: TaskStateContext,
  input: Json,
  context: TaskContext,
): Promise<Json> {
  const envelope = isObject(input) ? input : {};
  const timeoutSeconds = numberOr(envelope[ENVELOPE.timeoutSeconds], kind.timeoutSeconds);
  const heartbeatSeconds = numberOr(envelope[ENVELOPE.heartbeatSeconds], kind.heartbeatSeconds);
  const wait = context.tokens.open(context.identity.executionArn, {
    ...(timeoutSeconds === undefined ? {} : { timeoutMs: timeoutSeconds * 1000 }),
    ...(heartbeatSeconds === undefined ? {} : { heartbeatMs: heartbeatSeconds * 1000 }),
  });
  const stop = () => wait.close(statesRuntimeError('The execution was stopped'));
  context.signal.addEventListener('abort', stop, { once: true });
  try {
    const parameters = replaceAll(envelope[ENVELOPE.parameters] ?? {}, context.tokenStandIn, wait.token);
    const withToken: TaskStateContext = { ...call, taskToken: wait.token };
    const delivered =
      route.run === 'handler' ? callHandler(route.handler, parameters, withToken) : runInvoke(parameters, withToken, context);
    const invoked = delivered.then(() => {
      wait.startHeartbeat();
      return wait.answer;
    });
    return await Promise.race([invoked, wait.answer]);
  } finally {
    context.signal.removeEventListener('abort', stop);
    wait.close();
  }
}

/** Calls the function; a rejection becomes the state's error as Lambda reports a function error (its type, and a JSON cause). */
async function invoke(context: TaskContext, functionName: string, payload: Json, call: TaskStateContext): Promise<Json | undefined> {
  try {
    return (await context.invokeFunction(functionName, payload, call)) as Json | undefined;
  } catch (error) {
    const errorType = error instanceof Error ? error.name : 'Error';
    const failure = new Error(JSON.stringify({ errorType, errorMessage: error instanceof Error ? error.message : String(error) }));
    failure.name = errorType;
    throw failure;
  }
}

function numberOr(value: Json | undefined, fallback: number | undefined): number | undefined {
  return typeof value === 'number' && value > 0 ? value : fallback;
}

/** `value` with every occurrence of `from` in its strings replaced by `to`. */
function replaceAll(value: Json, from: string, to: string): Json {
  if (typeof value === 'string') return value.includes(from) ? value.replaceAll(from, to) : value;
  if (Array.isArray(value)) return value.map((item) => replaceAll(item, from, to));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceAll(item, from, to)]));
  return value;
}
