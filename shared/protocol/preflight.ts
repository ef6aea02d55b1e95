/**
 * Shape checks on a request body that must run before the SDK sees it: the
 * SDK parses, walks and reshapes the body (it lifts `inputResponses` out of
 * `params`, quietly turning a malformed value into `{}`), so what it would
 * hide or trip over is refused here, as the client's mistake. Pure: no I/O,
 * no recursion.
 */
import { MAX_JSON_DEPTH } from '../tasks/limits.ts';

const OPEN_BRACE = 0x7b; // {
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACE = 0x7d; // }
const CLOSE_BRACKET = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether the JSON text nests arrays and objects deeper than `limit`. One
 * pass over the characters with a counter (no parse, no recursion), so a body
 * of 100,000 nested arrays costs a scan, not a stack. Brackets inside strings
 * do not count. Malformed text is measured as far as it goes; the parser
 * refuses it afterwards.
 */
export function nestsDeeperThan(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** The message refusing a body nested deeper than {@link MAX_JSON_DEPTH}. */
export const TOO_DEEP_MESSAGE = `Request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`;

/**
 * What is wrong with a request's `params.inputResponses`, if anything: it
 * must be an object whose every entry is an object (an `ElicitResult`, a
 * `CreateMessageResult`, a `ListRootsResult`). The SDK would otherwise turn
 * a string, array or number into `{}` and drop non-object entries, and the
 * request would be acknowledged as if answered. An object under a key that
 * was never asked is not a shape error: it is acknowledged and ignored later.
 */
export function inputResponsesProblem(method: string, params: unknown): string | undefined {
  if (!isObject(params) || !('inputResponses' in params)) return undefined;
  const responses = params['inputResponses'];
  if (responses === undefined) return undefined;
  if (!isObject(responses)) return `${method}: inputResponses must be an object mapping each input key to its answer`;
  for (const [key, answer] of Object.entries(responses)) {
    if (!isObject(answer)) return `${method}: inputResponses[${JSON.stringify(key.slice(0, 64))}] must be an object (the answer)`;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
