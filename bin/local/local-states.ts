/**
 * The project's local states module (`src/local-states.ts`, or the file
 * `TASKS_LOCAL_STATES` names): handlers for the Task states of its workflows
 * that the local Step Functions emulator cannot run itself, loaded once when
 * the local stack starts with workflow tools, and never bundled. Its default
 * export maps a state's name or a resource ARN to a handler, or a Lambda
 * function's ARN to a module path whose `handler` export runs
 * (`LocalStates`, `shared/runtime/local-states.ts`).
 *
 * The stack starts whatever the module holds: a missing file, a file that
 * fails to load, or a state without a handler each fail only the executions
 * that reach such a state, with a cause naming the state and the file.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errorName, type Log } from '../../shared/log.ts';
import type { LocalStateHandler } from '../../shared/runtime/local-states.ts';
import { LOCAL_ENV } from './environment.ts';
import type { TaskRoute, TaskState } from './stepfunctions/index.ts';

/** A project's local states module, from its root, unless `TASKS_LOCAL_STATES` names another. */
export const PROJECT_LOCAL_STATES = 'src/local-states.ts';
/** This repository's, for the workflow tools of its own catalogues. */
export const REPOSITORY_LOCAL_STATES = 'functions/tools/workflows/local-states.ts';

/** The local states module's path: the variable's, else the project's (tools given) or this repository's. */
export function localStatesFile(env: Record<string, string | undefined>, projectTools: boolean): string {
  return env[LOCAL_ENV.localStates.env] || (projectTools ? PROJECT_LOCAL_STATES : REPOSITORY_LOCAL_STATES);
}

/** One key of the module: its handler, or why it has none (a module path that failed to load). */
type Entry = { handler: LocalStateHandler } | { failed: string };

/** The module, loaded: what runs each Task state. */
export interface LocalStatesModule {
  /** The file, as configured (relative to the project's root, as messages name it). */
  file: string;
  /**
   * What runs a Task state: the handler of its name; else, for a Lambda state,
   * its function (one of `functions`, or one the module has a key for); else
   * the handler of its resource; else nothing, with a cause naming the state
   * and the file.
   */
  route(state: TaskState): TaskRoute;
  /** The handler the module gives a Lambda function (by the name or ARN the state gives), if any. */
  functionHandler(functionName: string): LocalStateHandler | undefined;
}

/**
 * Loads `file` (from the working directory, the project's root) and each
 * module path it names. `functions` run without a handler (the receiver).
 */
export async function loadLocalStates(options: { file: string; functions: readonly string[]; log: Log }): Promise<LocalStatesModule> {
  const { file, log } = options;
  const loaded = await loadEntries(file);
  if ('failed' in loaded) log({ event: 'local-states-failed', file, error: loaded.failed });
  else if (loaded.present) log({ event: 'local-states-loaded', file, keys: loaded.entries.size });
  const entries = 'entries' in loaded ? loaded.entries : new Map<string, Entry>();
  const functions = new Set(options.functions);
  const missing = (state: TaskState): TaskRoute => {
    const what = `the state '${state.stateName}' (${state.resource}${state.functionName === undefined ? '' : `, function ${state.functionName}`})`;
    if ('failed' in loaded) return { run: 'none', cause: `No local handler runs ${what}: ${file} failed to load (${loaded.failed})` };
    const create = loaded.present ? '' : ' (create the file)';
    return {
      run: 'none',
      cause: `No local handler runs ${what}: add one to ${file}${create}, keyed by the state's name or its resource`,
    };
  };
  const routeOf = (entry: Entry, key: string): TaskRoute =>
    'handler' in entry ? { run: 'handler', handler: entry.handler } : { run: 'none', cause: `${key} in ${file}: ${entry.failed}` };
  return {
    file,
    route: (state) => {
      const byName = entries.get(state.stateName);
      if (byName) return routeOf(byName, state.stateName);
      const { functionName } = state;
      if (functionName !== undefined && functions.has(functionName)) return { run: 'function' };
      const byFunction = functionName === undefined ? undefined : entries.get(functionName);
      if (byFunction) return 'handler' in byFunction ? { run: 'function' } : routeOf(byFunction, functionName!);
      const byResource = entries.get(state.resource);
      return byResource ? routeOf(byResource, state.resource) : missing(state);
    },
    functionHandler: (functionName) => {
      const entry = entries.get(functionName);
      return entry && 'handler' in entry ? entry.handler : undefined;
    },
  };
}

type Loaded = { present: boolean; entries: Map<string, Entry> } | { failed: string };

/** The module's entries: none when the file does not exist; `failed` when it does not load or its default export is not a map. */
async function loadEntries(file: string): Promise<Loaded> {
  const path = resolve(file);
  if (!(await exists(path))) return { present: false, entries: new Map() };
  let states: unknown;
  try {
    states = ((await import(pathToFileURL(path).href)) as { default?: unknown }).default;
  } catch (error) {
    return { failed: describe(error) };
  }
  if (typeof states !== 'object' || states === null || Array.isArray(states)) {
    return { failed: 'its default export is not an object of handlers (export default { … } satisfies LocalStates)' };
  }
  const entries = new Map<string, Entry>();
  for (const [key, value] of Object.entries(states)) {
    if (typeof value === 'function') entries.set(key, { handler: value as LocalStateHandler });
    else if (typeof value === 'string') entries.set(key, await moduleHandler(value));
    else entries.set(key, { failed: 'is neither a handler nor a module path' });
  }
  return { present: true, entries };
}

/** A module path's `handler` export, called with the state's input and context. */
async function moduleHandler(module: string): Promise<Entry> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(resolve(module)).href)) as Record<string, unknown>;
  } catch (error) {
    return { failed: `the module ${module} failed to load (${describe(error)})` };
  }
  const handler = loaded['handler'];
  if (typeof handler !== 'function') return { failed: `the module ${module} has no handler export` };
  return { handler: async (input, context) => (handler as LocalStateHandler)(input, context) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${errorName(error)}: ${error.message.split('\n')[0]}` : String(error);
}
