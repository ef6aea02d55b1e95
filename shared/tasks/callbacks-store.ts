/**
 * The callback part of the task store port ({@link TaskStore} extends it):
 * a suspended run's wait, and what outside systems post to its callbacks.
 * Decisions in `callbacks-decisions.ts`; both stores apply them.
 */
import type { AwaitCallbacksOptions, CompletionResult, HeartbeatResult, PostedCompletion } from './callbacks-model.ts';

export interface CallbackStore {
  /**
   * The run holding the lease suspends on its open callbacks: one
   * conditional write drops the lease and records the wait, the task staying
   * `working`, due for the sweeper at the wait's first deadline. `signalled`
   * (nothing written) when a completion or a cancel arrived since the claim
   * (the settlements differ from `options.seen`): the run goes on instead.
   * Throws `LeaseLostError` when the lease is not ours.
   */
  awaitCallbacks(taskId: string, leaseOwner: string, options: AwaitCallbacksOptions, now: number): Promise<'waiting' | 'signalled'>;

  /**
   * Records the first completion of a callback (one conditional write; a
   * repeat changes nothing). `resumed`: the task is due again and the caller
   * enqueues it (should that never happen, the sweeper finds it within a
   * lease and the grace).
   */
  completeCallback(taskId: string, callbackId: string, posted: PostedCompletion, now: number): Promise<CompletionResult>;

  /** Records a heartbeat of an open callback (at most one write per `heartbeatWriteInterval`). */
  beatCallback(taskId: string, callbackId: string, now: number): Promise<HeartbeatResult>;
}
