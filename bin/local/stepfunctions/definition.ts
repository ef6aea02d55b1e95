/**
 * A state machine's definition, checked and prepared for the interpreter
 * (`aws-local-stepfunctions`). The interpreter runs each Task state through a
 * local handler of ours; this module says which handler each state gets and
 * rewrites what the interpreter would otherwise get wrong:
 *
 * - A Task state without `TimeoutSeconds` times out after 60 s there; in AWS
 *   it has no timeout. Such states get the longest timer Node can arm (24.8
 *   days), and no timeout is set longer than that (Node fires a longer one at
 *   once).
 * - A task-token state's timeouts are kept by the token's own clock (which
 *   also keeps `HeartbeatSeconds`, unknown to the interpreter): the
 *   interpreter's is pushed out of the way, and its `TimeoutSecondsPath` /
 *   `HeartbeatSecondsPath` are evaluated with its `Parameters`, in an envelope
 *   the handler opens.
 * - A Wait state becomes a Task state of ours, so that every form of it
 *   (`Seconds`, `SecondsPath`, `Timestamp`, `TimestampPath`) waits what the
 *   emulator's `waitMs` says, and a stop cuts it short.
 */
import { ApiError } from './api-errors.ts';

/** A JSON value as the interpreter passes it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** How the emulator runs a Task state (or a Wait state turned into one). */
export type TaskKind =
  /** `arn:aws:states:::lambda:invoke`: the function's result in Lambda's response shape. */
  | { kind: 'invoke' }
  /** `arn:aws:states:::lambda:invoke.waitForTaskToken`: invoke, then wait for the token's answer. */
  | { kind: 'token'; timeoutSeconds?: number; heartbeatSeconds?: number }
  /** A Lambda function's ARN as the resource: the function's result as is. */
  | { kind: 'function'; functionArn: string }
  /** A Wait state. */
  | { kind: 'wait' };

/** The definition the interpreter runs, and the handler kind of each of its Task states, by state name. */
export interface PreparedDefinition {
  runnable: JsonObject;
  tasks: ReadonlyMap<string, TaskKind>;
}

/** The longest timer Node arms (2^31 - 1 ms), in whole seconds. */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
const LAMBDA_INVOKE_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const LAMBDA_FUNCTION = /^arn:aws:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]+(?::[A-Za-z0-9$_-]+)?$/;
/** The resource a Wait state turned Task carries: never called, the handler answers for it. */
const WAIT_RESOURCE = 'arn:aws:states:::local:wait';

/** The key of the envelope a task-token state's `Parameters` are wrapped in. */
export const ENVELOPE = { parameters: 'parameters', timeoutSeconds: 'timeoutSeconds', heartbeatSeconds: 'heartbeatSeconds' } as const;

/** Parses a definition (as `CreateStateMachine` receives it), or `InvalidDefinition`. */
export function parseDefinition(text: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('InvalidDefinition', "Invalid State Machine Definition: 'INVALID_JSON_DESCRIPTION'");
  }
  if (!isObject(parsed)) throw new ApiError('InvalidDefinition', "Invalid State Machine Definition: 'the definition is not a JSON object'");
  return parsed;
}

/**
 * Prepares a (valid) definition for the interpreter: see the module comment.
 * Refuses, as `InvalidDefinition`, what the emulator cannot run: a Task state
 * of another service than Lambda, JSONata, variables, and state names used
 * twice (the interpreter finds handlers by name).
 */
export function prepareDefinition(definition: JsonObject): PreparedDefinition {
  const tasks = new Map<string, TaskKind>();
  const seen = new Set<string>();
  const runnable = prepareMachine(definition, tasks, seen);
  const timeout = definition['TimeoutSeconds'];
  if (typeof timeout === 'number' && timeout > MAX_TIMER_SECONDS) delete runnable['TimeoutSeconds'];
  return { runnable, tasks };
}

function prepareMachine(machine: JsonObject, tasks: Map<string, TaskKind>, seen: Set<string>): JsonObject {
  refuseUnsupported(machine, 'the state machine');
  const states = machine['States'];
  if (!isObject(states)) throw new ApiError('InvalidDefinition', "Invalid State Machine Definition: 'States' is missing");
  const prepared: JsonObject = {};
  for (const [name, state] of Object.entries(states)) {
    if (!isObject(state)) throw new ApiError('InvalidDefinition', `Invalid State Machine Definition: state '${name}' is not an object`);
    if (seen.has(name)) throw new ApiError('InvalidDefinition', `Invalid State Machine Definition: the state name '${name}' is used twice`);
    seen.add(name);
    prepared[name] = prepareState(name, state, tasks, seen);
  }
  return { ...machine, States: prepared };
}

