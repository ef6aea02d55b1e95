/**
 * Nodes (`../nodes.ts`) as DOM: elements of the allowed tags with the
 * allowed attributes, and text as text nodes. Nothing is parsed as HTML.
 */
import { attributeAllowed, SVG_TAGS, tagAllowed, type UiNode } from '../nodes.ts';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** `node` as a DOM node of `doc` (a tag outside the list becomes empty text; the picture's tags in the SVG namespace). */
function toDom(doc: Document, node: UiNode): Node {
  if (typeof node === 'string') return doc.createTextNode(node);
  if (!tagAllowed(node.tag)) return doc.createTextNode('');
  const element = SVG_TAGS.has(node.tag) ? doc.createElementNS(SVG_NS, node.tag) : doc.createElement(node.tag);
  for (const [name, value] of Object.entries(node.attrs ?? {})) {
    if (value !== undefined && attributeAllowed(name, value)) element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of node.children ?? []) element.append(toDom(doc, child));
  return element;
}

/** Replaces what `target` holds with `nodes` (unless they are what it last drew: a live region is not announced again for nothing). */
export function fill(target: HTMLElement, nodes: readonly UiNode[]): void {
  const drawn = JSON.stringify(nodes);
  if (target.dataset['drawn'] === drawn) return;
  target.dataset['drawn'] = drawn;
  const doc = target.ownerDocument;
  target.replaceChildren(...nodes.map((node) => toDom(doc, node)));
}
