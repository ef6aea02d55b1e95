/**
 * What the outside systems' callbacks (`ctx.callback`) add to a task, for
 * the capacity model (`capacity.ts`): each callback is a run more (the
 * resume), its step (the submit, recorded once) and the completion's
 * conditional write, the completion's read of the row, two moves of
 * `sweepAt` (the suspension sets the wait's deadline, the completion
 * `now + W`), and one more request to the API (the completion's POST, to
 * the callbacks function). The suspended wait itself costs nothing: no
 * message, no invocation, no write until the outside system calls. The
 * AWS-calls bench measures the same (`test/bench/callback-vs-poll.ts`).
 */

/** The additions of `callbacks` callbacks per task. */
export interface CallbackCounts {
  /** Worker runs (each resume); each run also claims, ends and goes through the queue, as any run. */
  runs: number;
  /** The callback's step and the completion's write. */
  ddbWrites: number;
  /** The completion's read of the row. */
  ddbReads: number;
  /** Two moves of `sweepAt` each (2 index writes a move). */
  indexWcu: number;
  /** The completion's POST. */
  apiRequests: number;
}

export function callbackCounts(callbacks: number): CallbackCounts {
  return { runs: callbacks, ddbWrites: 2 * callbacks, ddbReads: callbacks, indexWcu: 4 * callbacks, apiRequests: callbacks };
}
