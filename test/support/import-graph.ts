/**
 * The import rules of the tree: each top-level folder has one audience, and
 * imports may only point the ways these rules allow.
 *
 * - `functions/` and `shared/` run inside a Lambda bundle: they import only
 *   each other (the core `shared/` never imports `functions/`) and packages a
 *   function may carry, never the terminal (`bin/`), the CDK app (`infra/`) or
 *   the tests.
 * - `infra/` runs at `cdk synth`: it may read `functions/` and `shared/` (entries,
 *   settings, tool needs), never the terminal or the tests.
 * - `bin/` runs in a terminal (CLI, operator commands, `npm start`, scripts): it
 *   never imports the tests.
 * - `test/` and `examples/` may import anything.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/** Packages that must never reach a Lambda bundle: terminal, local-stack, CDK and test tooling. */
export const NOT_IN_A_FUNCTION = [
  '@inquirer/prompts',
  '@lydell/node-pty',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/conformance',
  '@modelcontextprotocol/ext-tasks',
  '@modelcontextprotocol/inspector',
  '@modelcontextprotocol/sdk',
  'aws-cdk',
  'aws-cdk-lib',
  'cdk-nag',
  'commander',
  'constructs',
  'dynalite',
  'esbuild',
  'fast-check',
  'fauxqs',
  'oidc-provider',
  'ora',
  'playwright-core',
  'tsx',
] as const;

export interface Violation {
  file: string;
  imports: string;
  rule: string;
}

/** A tree to check: each source file's path (from the root) and its text. */
export type SourceTree = ReadonlyMap<string, string>;

/** The specifiers a module imports or re-exports, static and dynamic (parsed, so text in strings does not count). */
export function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

function folderOf(path: string): string {
  return path.split('/')[0] ?? path;
}

/**
 * Checks every module of the tree against the rules above. `aliases` maps the
 * package's `imports` (`#tool`) to their targets, as Node and esbuild resolve them.
 */
export function checkImports(tree: SourceTree, aliases: Readonly<Record<string, string>>): Violation[] {
  const violations: Violation[] = [];
  for (const [file, text] of tree) {
    const from = folderOf(file);
    for (const specifier of importsOf(text)) {
      const alias = aliases[specifier];
      const local = alias ?? (specifier.startsWith('.') ? normalize(join(dirname(file), specifier)) : undefined);
      const to = local === undefined ? undefined : folderOf(normalize(local).replace(/^\.\//, ''));
      const report = (rule: string) => violations.push({ file, imports: specifier, rule });
      if (from === 'functions' || from === 'shared') {
        if (to === undefined) {
          if (specifier.startsWith('node:')) continue;
          if ((NOT_IN_A_FUNCTION as readonly string[]).includes(packageName(specifier)))
            report('a Lambda-bundled module imports a package that is not for functions');
        } else if (to !== 'functions' && to !== 'shared') report(`a Lambda-bundled module imports ${to}/`);
        else if (from === 'shared' && to === 'functions') report('the core (shared/) imports a function');
      } else if (from === 'infra' && (to === 'bin' || to === 'test')) {
        report(`the CDK app imports ${to}/`);
      } else if (from === 'bin' && to === 'test') {
        report('a terminal module imports the tests');
      }
    }
  }
  return violations;
}

const SOURCE = /\.(?:ts|tsx|js|mjs)$/;

/** The project's sources under the given folders, read from disk. */
export function readTree(root: string, folders: readonly string[]): Map<string, string> {
  const tree = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (SOURCE.test(entry.name)) tree.set(relative(root, path), readFileSync(path, 'utf8'));
    }
  };
  for (const folder of folders) walk(join(root, folder));
  return tree;
}
