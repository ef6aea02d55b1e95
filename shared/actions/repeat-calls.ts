/**
 * Repeated identical calls from clients without tasks. A model that does
 * not read the fallback's guidance (or a client that gave up and retries)
 * calls the same tool with the same arguments again; rather than start the
 * work a second time, the call joins the unfinished task the first one
 * started. Such a task's id is derived from the call: an HMAC, under a key
 * of its own purpose, of the principal, the tool, the arguments (canonical
 * JSON) and a time window, so a repeat within the window derives the same id
 * and the create's own conditional put finds the task (no extra write), while
 * the id stays unguessable to anyone without the key.
 *
 * A repeat in the next window derives another id: the call also reads the
 * previous window's ids, so identical calls up to two windows apart join.
 * Each window has a few ids in turn ({@link REPEAT_SLOTS}): once the task
 * under one has ended, the next identical call takes the next id, so its own
 * repeats join it too.
 */
import { createHmac } from 'node:crypto';
import { canonicalJson } from '../canonical-json.ts';

/** The window a repeat is recognised in; identical calls up to two windows apart join. */
export const REPEAT_WINDOW_MS = 10 * 60_000;

/** Ids per window, taken in turn as the tasks under them end; past the last, a call starts a task under a fresh id. */
const REPEAT_SLOTS = 3;

/** The ids a call from `principal` to `tool` with `args` derives at `now`: this window's in turn, then the previous one's. */
export function repeatCallIds(
  key: Uint8Array,
  call: { principal: string; tool: string; args: Record<string, unknown> },
  now: number,
): { current: string[]; previous: string[] } {
  const window = Math.floor(now / REPEAT_WINDOW_MS);
  const text = canonicalJson([call.principal, call.tool, call.args]);
  const slots = (w: number) => Array.from({ length: REPEAT_SLOTS }, (_, slot) => derivedId(key, text, w, slot));
  return { current: slots(window), previous: slots(window - 1) };
}

/** A UUID (version 8, RFC 9562: custom) from the call's HMAC: 122 bits of it, shaped like every other task id. */
function derivedId(key: Uint8Array, call: string, window: number, slot: number): string {
  const bytes = createHmac('sha256', key).update(`${window}/${slot}\n`).update(call).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
