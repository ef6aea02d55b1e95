/**
 * Shape checks on a request body that must run before the SDK sees it: the
 * SDK parses, walks and reshapes the body (it lifts `inputResponses` out of
 * `params`, quietly turning a malformed value into `{}`), so what it would
 * hide or trip over is refused here, as the client's mistake. Pure: no I/O,
 * no recursion.
 */
import { MAX_JSON_DEPTH } from '../tasks/limits.ts';

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
