/**
 * Exports nobody imports: each module's exported values (functions, classes,
 * constants; types are left out) that no other module of the tree imports
 * by name, statically, through a re-export, or by destructuring a dynamic
 * `import()`. And re-exports: names a module hands on from another, which
 * only an entry module (a wing's `index.ts`, a package `imports` target)
 * does. The import rules' companion (`import-graph.ts`).
 */
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import type { SourceTree } from './import-graph.ts';

/** The exported values of a module, by name (type-only exports left out). */
export function exportedValues(text: string, path: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const names: string[] = [];
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (!exported(statement)) continue;
    if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) {
      if (statement.name) names.push(statement.name.text);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations)
        if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
    } else if (ts.isEnumDeclaration(statement)) names.push(statement.name.text);
  }
  return names;
}

/** Every `(module, name)` a module imports: named imports, re-exports, and names destructured from a dynamic `import()`. */
export function importedNames(
  text: string,
  path: string,
  aliases: Readonly<Record<string, string>>,
): Array<{ from: string; name: string }> {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Array<{ from: string; name: string }> = [];
  const resolve = (specifier: string) =>
    aliases[specifier]?.replace(/^\.\//, '') ?? (specifier.startsWith('.') ? normalize(join(dirname(path), specifier)) : undefined);
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const from = resolve(node.moduleSpecifier.text);
      if (from) {
        if (ts.isImportDeclaration(node)) {
          const bindings = node.importClause?.namedBindings;
          if (bindings && ts.isNamedImports(bindings))
            for (const element of bindings.elements) found.push({ from, name: (element.propertyName ?? element.name).text });
          if (bindings && ts.isNamespaceImport(bindings)) found.push({ from, name: '*' });
        } else if (node.exportClause && ts.isNamedExports(node.exportClause)) {
          for (const element of node.exportClause.elements) found.push({ from, name: (element.propertyName ?? element.name).text });
        } else found.push({ from, name: '*' });
      }
    }
    // const { a, b: c } = await import('./x.ts')
    if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) {
      let call: ts.Expression = node.initializer;
      if (ts.isAwaitExpression(call)) call = call.expression;
      if (ts.isCallExpression(call) && call.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [argument] = call.arguments;
        const from = argument && ts.isStringLiteral(argument) ? resolve(argument.text) : undefined;
        if (from)
          for (const element of node.name.elements) {
            const name = element.propertyName ?? element.name;
            if (ts.isIdentifier(name)) found.push({ from, name: name.text });
          }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The exported values of `checked` modules that no module of `tree` imports: `path name` each, in path order. */
export function unusedExports(tree: SourceTree, checked: (path: string) => boolean, aliases: Readonly<Record<string, string>>): string[] {
  const used = new Set<string>();
  for (const [path, text] of tree) for (const { from, name } of importedNames(text, path, aliases)) used.add(`${from} ${name}`);
  const unused: string[] = [];
  for (const [path, text] of [...tree].sort(([a], [b]) => a.localeCompare(b))) {
    if (!checked(path)) continue;
    if (used.has(`${path} *`)) continue;
    for (const name of exportedValues(text, path)) if (!used.has(`${path} ${name}`)) unused.push(`${path} ${name}`);
  }
  return unused;
}

/**
 * The names a module exports from another module: `export { a } from`,
 * `export * from`, and `export { a }` of a name it imported (types included):
 * `name from specifier` each.
 */
export function reExports(text: string, path: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const imported = new Map<string, string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const clause = statement.importClause;
    const specifier = statement.moduleSpecifier.text;
    if (clause?.name) imported.set(clause.name.text, specifier);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) imported.set(element.name.text, specifier);
    if (bindings && ts.isNamespaceImport(bindings)) imported.set(bindings.name.text, specifier);
  }
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const from = statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier) ? statement.moduleSpecifier.text : undefined;
    if (!statement.exportClause || !ts.isNamedExports(statement.exportClause)) {
      if (from) found.push(`* from ${from}`);
      continue;
    }
    for (const element of statement.exportClause.elements) {
      const local = (element.propertyName ?? element.name).text;
      const origin = from ?? imported.get(local);
      if (origin) found.push(`${element.name.text} from ${origin}`);
    }
  }
  return found;
}
