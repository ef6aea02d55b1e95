import type { ClientCapabilities, InputRequest, JsonRpcErrorObject } from '../tasks/model.ts';
import { ToolError, ToolProtocolError, type TaskContext, type ToolDefinition, type ToolResult } from './tool.ts';

/** How one run of a handler ended. Unexpected exceptions are rethrown, not mapped. */
export type RunOutcome =
  | { kind: 'result'; result: ToolResult }
  | { kind: 'protocol-error'; error: JsonRpcErrorObject }
  | { kind: 'input'; inputRequests: Record<string, InputRequest> }
  | { kind: 'cancelled' };

export interface RunOptions {
  taskId: string | undefined;
  clientCapabilities: ClientCapabilities;
  /** Answers recorded so far, by key. */
  answers: Record<string, unknown>;
  /** Aborted when the task is cancelled. */
  cancel: AbortSignal;
  progress: (message: string) => Promise<void>;
}

const MISSING_CAPABILITY = -32021;

/**
 * Runs a tool handler once, replaying recorded answers.
 *
 * Replay rules: the handler runs from the start on every run. `elicit` and
 * `sample` return the recorded answer for their key; a key with no answer
 * registers an input request and never settles. The run ends as `input` once
 * the handler has registered requests and the current turn of the event loop
 * is over, so requests issued together (`Promise.all`) become one set of
 * outstanding keys. Work still in flight at that point is abandoned (the
 * context's signal is aborted) and done again on the next replay.
 */
export async function runTool(tool: ToolDefinition, args: Record<string, unknown>, options: RunOptions): Promise<RunOutcome> {
  const pending: Record<string, InputRequest> = {};
  let suspended!: () => void;
  const suspension = new Promise<void>((resolve) => (suspended = resolve));
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
    const first = Object.keys(pending).length === 0;
    pending[key] = request;
    if (first) setImmediate(suspended);
    return new Promise<T>(() => {});
  };

  const ctx: TaskContext = {
    taskId: options.taskId,
    signal: controller.signal,
    clientCapabilities: options.clientCapabilities,
    progress: (message) => options.progress(message),
    elicit: (key, params) => ask(key, { method: 'elicitation/create', params: { mode: 'form', ...params } }, 'elicitation'),
    sample: (key, params) => ask(key, { method: 'sampling/createMessage', params }, 'sampling'),
  };

  try {
    const ran = tool.handler(args, ctx).then(
      (value) => ({ done: true as const, value }),
      (error: unknown) => ({ done: true as const, error }),
    );
    const settled = await Promise.race([ran, suspension.then(() => ({ done: false as const }))]);
    if (!settled.done) {
      controller.abort(new Error('suspended for input'));
      return { kind: 'input', inputRequests: pending };
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
  throw error;
}

function toResult(value: ToolResult | string): ToolResult {
  return typeof value === 'string' ? { content: [{ type: 'text', text: value }] } : value;
}
