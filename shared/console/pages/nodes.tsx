/**
 * Nodes (`../nodes.ts`) as JSX: the same elements the page's script builds
 * from the same description, rendered (and escaped) by Hono's JSX renderer.
 * An attribute or tag outside the allowed lists is left out, as the script
 * leaves it out.
 */
import type { Child } from 'hono/jsx';
import { jsx } from 'hono/jsx';
import { attributeAllowed, tagAllowed, type UiNode } from '../nodes.ts';

/** `nodes` rendered in order. */
export function Nodes(props: { nodes: readonly UiNode[] }) {
  return <>{props.nodes.map(toJsx)}</>;
}

function toJsx(node: UiNode): Child {
  if (typeof node === 'string') return node;
  if (!tagAllowed(node.tag)) return null;
  const attrs: Record<string, string | boolean> = {};
  for (const [name, value] of Object.entries(node.attrs ?? {})) {
    if (value !== undefined && attributeAllowed(name, value)) attrs[name] = value === true ? true : value;
  }
  return jsx(node.tag, attrs, ...(node.children ?? []).map(toJsx));
}
