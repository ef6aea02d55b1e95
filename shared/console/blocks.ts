/**
 * A tool's result as nodes (`nodes.ts`): the one function that draws a
 * result block, for the page the server renders and for the page's script,
 * which receives these nodes from the live route and only builds them.
 */
import { el, type UiNode } from './nodes.ts';
import { withRaw } from './values.ts';

/** One piece of a tool's result, as the page shows it. */
export type Block =
  | { kind: 'text'; text: string }
  | { kind: 'image'; src: string; alt: string }
  | { kind: 'audio'; src: string }
  /** `href` only when the target is `http:` or `https:`; otherwise the page shows `text` and the target as text. */
  | { kind: 'link'; text: string; target: string; href?: string }
  | { kind: 'json'; label: string; text: string }
  /** Structured content: drawn as rows, its JSON behind a disclosure. */
  | { kind: 'value'; label: string; value: unknown };

/** A tool's result (`CallToolResult`) as blocks; `isError`: the tool reported an error. */
export interface ResultView {
  isError: boolean;
  blocks: Block[];
}

/** One block of a result. */
export function blockNode(block: Block): UiNode {
  switch (block.kind) {
    case 'image':
      return el('img', { src: block.src, alt: block.alt });
    case 'audio':
      return el('audio', { controls: true, src: block.src });
    case 'link':
      return block.href
        ? el('p', undefined, el('a', { href: block.href, rel: 'noopener noreferrer nofollow' }, block.text))
        : el('p', undefined, `${block.text} (${block.target})`);
    case 'json':
      return el('figure', undefined, el('figcaption', undefined, block.label), el('pre', undefined, block.text));
    case 'text':
      return el('p', { class: 'text' }, block.text);
    case 'value':
      return el('figure', undefined, el('figcaption', undefined, block.label), ...withRaw(block.value));
  }
}

/** A result's blocks, in order. */
export function resultNodes(view: ResultView): UiNode[] {
  return view.blocks.map(blockNode);
}
