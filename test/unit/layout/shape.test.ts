/**
 * The shape rules a reader relies on: no source file outside `test/` over
 * 400 lines and none in `test/` over 600 (past that, a file does several
 * things: split it along its seams), no function over 80 lines in the code
 * that ships or runs (nor in the tool author's test kit), and every optional
 * prop of a construct (and of the stack) says its default with `@default`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { functionsLongerThan } from '../../support/function-length.ts';
import { readTree } from '../../support/import-graph.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The longest a function-like node may be, nested ones included: past it, carve it along its seams into named helpers. */
const MOST_FUNCTION_LINES = 80;

/** Where the function rule holds: the code that ships or runs, and the tool author's test kit. */
const FUNCTION_RULE_FOLDERS = ['shared', 'functions', 'infra', 'bin', 'examples', 'kit'];

/** A source of one function-like node of `lines` lines, whose body is `lines - 2` statements. */
function planted(lines: number, open: string, close = '}'): string {
  return `${open}\n${'  void 0;\n'.repeat(lines - 2)}${close}\n`;
}

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

/** Files of `tree` longer than `most` lines, with their length. */
function tooLong(tree: ReadonlyMap<string, string>, most: number): string[] {
  return [...tree]
    .map(([file, text]) => [file, text.split('\n').length - (text.endsWith('\n') ? 1 : 0)] as const)
    .filter(([, lines]) => lines > most)
    .map(([file, lines]) => `${file}: ${lines} lines`);
}

describe('shape rules', () => {
  it('no file outside test/ over 400 lines, none in test/ over 600', () => {
    const sources = readTree(ROOT, ['shared', 'functions', 'infra', 'bin', 'kit', 'examples']);
    assert.ok(sources.size > 100, `read the sources (${sources.size})`);
    assert.deepEqual(tooLong(sources, 400), []);
    assert.deepEqual(tooLong(readTree(ROOT, ['test']), 600), []);
  });

  it('a planted long file is reported with its length', () => {
    const planted = new Map([
      ['shared/long.ts', 'x\n'.repeat(401)],
      ['shared/short.ts', 'x\n'.repeat(400)],
    ]);
    assert.deepEqual(tooLong(planted, 400), ['shared/long.ts: 401 lines']);
  });

  it(`no function-like node over ${MOST_FUNCTION_LINES} lines in ${FUNCTION_RULE_FOLDERS.join(', ')}`, () => {
    const sources = readTree(ROOT, FUNCTION_RULE_FOLDERS);
    assert.ok(sources.size > 100, `read the sources (${sources.size})`);
    const long = functionsLongerThan(sources, MOST_FUNCTION_LINES);
    assert.deepEqual(
      long.map(({ file, line, name, lines }) => `${file}:${line} ${name}: ${lines} lines`),
      [],
    );
  });

  it('planted long functions are reported by name and length: an arrow, a constructor, nested ones; 80 lines pass', () => {
    const tree = new Map([
      ['shared/arrow.ts', planted(81, 'export const handle = async () => {', '};')],
      ['bin/ctor.ts', `export class Poller {\n${planted(81, '  constructor() {', '  }')}}\n`],
      ['shared/fits.ts', planted(80, 'export function fits() {')],
      ['infra/nested.ts', `export function outer() {\n  return [1].map(${planted(81, '(item) => {', '});').trimEnd()}\n}\n`],
    ]);
    const found = functionsLongerThan(tree, MOST_FUNCTION_LINES).map(({ file, name, lines }) => `${file} ${name} ${lines}`);
    assert.deepEqual(found.sort(), [
      'bin/ctor.ts Poller constructor 81',
      'infra/nested.ts (callback of [1].map) 81',
      'infra/nested.ts outer 83',
      'shared/arrow.ts handle 81',
    ]);
  });

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
