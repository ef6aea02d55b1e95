/**
 * Getting a request through when the network or the endpoint is briefly
 * away (the local stack restarting under `npm run dev`, a gateway saying
 * "try later"): which failures are the transport's, and a retry loop with
 * backoff for a bounded time. Past it, {@link Unreachable} names the URL and
 * the cause. Local to the client: nothing here is on the wire.
 */
import { delay } from '../../shared/delay.ts';

/** HTTP statuses a gateway answers when the endpoint behind it is busy or away: worth trying again. */
const TRY_LATER = new Set([429, 502, 503, 504]);

/** Network failures that a retry cannot fix (the name does not resolve), so the first one ends the attempt. */
const DEFINITIVE = new Set(['ENOTFOUND']);

/** The first wait between attempts, doubled each time up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 2_000;

/** The endpoint could not be reached: after the retries, or at once for a definitive failure. */
export class Unreachable extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`could not reach ${url}: ${reason}`);
    this.name = 'Unreachable';
  }
}

/** An HTTP answer a gateway gives instead of the endpoint's (no JSON-RPC in it). */
export class GatewayAnswer extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
    this.name = 'GatewayAnswer';
  }
}

/** Whether an HTTP status without a JSON-RPC answer means "try later". */
export function tryLater(status: number): boolean {
  return TRY_LATER.has(status);
}

/**
 * Why a request failed, when the transport failed it (no answer, the
 * connection refused or dropped, no answer in time, a gateway's "try later"):
 * in words, with whether a retry may help. `undefined`: not a transport
 * failure (an answer came, or the caller gave up through its signal).
 */
export function transportFailure(error: unknown, signal?: AbortSignal): { reason: string; retryable: boolean } | undefined {
  if (signal?.aborted) return undefined;
  if (error instanceof GatewayAnswer) return { reason: error.message, retryable: true };
  if (error instanceof DOMException && error.name === 'TimeoutError') return { reason: 'no answer in time', retryable: true };
  // undici's `fetch` rejects with `TypeError('fetch failed')` and the socket's error as its cause.
  if (!(error instanceof TypeError) || error.cause === undefined) return undefined;
  const cause = error.cause as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof cause.code === 'string' ? cause.code : undefined;
  // Several addresses tried (localhost: ::1 and 127.0.0.1): an AggregateError with an empty message.
  const inner = Array.isArray(cause.errors) ? (cause.errors[0] as { message?: unknown } | undefined) : undefined;
  const message = [cause.message, inner?.message, code].find((text): text is string => typeof text === 'string' && text !== '');
  return { reason: message ?? 'fetch failed', retryable: !(code !== undefined && DEFINITIVE.has(code)) };
}

export interface RetryOptions {
  /** How long to keep trying after the first failure (0: no retry). */
  forMs: number;
  /** Told once per outage, at the first failure that will be retried. */
  onRetry?: (reason: string) => void;
  /** Stops the waiting (the caller gives up). */
  signal?: AbortSignal;
}

/**
 * Runs `attempt` until it succeeds, retrying transport failures with
 * backoff for `forMs`; throws {@link Unreachable} once that time is up (or
 * at once for a failure a retry cannot fix). Any other error is thrown as is.
 */
export async function withRetries<T>(url: string, attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const deadline = Date.now() + options.forMs;
  let wait = FIRST_BACKOFF_MS;
  let told = false;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const failure = transportFailure(error, options.signal);
      if (failure === undefined) throw error;
      if (!failure.retryable || Date.now() + wait > deadline) throw new Unreachable(url, failure.reason);
      if (!told) options.onRetry?.(failure.reason);
      told = true;
      await delay(wait, options.signal);
      wait = Math.min(2 * wait, MAX_BACKOFF_MS);
    }
  }
}