function prepareState(name: string, state: JsonObject, tasks: Map<string, TaskKind>, seen: Set<string>): JsonObject {
  refuseUnsupported(state, `state '${name}'`);
  switch (state['Type']) {
    case 'Task':
      return prepareTask(name, state, tasks);
    case 'Wait':
      tasks.set(name, { kind: 'wait' });
      return waitAsTask(state);
    case 'Map': {
      const key = isObject(state['ItemProcessor']) ? 'ItemProcessor' : 'Iterator';
      const processor = state[key];
      return isObject(processor) ? { ...state, [key]: prepareMachine(processor, tasks, seen) } : state;
    }
    case 'Parallel': {
      const branches = Array.isArray(state['Branches']) ? state['Branches'] : [];
      return { ...state, Branches: branches.map((branch) => (isObject(branch) ? prepareMachine(branch, tasks, seen) : branch)) };
    }
    default:
      return state;
  }
}

function prepareTask(name: string, state: JsonObject, tasks: Map<string, TaskKind>): JsonObject {
  const resource = state['Resource'];
  if (resource === LAMBDA_INVOKE_TOKEN) {
    const kind: TaskKind = {
      kind: 'token',
      ...seconds('timeoutSeconds', state['TimeoutSeconds']),
      ...seconds('heartbeatSeconds', state['HeartbeatSeconds']),
    };
    tasks.set(name, kind);
    const { TimeoutSecondsPath, HeartbeatSecondsPath, HeartbeatSeconds: _heartbeat, ...rest } = state;
    const parameters = state['Parameters'];
    const envelope: JsonObject = parameters === undefined ? { [`${ENVELOPE.parameters}.$`]: '$' } : { [ENVELOPE.parameters]: parameters };
    if (typeof TimeoutSecondsPath === 'string') envelope[`${ENVELOPE.timeoutSeconds}.$`] = TimeoutSecondsPath;
    if (typeof HeartbeatSecondsPath === 'string') envelope[`${ENVELOPE.heartbeatSeconds}.$`] = HeartbeatSecondsPath;
    return { ...rest, Parameters: envelope, TimeoutSeconds: MAX_TIMER_SECONDS };
  }
  if (resource === LAMBDA_INVOKE) tasks.set(name, { kind: 'invoke' });
  else if (typeof resource === 'string' && LAMBDA_FUNCTION.test(resource)) tasks.set(name, { kind: 'function', functionArn: resource });
  else {
    throw new ApiError(
      'InvalidDefinition',
      `Invalid State Machine Definition: state '${name}' calls ${String(resource)}; the local emulator runs Lambda tasks only (${LAMBDA_INVOKE}, ${LAMBDA_INVOKE_TOKEN}, a function ARN)`,
    );
  }
  const timeout = state['TimeoutSeconds'];
  if (typeof timeout === 'number' || typeof state['TimeoutSecondsPath'] === 'string') {
    return typeof timeout === 'number' && timeout > MAX_TIMER_SECONDS ? { ...state, TimeoutSeconds: MAX_TIMER_SECONDS } : state;
  }
  return { ...state, TimeoutSeconds: MAX_TIMER_SECONDS };
}

/** A Wait state as a Task of ours: its input through, the wait's length in its parameters. */
function waitAsTask(state: JsonObject): JsonObject {
  const { Seconds, SecondsPath, Timestamp, TimestampPath, Type: _type, ...rest } = state;
  const parameters: JsonObject = { 'input.$': '$' };
  if (typeof Seconds === 'number') parameters['seconds'] = Seconds;
  if (typeof SecondsPath === 'string') parameters['seconds.$'] = SecondsPath;
  if (typeof Timestamp === 'string') parameters['timestamp'] = Timestamp;
  if (typeof TimestampPath === 'string') parameters['timestamp.$'] = TimestampPath;
  return { ...rest, Type: 'Task', Resource: WAIT_RESOURCE, Parameters: parameters, TimeoutSeconds: MAX_TIMER_SECONDS };
}

function seconds<K extends string>(key: K, value: Json | undefined): Partial<Record<K, number>> {
  return typeof value === 'number' ? ({ [key]: value } as Partial<Record<K, number>>) : {};
}

/** What the interpreter does not implement, refused rather than run wrong. */
function refuseUnsupported(node: JsonObject, where: string): void {
  if (node['QueryLanguage'] === 'JSONata') {
    throw new ApiError(
      'InvalidDefinition',
      `Invalid State Machine Definition: ${where} uses JSONata, which the local emulator does not run`,
    );
  }
  if ('Assign' in node) {
    throw new ApiError(
      'InvalidDefinition',
      `Invalid State Machine Definition: ${where} assigns variables, which the local emulator does not run`,
    );
  }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
