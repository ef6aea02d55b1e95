/**
 * Size budgets for what a client may put into a task row, enforced at the
 * door (before anything is written) and answered `-32602` naming the limit.
 *
 * They are derived from DynamoDB's item limit (400 KB, names and values
 * counted in UTF-8): the client-controlled parts of a row together stay
 * under 272 KiB, which leaves 128 KiB for the row's own fields (keys,
 * owner, tool name, timestamps, counters, lease, `statusMessage`, the
 * tool's `inputRequests`, an `error`, and a result small enough to stay
 * inline: larger results go to chunk items). The measured sizes are in
 * `test/e2e/hostile-input.test.ts` and `docs/configuration.md`.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { ClientError } from '../errors.ts';

/** DynamoDB's largest item, in bytes. */
export const DYNAMODB_ITEM_LIMIT_BYTES = 400 * 1024;

/** A tool call's `arguments`, serialised as JSON (UTF-8 bytes). */
export const MAX_ARGUMENTS_BYTES = 128 * 1024;

/** The client capabilities declared on the `tools/call` that creates a task (JSON bytes). */
export const MAX_CAPABILITIES_BYTES = 16 * 1024;

/** One answer (`inputResponses[key]`), JSON bytes. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** All answers a task (or an inline call) gathers, together (JSON bytes of the map). */
export const MAX_ANSWERS_BYTES = 128 * 1024;

/**
 * An echoed `requestState`: sealed answers (at most {@link MAX_ANSWERS_BYTES}),
 * base64url-encoded (4/3) plus the envelope and its MAC.
 */
export const MAX_REQUEST_STATE_BYTES = 192 * 1024;

/** Task ids are UUIDs; anything longer than this is refused without a read. */
export const MAX_TASK_ID_LENGTH = 256;

/** A progress message is cut to this many bytes before it is written as `statusMessage`. */
export const MAX_STATUS_MESSAGE_BYTES = 4 * 1024;

/**
 * The deepest nesting of arrays and objects a request body may have (the
 * JSON-RPC envelope counts: a `tools/call`'s `arguments` object is at depth 3,
 * the client capabilities at depth 4). Checked on the raw body before it is
 * parsed, so no recursive walk (size measuring, schema checks, sealing,
 * serialising a row) ever meets a value deep enough to overflow the stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The UTF-8 size of `value` serialised as JSON (0 for `undefined`). It never
 * throws: a value that cannot be serialised (nested too deep for the stack,
 * cyclic, a BigInt) measures `Infinity`, over every budget. Request bodies
 * are bounded by {@link MAX_JSON_DEPTH} before anything is measured.
 */
export function jsonBytes(value: unknown): number {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return Number.POSITIVE_INFINITY; // unmeasurable is over budget: the caller refuses it
  }
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, on a character boundary. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let cut = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  // A multi-byte character cut in half decodes as U+FFFD: drop it.
  while (cut.endsWith('\uFFFD') && !text.startsWith(cut)) cut = cut.slice(0, -1);
  return cut;
}

/** Something a client sent is over one of the budgets above (a client mistake: `-32602`). */
export class LimitExceededError extends ClientError {
  constructor(
    /** What was too large, as the client named it (e.g. `arguments`, `inputResponses.confirm`). */
    readonly subject: string,
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(
      Number.isFinite(bytes)
        ? `${subject} is ${bytes} bytes; the limit is ${limitBytes} bytes`
        : `${subject} cannot be measured (nested too deep or not serialisable); the limit is ${limitBytes} bytes`,
      { data: { reason: 'limit-exceeded', subject, bytes, limitBytes } },
    );
    this.name = 'LimitExceededError';
  }
}

/** Throws {@link LimitExceededError} when `value` serialised is over `limitBytes`. */
export function checkBudget(subject: string, value: unknown, limitBytes: number): void {
  const bytes = jsonBytes(value);
  if (bytes > limitBytes) throw new LimitExceededError(subject, bytes, limitBytes);
}

/** Checks answers against the per-answer and the per-call budgets. */
export function checkAnswers(answers: Record<string, unknown>, subject = 'inputResponses'): void {
  for (const [key, value] of Object.entries(answers))
    checkBudget(`${subject}[${JSON.stringify(key.slice(0, 64))}]`, value, MAX_ANSWER_BYTES);
  checkBudget(subject, answers, MAX_ANSWERS_BYTES);
}

/**
 * The most moments a task row keeps (`moments.ts`: the times its timeline is
 * drawn from, each a string of about 20 bytes, so about 1.5 KB of the
 * row's own 128 KiB). A write that would keep more folds all but the newest
 * {@link KEPT_MOMENTS} into one `earlier` moment that sums the time of
 * each phase before them; a run that is lost without a write appends its
 * claim, and the next write under a lease folds.
 */
export const MAX_MOMENTS = 64;

/** The moments kept when a row's moments are folded (see {@link MAX_MOMENTS}). */
export const KEPT_MOMENTS = 32;
