/**
 * `ctx.callback`: a wait on an outside system, replayed like any durable
 * call. The callback is one step (`callback:<name>`, recording its id and
 * deadlines, never its URL's token), run with the tool's submit function in
 * it; what the outside system posts lives on the task row
 * (`callbacks-model.ts`), which the worker's claim read. A callback that is
 * still open suspends the run: the worker records the wait and the sweeper
 * wakes the task at its first deadline, or a completion does.
 */
import { createHash } from 'node:crypto';
import { type CallbackKeys, sealCallback } from '../callback-tokens.ts';
import type { DeploymentLinks } from '../links.ts';
import type { Log } from '../log.ts';
import { type CallbackSettlement, type CallbackWait, type CallbackWaitEntry, entryDeadline } from '../tasks/callbacks-model.ts';
import type { TaskRecord } from '../tasks/model.ts';
import type { TaskStore } from '../tasks/store.ts';
import { LeaseLostError } from '../tasks/store-errors.ts';
import type { WorkflowRecord } from '../tasks/workflows-model.ts';
import { CallbackFailedError, type CallbackOptions, CallbackTimedOutError, ToolError } from './tool.ts';

/** What a run knows of its task's callbacks: the record as claimed, and how to make a callback's URL. */
export interface CallbackState {
  settlements: Record<string, CallbackSettlement>;
  /** The wait the last suspension recorded (with the heartbeats since). */
  wait?: CallbackWait;
  /** The URL of this task's callback `callbackId`, valid until `expiresAt` (epoch ms). */
  url(callbackId: string, expiresAt: number): Promise<string>;
  /** The run carries a cancel to the `onCancel` of each open callback (recorded steps replay, nothing new runs). */
  cancelling?: boolean;
  /** A workflow tool's execution, tokens and progress, as claimed. */
  workflow?: WorkflowRecord;
  /** The message a requested cancel ends the task with (`TaskRecord.cancelMessage`), as claimed. */
  cancelMessage?: string;
}

/** The runner's side of a callback call (the replay's own steps and suspension). */
export interface CallbackHost {
  readonly taskId: string | undefined;
  readonly state: CallbackState | undefined;
  now(): number;
  /** A durable step (recorded once). */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** A durable step that runs even though the run is cancelling (an `onCancel`). */
  cancelStep(name: string, fn: () => Promise<void>): Promise<void>;
  /** Why the run is cancelled (what a cancelled call throws). */
  cancelReason(): unknown;
  /** A completion reached: the wait it ended, for the run's trace (`until`: the completion's time). */
  calledBack?(wait: { name: string; since: number; until: number; workflow?: boolean }): void;
  /** Registers the open callback and suspends the run (never settles); with `wakeAt`, the run is also woken then. */
  wait(callbackId: string, entry: CallbackWaitEntry, message: string, wakeAt?: number): Promise<never>;
}

/** Where a run's context carries its {@link CallbackHost}, for handlers the engine supplies (a workflow tool's). */
export const RUN_HOST = Symbol('mcp-tasks/run-host');

/** The run's host of a context made by the runner (`undefined` for any other). */
export function runHostOf(ctx: object): CallbackHost | undefined {
  return (ctx as { [RUN_HOST]?: CallbackHost })[RUN_HOST];
}

/** What the callback's step records: its id and deadlines (no URL: the token in it is never stored). */
interface RecordedCallback {
  id: string;
  since: number;
  timeoutAt: number;
  heartbeatTimeoutMs?: number;
}

/** A callback's id: derived from the task and the callback's name, so every replay (and a re-run submit) has the same one. */
export function callbackIdOf(taskId: string, name: string): string {
  return `cb_${createHash('sha256').update(`${taskId}\u0000${name}`).digest('base64url').slice(0, 22)}`;
}

