/**
 * The tests' one way to wait: {@link sleep} for a fixed pause, {@link waitFor}
 * to poll a condition until it holds or a deadline passes. (Task polling over
 * the wire, `pollUntil` in `wire.ts`, uses the CLI's own poller.)
 */
import { setTimeout as delay } from 'node:timers/promises';

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return delay(ms);
}

/**
 * Polls `check` every `intervalMs` until it returns something other than
 * `undefined`/`false`, and returns that value; throws after `timeoutMs`
 * naming `what` (a function is called then, so the message can carry the
 * last state seen).
 */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(intervalMs);
  }
}
