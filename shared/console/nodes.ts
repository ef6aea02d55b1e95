/**
 * A piece of a page as plain data: an element of a short list of tags with
 * a short list of attributes, and text. The console's renderers (a result,
 * a status, a list's rows) describe what they show as nodes; the JSX turns
 * them into markup (`pages/nodes.tsx`, escaped by Hono's renderer) and the
 * page's script into DOM (`client/dom.ts`, text as text nodes), so one
 * function draws a block for the first page and for its live updates, and
 * no HTML string is ever made from task data.
 *
 * No DOM and no Node here: the browser bundle imports this module.
 */

/** The elements a node may be. */
const TAGS = [
  'a',
  'audio',
  'code',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'img',
  'li',
  'p',
  'pre',
  'section',
  'small',
  'span',
  'strong',
  'summary',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'time',
  'tr',
  'ul',
  // The timeline's picture (`timeline.ts`): drawn in the SVG namespace.
  'svg',
  'g',
  'rect',
  'line',
  'text',
] as const;

export type Tag = (typeof TAGS)[number];

/** The tags made in the SVG namespace (the page's script must create them so). */
export const SVG_TAGS: ReadonlySet<string> = new Set(['svg', 'g', 'rect', 'line', 'text']);

/** The attributes a node may carry (`href` and `src` further checked by {@link attributeAllowed}). */
const ATTRIBUTES = [
  'alt',
  'class',
  'controls',
  'data-label',
  'data-task',
  'data-waiting',
  'data-decision',
  'data-status',
  'datetime',
  'href',
  'id',
  'rel',
  'role',
  'scope',
  'src',
  'title',
  // The timeline's picture.
  'aria-label',
  'data-phase',
  'height',
  'viewBox',
  'width',
  'x',
  'x1',
  'x2',
  'y',
  'y1',
  'y2',
] as const;

export type Attribute = (typeof ATTRIBUTES)[number];

/** An element: its tag, attributes (`true`: present without a value) and children. */
export interface UiElement {
  tag: Tag;
  attrs?: Partial<Record<Attribute, string | true>>;
  children?: UiNode[];
}

/** A node: an element, or text. */
export type UiNode = UiElement | string;

/** An element node (children `undefined` or `false` are left out, so conditions read inline). */
export function el(tag: Tag, attrs: UiElement['attrs'] | undefined, ...children: Array<UiNode | undefined | false>): UiElement {
  const kept = children.filter((child): child is UiNode => child !== undefined && child !== false);
  return { tag, ...(attrs && Object.keys(attrs).length > 0 ? { attrs } : {}), ...(kept.length > 0 ? { children: kept } : {}) };
}

const TAG_SET: ReadonlySet<string> = new Set(TAGS);
const ATTRIBUTE_SET: ReadonlySet<string> = new Set(ATTRIBUTES);
const MEDIA_SRC = /^data:(image|audio)\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/]+={0,2}$/;

/** Whether `tag` is one a node may be. */
export function tagAllowed(tag: unknown): tag is Tag {
  return typeof tag === 'string' && TAG_SET.has(tag);
}

/**
 * Whether an attribute may be set as given: a known name; an `href` only to
 * `http:`/`https:` or a path of the console; a `src` only a base64 `data:`
 * URL of an image or audio type. Both renderers apply it, so a node that
 * slipped past a builder's own check still never becomes a script link.
 */
export function attributeAllowed(name: string, value: string | true): boolean {
  if (!ATTRIBUTE_SET.has(name)) return false;
  if (name === 'href') return typeof value === 'string' && (/^https?:\/\//i.test(value) || /^\/console(\/|\?|$)/.test(value));
  if (name === 'src') return typeof value === 'string' && MEDIA_SRC.test(value);
  return true;
}
