/**
 * Repeated identical calls from clients without tasks. A model that does
 * not read the fallback's guidance (or a client that gave up and retries)
 * calls the same tool with the same arguments again; rather than start the
 * work a second time, the call joins the unfinished task the first one
 * started. Such a task's id is derived from the call: an HMAC, under a key
 * of its own purpose, of the principal, the tool, the arguments (canonical
 * JSON), a time window and the run's number, so the id stays unguessable to
 * anyone without the key.
 *
 * The runs of one call in one window are numbered: run 0 (the head) is the
 * first, and each run after it starts once the one before has ended. A run
 * past the head carries the head's id, and its end is counted on the head's
 * row (`runsEnded`), so one read of the head tells where the call stands:
 * running (join it), ended with n runs (the next run, or the one a repeat
 * joins, is run n). A call also reads the previous window's head while this
 * window has none, so identical calls up to two windows apart join.
 * `TaskActions.createOrJoin` follows this.
 */
import { createHmac } from 'node:crypto';
import { canonicalJson } from '../canonical-json.ts';

/** The window a repeat is recognised in; identical calls up to two windows apart join. */
export const REPEAT_WINDOW_MS = 10 * 60_000;

/** One window's runs of a call: the id of run `n` (run 0 is the head). */
export interface RepeatWindow {
  readonly head: string;
  run(n: number): string;
}

/** The windows a call from `principal` to `tool` with `args` looks in at `now`: this one, then the previous one. */
export function repeatWindows(
  key: Uint8Array,
  call: { principal: string; tool: string; args: Record<string, unknown> },
  now: number,
): { current: RepeatWindow; previous: RepeatWindow } {
  const window = Math.floor(now / REPEAT_WINDOW_MS);
  const text = canonicalJson([call.principal, call.tool, call.args]);
  const of = (w: number): RepeatWindow => ({ head: derivedId(key, text, w, 0), run: (n) => derivedId(key, text, w, n) });
  return { current: of(window), previous: of(window - 1) };
}

/** A UUID (version 8, RFC 9562: custom) from the call's HMAC: 122 bits of it, shaped like every other task id. */
function derivedId(key: Uint8Array, call: string, window: number, run: number): string {
  // `${window}/${run}`: the ids of runs 0–2 are those the slots of earlier releases took, so their rows are found.
  const bytes = createHmac('sha256', key).update(`${window}/${run}\n`).update(call).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
