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
