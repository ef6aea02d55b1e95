/**
 * How deep a JSON text nests, measured without parsing it: what the MCP
 * endpoint checks before the SDK parses a body, and what the resource server
 * checks before it reads the tool a body calls. Here, below both, so that
 * neither layer imports the other. Pure: no I/O, no recursion.
 */
import { MAX_JSON_DEPTH } from './tasks/limits.ts';

const OPEN_BRACE = 0x7b; // {
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACE = 0x7d; // }
const CLOSE_BRACKET = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COLON = 0x3a; // :
const COMMA = 0x2c; // ,

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

/**
 * The `id` member of the object `text` holds at its top level, when it is a
 * string or a number (else `null`), read without parsing the rest: a body
 * refused for its nesting is still answered with its request's id, as
 * clients match replies by id. One pass with a counter, like
 * {@link nestsDeeperThan}; of repeated `id` members the last counts, as
 * `JSON.parse` would have it.
 */
export function topLevelId(text: string): string | number | null {
  let id: string | number | null = null;
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return null;
  i = skipSpace(text, i + 1);
  while (text.charCodeAt(i) === QUOTE) {
    const keyEnd = valueEnd(text, i);
    const colon = skipSpace(text, keyEnd);
    if (text.charCodeAt(colon) !== COLON) return id;
    const start = skipSpace(text, colon + 1);
    const end = valueEnd(text, start);
    if (scalar(text.slice(i, keyEnd)) === 'id') id = idOf(scalar(text.slice(start, end)));
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== COMMA) return id;
    i = skipSpace(text, i + 1);
  }
  return id;
}

/** Where the JSON value starting at `start` ends (the index after it); arrays and objects are skipped with a counter, not recursion. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return i; // the end of a number, `true`, … inside the enclosing object
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === COMMA || isSpace(c))) return i;
  }
  return text.length;
}

/** A string, number or literal's value; `undefined` for malformed text (the parser refuses it, not this scan). */
function scalar(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // not a value: no id to answer with
  }
}

/** A request id as JSON-RPC allows it (string or number), else `null`. */
function idOf(value: unknown): string | number | null {
  return typeof value === 'string' || typeof value === 'number' ? value : null;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
