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
 *
 * What the interpreter does not implement, JSONata and variables (`Assign`),
 * is not refused here (the machine is created, as AWS creates it): it is
 * named in {@link PreparedDefinition.unsupported}, and each execution of the
 * machine fails with that reason.
 */
import { ApiError } from './api-errors.ts';

/** A JSON value as the interpreter passes it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** How the emulator runs a Task state (or a Wait state turned into one); `resource` is the state's `Resource`. */
export type TaskKind =
  /** `arn:aws:states:::lambda:invoke`: the function's result in Lambda's response shape. */
  | { kind: 'invoke'; resource: string }
  /**
   * A `.waitForTaskToken` resource: the invoke (`lambda:invoke.waitForTaskToken`)
   * or a local handler (any other service), then wait for the token's answer.
   */
  | { kind: 'token'; resource: string; timeoutSeconds?: number; heartbeatSeconds?: number }
  /** A Lambda function's ARN as the resource: the function's result as is. */
  | { kind: 'function'; resource: string }
  /** Any other resource (another service's integration, an activity): what a local handler returns. */
  | { kind: 'service'; resource: string }
  /** A Wait state. */
  | { kind: 'wait' };

/** The definition the interpreter runs, and the handler kind of each of its Task states, by state name. */
export interface PreparedDefinition {
  runnable: JsonObject;
  tasks: ReadonlyMap<string, TaskKind>;
  /** Why the interpreter cannot run the machine (JSONata, variables), if it cannot: each execution fails with it. */
  unsupported?: string;
}

/** The longest timer Node arms (2^31 - 1 ms), in whole seconds. */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
/** The resource of a Lambda task-token state; any other resource ending `.waitForTaskToken` is run by a local handler. */
export const LAMBDA_INVOKE_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const TOKEN_SUFFIX = '.waitForTaskToken';
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

/** What preparing a definition collects on its way through the states. */
interface Preparing {
  tasks: Map<string, TaskKind>;
  seen: Set<string>;
  /** The first thing found that the interpreter does not run. */
  unsupported?: string;
}

/**
 * Prepares a (valid) definition for the interpreter: see the module comment.
 * Refuses, as `InvalidDefinition`, state names used twice (the interpreter
 * finds handlers by name).
 */
export function prepareDefinition(definition: JsonObject): PreparedDefinition {
  const preparing: Preparing = { tasks: new Map(), seen: new Set() };
  const runnable = prepareMachine(definition, preparing, 'the state machine');
  const timeout = definition['TimeoutSeconds'];
  if (typeof timeout === 'number' && timeout > MAX_TIMER_SECONDS) delete runnable['TimeoutSeconds'];
  const { tasks, unsupported } = preparing;
  return { runnable, tasks, ...(unsupported === undefined ? {} : { unsupported }) };
}

function prepareMachine(machine: JsonObject, preparing: Preparing, where: string): JsonObject {
  noteUnsupported(machine, where, preparing);
  const { seen } = preparing;
  const states = machine['States'];
  if (!isObject(states)) throw new ApiError('InvalidDefinition', "Invalid State Machine Definition: 'States' is missing");
  const prepared: JsonObject = {};
  for (const [name, state] of Object.entries(states)) {
    if (!isObject(state)) throw new ApiError('InvalidDefinition', `Invalid State Machine Definition: state '${name}' is not an object`);
    if (seen.has(name)) throw new ApiError('InvalidDefinition', `Invalid State Machine Definition: the state name '${name}' is used twice`);
    seen.add(name);
    prepared[name] = prepareState(name, state, preparing);
  }
  return { ...machine, States: prepared };
}

function prepareState(name: string, state: JsonObject, preparing: Preparing): JsonObject {
  const where = `state '${name}'`;
  noteUnsupported(state, where, preparing);
  const catchers = Array.isArray(state['Catch']) ? state['Catch'] : [];
  for (const catcher of catchers) if (isObject(catcher)) noteUnsupported(catcher, `a Catch of ${where}`, preparing);
  switch (state['Type']) {
    case 'Task':
      return prepareTask(name, state, preparing.tasks);
    case 'Wait':
      preparing.tasks.set(name, { kind: 'wait' });
      return waitAsTask(state);
    case 'Map': {
      const key = isObject(state['ItemProcessor']) ? 'ItemProcessor' : 'Iterator';
      const processor = state[key];
      return isObject(processor) ? { ...state, [key]: prepareMachine(processor, preparing, `the item processor of ${where}`) } : state;
    }
    case 'Parallel': {
      const branches = Array.isArray(state['Branches']) ? state['Branches'] : [];
      const where = `a branch of state '${name}'`;
      return {
        ...state,
        Branches: branches.map((branch) => (isObject(branch) ? prepareMachine(branch, preparing, where) : branch)),
      };
    }
    default:
      return state;
  }
}

function prepareTask(name: string, state: JsonObject, tasks: Map<string, TaskKind>): JsonObject {
  const resource = String(state['Resource']);
  if (resource.endsWith(TOKEN_SUFFIX)) {
    const kind: TaskKind = {
      kind: 'token',
      resource,
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
  if (resource === LAMBDA_INVOKE) tasks.set(name, { kind: 'invoke', resource });
  else if (LAMBDA_FUNCTION.test(resource)) tasks.set(name, { kind: 'function', resource });
  else tasks.set(name, { kind: 'service', resource });
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

/** What the interpreter does not implement, noted (the first found) rather than run wrong. */
function noteUnsupported(node: JsonObject, where: string, preparing: Preparing): void {
  if (preparing.unsupported !== undefined) return;
  if (node['QueryLanguage'] === 'JSONata') {
    preparing.unsupported = `${where} uses JSONata (QueryLanguage), which the local emulator does not run: use JSONPath locally`;
  } else if ('Assign' in node) {
    preparing.unsupported = `${where} assigns variables (Assign), which the local emulator does not run`;
  }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
