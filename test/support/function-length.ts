/**
 * How long each function-like node of a tree is, measured with the TypeScript
 * compiler: declarations, expressions, arrows, methods, constructors and
 * accessors, nested ones included (a nested function counts in its parent's
 * length too). A function's length is the lines from its first token to its
 * last, as a reader scrolls them.
 */
import ts from 'typescript';
import type { SourceTree } from './import-graph.ts';

/** A function-like node and its length in lines. */
export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}

function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return `${className(node.parent)} constructor`;
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

function className(node: ts.Node): string {
  return (ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name ? node.name.text : '(class)';
}

/** Every function-like node of `tree` longer than `most` lines, longest first. */
export function functionsLongerThan(tree: SourceTree, most: number): FunctionLength[] {
  const found: FunctionLength[] = [];
  for (const [file, text] of tree) {
    const kind = file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = last - first + 1;
        if (lines > most) found.push({ file, name: nameOf(node as ts.FunctionLikeDeclaration), line: first + 1, lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort((a, b) => b.lines - a.lines);
}
