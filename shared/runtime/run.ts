import type { ClientCapabilities, InputRequest, JsonRpcErrorObject } from '../tasks/model.ts';
import { RetryableError, ToolError, ToolProtocolError, type TaskContext, type ToolDefinition, type ToolResult } from './tool.ts';

/** How one run of a handler ended. Unexpected exceptions are rethrown, not mapped. */
export type RunOutcome =
  | { kind: 'result'; result: ToolResult }
  | { kind: 'protocol-error'; error: JsonRpcErrorObject }
  | { kind: 'cancelled' }
  /** Waiting for answers: the task goes `input_required`. */
  | { kind: 'input'; inputRequests: Record<string, InputRequest> }
  /** Waiting for a durable timer: run again at `wakeAt` (epoch ms). */
  | { kind: 'sleep'; wakeAt: number }
  /** Out of invocation time at a step boundary: run again at once, in a new invocation. */
  | { kind: 'continue' }
  /** The handler asked to be retried later. */
  | { kind: 'retry'; error: RetryableError };

/** Durable state a run replays from, and how it records new state. */
export interface Journal {
  /** The value recorded for a step, if any. */
  lookup(name: string): Promise<{ value: unknown } | undefined>;
  /** Records a step's value once; resolves to the value stored (which wins on a race). */
  record(name: string, value: unknown): Promise<unknown>;
}

export interface RunOptions {
  taskId: string | undefined;
  clientCapabilities: ClientCapabilities;
  /** Answers recorded so far, by key. */
  answers: Record<string, unknown>;
  /** Aborted when the task is cancelled. */
  cancel: AbortSignal;
  progress: (message: string) => Promise<void>;
  /** Steps and sleeps; without one (inline calls) steps simply run and sleeps wait in-process. */
  journal?: Journal;
  /** True once the invocation should hand over to a continuation at the next step boundary. */
  shouldYield?: () => boolean;
  now?: () => number;
}

const MISSING_CAPABILITY = -32021;

/**
 * Runs a tool handler once, replaying what was recorded before.
 *
 * Replay rules. The handler runs from the start on every run (a resume after
 * input, a wake-up after a sleep, a continuation, a retry), so:
 * - `elicit`/`sample` return the answer recorded for their key; a key with no
 *   answer registers an input request and never settles;
 * - `step(name, fn)` returns the value recorded for `name`; otherwise it runs
 *   `fn` and records its result before returning it;
 * - `sleep(ms)` records its wake-up time the first time it is reached (the
 *   n-th sleep of a run is `sleep#n`) and returns at once once that time has
 *   passed; before that it never settles.
 * Everything non-deterministic (time, ids, I/O) therefore belongs in a step,
 * and the order of steps, sleeps and questions must not depend on anything
 * outside them.
 *
 * A run that cannot go on ends at the end of the current event-loop turn in
 * which it got stuck, so questions asked together (`Promise.all`) become one
 * set of outstanding keys. Work still in flight then is abandoned (the
 * context's signal is aborted) and replayed next time.
 */
export async function runTool(tool: ToolDefinition, args: Record<string, unknown>, options: RunOptions): Promise<RunOutcome> {
  const now = options.now ?? Date.now;
  const pending: Record<string, InputRequest> = {};
  let wakeAt: number | undefined;
  let yielded = false;
  let stuck!: () => void;
  const suspension = new Promise<void>((resolve) => (stuck = resolve));
  let suspending = false;
  const suspend = <T>(): Promise<T> => {
    if (!suspending) {
      suspending = true;
      setImmediate(stuck);
    }
    return new Promise<T>(() => {});
  };

  const controller = new AbortController();
  const onCancel = () => controller.abort(options.cancel.reason);
  if (options.cancel.aborted) onCancel();
  else options.cancel.addEventListener('abort', onCancel, { once: true });

  const ask = <T>(key: string, request: InputRequest, capability: string): Promise<T> => {
    if (Object.hasOwn(options.answers, key)) return Promise.resolve(options.answers[key] as T);
    if (!(capability in options.clientCapabilities)) {
      return Promise.reject(new ToolProtocolError(MISSING_CAPABILITY, 'Missing required client capability', {
        requiredCapabilities: { [capability]: {} },
      }));
    }
    pending[key] = request;
    return suspend<T>();
  };

  /**
   * Failure window: `fn` may have run (and had its side effects) when the
   * invocation dies before the value is recorded; it then runs again on the
   * next replay. Steps are at-least-once; make their effects idempotent.
   */
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    options.cancel.throwIfAborted(); // a cancelled task starts no new step
    const journal = options.journal;
    if (!journal) return fn();
    const recorded = await journal.lookup(name);
    if (recorded) return recorded.value as T;
    if (options.shouldYield?.()) {
      yielded = true;
      return suspend<T>();
    }
    const value = await fn();
    return (await journal.record(name, value === undefined ? null : value)) as T;
  };

  let sleeps = 0;
  const sleep = async (ms: number): Promise<void> => {
    options.cancel.throwIfAborted(); // nor goes to sleep
    const name = `sleep#${++sleeps}`;
    if (!options.journal) return new Promise((resolve) => setTimeout(resolve, ms));
    const due = (await step(name, async () => now() + ms)) as number;
    if (due <= now()) return;
    wakeAt = Math.min(wakeAt ?? due, due);
    return suspend<void>();
  };

  const ctx: TaskContext = {
    taskId: options.taskId,
    signal: controller.signal,
    clientCapabilities: options.clientCapabilities,
    progress: (message) => options.progress(message),
    elicit: (key, params) => ask(key, { method: 'elicitation/create', params: { mode: 'form', ...params } }, 'elicitation'),
    sample: (key, params) => ask(key, { method: 'sampling/createMessage', params }, 'sampling'),
    step,
    sleep,
    // The composition root binds settings to the catalogue (`bindSettings` in `settings.ts`).
    setting: (key) => Promise.reject(new Error(`Tool "${tool.name}" reads setting "${key}", but no settings are bound to the catalogue`)),
  };

  try {
    const ran = tool.handler(args, ctx).then(
      (value) => ({ done: true as const, value }),
      (error: unknown) => ({ done: true as const, error }),
    );
    const settled = await Promise.race([ran, suspension.then(() => ({ done: false as const }))]);
    if (!settled.done) {
      controller.abort(new Error('suspended'));
      // Questions first: a sleep or continuation replays them unanswered anyway.
      if (Object.keys(pending).length > 0) return { kind: 'input', inputRequests: pending };
      if (wakeAt !== undefined) return { kind: 'sleep', wakeAt };
      if (yielded) return { kind: 'continue' };
      throw new Error('Run suspended without a reason');
    }
    if ('error' in settled) return mapThrown(settled.error, options.cancel);
    return { kind: 'result', result: toResult(settled.value) };
  } finally {
    options.cancel.removeEventListener('abort', onCancel);
  }
}

function mapThrown(error: unknown, cancel: AbortSignal): RunOutcome {
  if (error instanceof ToolError) return { kind: 'result', result: { content: [{ type: 'text', text: error.message }], isError: true } };
  if (error instanceof ToolProtocolError) return { kind: 'protocol-error', error: error.toJSON() };
  if (cancel.aborted) return { kind: 'cancelled' };
  if (error instanceof RetryableError) return { kind: 'retry', error };
  throw error;
}

function toResult(value: ToolResult | string): ToolResult {
  return typeof value === 'string' ? { content: [{ type: 'text', text: value }] } : value;
}
