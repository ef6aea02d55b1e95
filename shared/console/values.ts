/**
 * Task data (arguments, steps, structured results) drawn for a person: text
 * as text, an object as labelled rows, a list of like objects as a table
 * (cards on a phone), and the JSON itself only behind a "Raw" disclosure.
 * As nodes (`nodes.ts`): the JSX and the page's script build the same.
 */
import { el, type UiNode } from './nodes.ts';
import { absoluteUtc } from './times.ts';
import { labelOf } from './words.ts';

/** Most characters of one text the page shows (the rest is cut, and said so). */
const SHOWN_CHARS = 20_000;
/** Deeper than this, a value is shown as its JSON. */
const MAX_DEPTH = 3;
/** A table has at most this many columns and rows; a larger list is shown as its JSON. */
const MAX_COLUMNS = 8;
const MAX_ROWS = 100;

type Plain = Record<string, unknown>;
const isPlain = (value: unknown): value is Plain => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` as indented JSON, cut at the page's limit. */
function rawText(value: unknown): string {
  return cut(JSON.stringify(value, null, 2) ?? String(value));
}

function cut(text: string): string {
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}\n… (${text.length - SHOWN_CHARS} more characters)` : text;
}

/** The last word of a key that names a time: `startDate`, `createdAt`, `stop_time`, `timestamp`. */
const TIME_WORDS = new Set(['date', 'time', 'at', 'timestamp']);
/** Epoch milliseconds a time key's number may be (2001 to 2286): a count of seconds, or any other number, is shown as it is. */
const EPOCH_MS = { min: 1e12, max: 1e13 };
/** A date and time in ISO 8601 with its zone, as `toISOString` and most APIs write it. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The time `value` holds, in epoch milliseconds: an ISO 8601 date-time, or
 * epoch milliseconds under a key that names a time (`startDate`,
 * `createdAt`); else `undefined`.
 */
export function timeOf(value: unknown, key: string | undefined): number | undefined {
  if (typeof value === 'string' && ISO_TIME.test(value)) {
    const at = Date.parse(value);
    return Number.isNaN(at) ? undefined : at;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < EPOCH_MS.min || value >= EPOCH_MS.max) return undefined;
  const last = labelOf(key ?? '')
    .toLowerCase()
    .split(' ')
    .at(-1);
  return last !== undefined && TIME_WORDS.has(last) ? value : undefined;
}

/** A time in task data: absolute words, which the page's script rewrites as relative ones (with the absolute time on hover). */
function timeNodeOf(at: number): UiNode {
  return el('time', { datetime: new Date(at).toISOString(), title: absoluteUtc(at) }, absoluteUtc(at));
}

/** `value` drawn for a person (`key`: the name it has in its object, if any). */
export function valueNodes(value: unknown, depth = 0, key?: string): UiNode {
  if (value === null || value === undefined) return el('span', { class: 'none' }, 'none');
  const at = timeOf(value, key);
  if (at !== undefined) return timeNodeOf(at);
  if (typeof value === 'string') return el(value.includes('\n') || value.length > 200 ? 'p' : 'span', { class: 'text' }, cut(value));
  if (typeof value === 'boolean') return el('span', undefined, value ? 'Yes' : 'No');
  if (typeof value !== 'object') return el('span', undefined, String(value));
  if (depth >= MAX_DEPTH) return el('pre', undefined, rawText(value));
  if (Array.isArray(value)) return listNodes(value, depth);
  const entries = Object.entries(value);
  if (entries.length === 0) return el('span', { class: 'none' }, 'none');
  return el(
    'dl',
    { class: 'rows' },
    ...entries.flatMap(([key, item]) => [el('dt', undefined, labelOf(key)), el('dd', undefined, valueNodes(item, depth + 1, key))]),
  );
}

function listNodes(items: unknown[], depth: number): UiNode {
  if (items.length === 0) return el('span', { class: 'none' }, 'none');
  const columns = [...new Set(items.flatMap((item) => (isPlain(item) ? Object.keys(item) : [])))];
  const table = items.every(isPlain) && columns.length <= MAX_COLUMNS && items.length <= MAX_ROWS;
  if (!table) return el('ul', { class: 'items' }, ...items.map((item) => el('li', undefined, valueNodes(item, depth + 1))));
  const labels = columns.map(labelOf);
  return el(
    'table',
    { class: 'cards' },
    el('thead', undefined, el('tr', undefined, ...labels.map((label) => el('th', { scope: 'col' }, label)))),
    el(
      'tbody',
      undefined,
      ...items.map((item) =>
        el(
          'tr',
          undefined,
          ...columns.map((column, i) => el('td', { 'data-label': labels[i]! }, valueNodes((item as Plain)[column], depth + 2, column))),
        ),
      ),
    ),
  );
}

/** `value` drawn, followed by its JSON behind a "Raw" disclosure. */
export function withRaw(value: unknown): UiNode[] {
  return [valueNodes(value), el('details', { class: 'raw' }, el('summary', undefined, 'Raw JSON'), el('pre', undefined, rawText(value)))];
}