export async function awaitCallback<T>(host: CallbackHost, name: string, options: CallbackOptions): Promise<T> {
  const { state, taskId } = host;
  if (taskId === undefined || state === undefined) throw new ToolError('This tool waits for an outside system: it runs only as a task');
  checkDuration('timeoutMs', options.timeoutMs);
  if (options.heartbeatTimeoutMs !== undefined) checkDuration('heartbeatTimeoutMs', options.heartbeatTimeoutMs);
  const id = callbackIdOf(taskId, name);
  const recorded = await host.step<RecordedCallback>(`callback:${name}`, async () => {
    const since = host.now();
    const timeoutAt = since + options.timeoutMs;
    await options.submit({ id, url: await state.url(id, timeoutAt) });
    return {
      id,
      since,
      timeoutAt,
      ...(options.heartbeatTimeoutMs === undefined ? {} : { heartbeatTimeoutMs: options.heartbeatTimeoutMs }),
    };
  });
  const settled = state.settlements[id];
  if (settled) {
    host.calledBack?.({ name, since: recorded.since, until: settled.at });
    if ('result' in settled) return settled.result as T;
    throw new CallbackFailedError(name, settled.error);
  }
  const beatAt = state.wait?.callbacks[id]?.beatAt;
  const entry: CallbackWaitEntry = {
    since: recorded.since,
    timeoutAt: recorded.timeoutAt,
    ...(recorded.heartbeatTimeoutMs === undefined ? {} : { heartbeatTimeoutMs: recorded.heartbeatTimeoutMs }),
    ...(beatAt === undefined ? {} : { beatAt }),
    ...(options.onCancel ? { onCancel: true as const } : {}),
  };
  const now = host.now();
  if (entryDeadline(entry) <= now) throw new CallbackTimedOutError(name, now >= entry.timeoutAt ? 'timeout' : 'heartbeat');
  if (state.cancelling) {
    const { onCancel } = options;
    if (onCancel) await host.cancelStep(`callback-cancel:${name}`, () => onCancel({ id }));
    throw host.cancelReason();
  }
  return host.wait(id, entry, options.waitingMessage ?? `Waiting for an outside system to call back (${name})`);
}

function checkDuration(name: string, ms: number): void {
  if (!Number.isFinite(ms) || ms <= 0) throw new TypeError(`ctx.callback: ${name} must be a positive number of milliseconds`);
}

/** What the worker needs to make a callback's URL: the keys (the token's is derived from them) and the deployment's links. */
export interface CallbackUrls {
  keys?: CallbackKeys;
  links?: DeploymentLinks;
}

/**
 * The callback state of a run of `task`, as claimed. A deployment that can
 * make no URL (no keys, or no public URL) fails the callback's step: a tool
 * never waits for a callback nobody could make.
 */
export function callbackState(task: TaskRecord, urls: CallbackUrls, cancelling: boolean): CallbackState {
  return {
    settlements: task.callbacks ?? {},
    ...(task.callbackWait ? { wait: task.callbackWait } : {}),
    ...(cancelling ? { cancelling } : {}),
    ...(task.workflow ? { workflow: task.workflow } : {}),
    ...(task.cancelMessage === undefined ? {} : { cancelMessage: task.cancelMessage }),
    url: async (callbackId, expiresAt) => {
      const { keys, links } = urls;
      if (!keys) throw new Error("Callbacks need the deployment's key: none is configured");
      const url = links?.callback(await sealCallback(keys, { taskId: task.taskId, callbackId, expiresAt }));
      if (!url) throw new Error("Callbacks need the deployment's public URL (TASKS_PUBLIC_URL): none is configured");
      return url;
    },
  };
}

/**
 * The worker's suspension on callbacks: the lease is dropped and the wait
 * recorded in one write (`TaskStore.awaitCallbacks`); nothing is queued (a
 * completion, or the sweeper at the wait's first deadline, wakes the task).
 * `signalled`: a completion or a cancel came during the run, which goes on
 * at once instead. A lost lease is the other worker's to settle.
 */
export async function suspendOnCallbacks(
  deps: { store: Pick<TaskStore, 'awaitCallbacks'>; log: Log },
  claimed: TaskRecord,
  leaseOwner: string,
  outcome: { wait: CallbackWait; statusMessage: string },
  progressMark: number | undefined,
  now: number,
): Promise<'waiting' | 'signalled' | 'lost'> {
  const options = {
    seen: claimed.callbacks,
    wait: outcome.wait,
    statusMessage: outcome.statusMessage,
    ...(progressMark === undefined ? {} : { progressMark }),
    claimed,
  };
  const waiting = await deps.store.awaitCallbacks(claimed.taskId, leaseOwner, options, now).catch((error: unknown) => {
    if (error instanceof LeaseLostError) return 'lost' as const;
    throw error;
  });
  if (waiting !== 'signalled') {
    const event = waiting === 'lost' ? 'lease-lost' : 'callback-wait';
    deps.log({ event, taskId: claimed.taskId, callbacks: Object.keys(outcome.wait.callbacks).length });
  }
  return waiting;
}
