/**
 * The shape rules a reader relies on: every optional prop of a construct
 * (and of the stack) says its default with `@default`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readTree } from '../../support/import-graph.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** `file: prop` for each optional prop of an exported `…Props` interface whose doc comment has no `@default`. */
function propsWithoutDefault(tree: ReadonlyMap<string, string>): string[] {
  const missing: string[] = [];
  for (const [file, text] of tree) {
    for (const body of text.matchAll(/export interface \w*Props\b[^{]*\{([\s\S]*?)\n\}/g)) {
      const lines = body[1]!.split('\n');
      lines.forEach((line, index) => {
        const prop = /^\s*readonly (\w+)\?:/.exec(line);
        if (!prop) return;
        let doc = '';
        for (let up = index - 1; up >= 0 && /^\s*(\/\*\*|\*)/.test(lines[up]!); up--) doc = `${lines[up]}\n${doc}`;
        if (!doc.includes('@default')) missing.push(`${file}: ${prop[1]}`);
      });
    }
  }
  return missing;
}

describe('shape rules', () => {
  it('every optional construct prop says its default', () => {
    const tree = readTree(ROOT, ['infra']);
    assert.ok(tree.size > 10, `read the sources (${tree.size})`);
    assert.deepEqual(propsWithoutDefault(tree), []);
  });

  it('a planted optional prop without its default is reported', () => {
    const planted = new Map([
      [
        'infra/x.ts',
        'export interface XProps {\n  /**\n   * Kept.\n   * @default 1\n   */\n  readonly kept?: number;\n  /** Bare. */\n  readonly bare?: string;\n  readonly needed: string;\n}',
      ],
    ]);
    assert.deepEqual(propsWithoutDefault(planted), ['infra/x.ts: bare']);
  });
});
