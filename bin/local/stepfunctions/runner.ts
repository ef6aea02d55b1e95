/**
 * One execution's run on the interpreter: the context object it reads
 * (`$$.Execution.*`, `$$.StateMachine.*`, `$$.Task.Token`), a handler for
 * each Task state (Lambda invokes, task tokens, waits), and its end as a
 * status with output or error.
 */
import { randomUUID } from 'node:crypto';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError } from 'aws-local-stepfunctions';
import { delay } from '../../../shared/delay.ts';
import { ENVELOPE, isObject, type Json, MAX_TIMER_SECONDS, type PreparedDefinition, type TaskKind } from './definition.ts';
import { type Interpreter, statesRuntimeError } from './interpreter.ts';
import type { TaskTokens } from './tokens.ts';

/** How a run ended. */
export type Outcome =
  | { status: 'SUCCEEDED'; output: Json }
  | { status: 'FAILED'; error?: string; cause?: string }
  | { status: 'TIMED_OUT' }
  | { status: 'ABORTED' };

/** What a run needs from the emulator. */
export interface RunDeps {
  interpreter: Interpreter;
  tokens: TaskTokens;
  invokeFunction: (functionName: string, payload: unknown) => Promise<unknown>;
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
  switch (kind.kind) {
    case 'wait':
      return runWait(stateName, input, context);
    case 'function':
      return (await invoke(context, kind.functionArn, input)) ?? null;
    case 'invoke':
      return runInvoke(stateName, input, context);
    case 'token':
      return runTokenTask(kind, stateName, input, context);
  }
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
async function runInvoke(stateName: string, input: Json, context: TaskContext): Promise<Json> {
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
    invoke(context, functionName, payload).catch((error: unknown) => context.onAsyncInvokeFailed(stateName, error));
    return { Payload: '', ...(metadata(202) as object) };
  }
  const result = await invoke(context, functionName, payload);
  return { ExecutedVersion: '$LATEST', Payload: result ?? null, ...(metadata(200) as object) };
}

/**
 * `lambda:invoke.waitForTaskToken`: a fresh token in place of the run's
 * stand-in, the invoke, then the token's answer. The answer may come while
 * the invoke is still running (the function may answer before it returns).
 */
async function runTokenTask(
  kind: Extract<TaskKind, { kind: 'token' }>,
  stateName: string,
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
    const invoked = runInvoke(stateName, parameters, context).then(() => {
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
async function invoke(context: TaskContext, functionName: string, payload: Json): Promise<Json | undefined> {
  try {
    return (await context.invokeFunction(functionName, payload)) as Json | undefined;
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
