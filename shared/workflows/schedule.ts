/**
 * When the safety net looks at an execution whose end has not reached its
 * task (Step Functions delivers status-change events best effort): 15
 * minutes after the start, then after twice the last gap, the gap growing to
 * at most a day. Each look is one `DescribeExecution`, by the worker the
 * sweeper wakes. A 10-minute execution is never looked at; a 7-day one at
 * most 12 times ({@link checksWithin}).
 *
 * No AWS SDK in here: this module is part of every bundle.
 */

const MINUTE = 60_000;

/** The first look, after the start. */
export const FIRST_CHECK_MS = 15 * MINUTE;

/** The longest gap between two looks. */
export const MAX_CHECK_GAP_MS = 24 * 60 * MINUTE;

/** The first look after `now` at an execution started at `startedAt` (epoch ms). */
export function nextCheckAt(startedAt: number, now: number): number {
  let at = startedAt + FIRST_CHECK_MS;
  let gap = FIRST_CHECK_MS;
  while (at <= now) {
    gap = Math.min(gap * 2, MAX_CHECK_GAP_MS);
    at += gap;
  }
  return at;
}

/** How many looks an execution that runs `durationMs` gets (an end that never arrives as an event). */
export function checksWithin(durationMs: number): number {
  let checks = 0;
  for (let at = nextCheckAt(0, 0); at <= durationMs; at = nextCheckAt(0, at)) checks += 1;
  return checks;
}
