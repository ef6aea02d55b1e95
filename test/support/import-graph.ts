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
 *   never imports the tests or the test kit.
 * - `kit/` runs in tool authors' tests (the package's test kit): it may read
 *   `shared/`, `functions/` and the local stack (`bin/`), never the CDK app or
 *   the tests; only tests and examples import it.
 * - Inside `shared/`, layers point down: the store (`tasks/`), the queue
 *   (`queue/`), authentication (`auth/`) and the lifecycle events (`events/`)
 *   never import the protocol (`protocol/`), the task actions (`actions/`) or
 *   the runtime (`runtime/`); what both sides use (`delay.ts`, `log.ts`…)
 *   sits at the top of `shared/`.
 * - A store adapter is a wing (`shared/tasks/dynamodb/`, `shared/tasks/memory/`):
 *   from outside it, only its entry (`index.ts`) is imported. The adapter's own
 *   tests (`test/<lane>/tasks/dynamodb/`, `…/memory/`) may reach inside. The
 *   local Step Functions emulator (`bin/local/stepfunctions/`) is a wing too.
 * - `test/` and `examples/` may import anything else.
 *
 * And no module imports itself through others (no import circle, type-only
 * imports included): {@link importCycles}.
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
  'aws-local-stepfunctions',
  'axe-core',
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
    for (const specifier of importsOf(text)) {
      const alias = aliases[specifier];
      const local = alias ?? (specifier.startsWith('.') ? normalize(join(dirname(file), specifier)) : undefined);
      const target = local === undefined ? undefined : normalize(local).replace(/^\.\//, '');
      // The package's own manifest (its version) may be read anywhere.
      if (target === 'package.json') continue;
      for (const rule of [folderRule(file, specifier, target), wingRule(file, target), engineRule(file, target)]) {
        if (rule !== undefined) violations.push({ file, imports: specifier, rule });
      }
    }
  }
  return violations;
}

/** The audience rules between top-level folders and the layers of `shared/`; `target` is the local file imported, if any. */
function folderRule(file: string, specifier: string, target: string | undefined): string | undefined {
  const from = folderOf(file);
  const to = target === undefined ? undefined : folderOf(target);
  if (from === 'functions' || from === 'shared') {
    if (to === undefined) {
      const forbidden = !specifier.startsWith('node:') && (NOT_IN_A_FUNCTION as readonly string[]).includes(packageName(specifier));
      return forbidden ? 'a Lambda-bundled module imports a package that is not for functions' : undefined;
    }
    if (to !== 'functions' && to !== 'shared') return `a Lambda-bundled module imports ${to}/`;
    if (from === 'shared' && to === 'functions') return 'the core (shared/) imports a function';
    const [, fromLayer] = file.split('/');
    const [, toLayer] = (target ?? '').split('/');
    if (from === 'shared' && LOWER_LAYERS.includes(fromLayer ?? '') && UPPER_LAYERS.includes(toLayer ?? ''))
      return `shared/${fromLayer}/ imports shared/${toLayer}/, a layer above it`;
    return undefined;
  }
  if (from === 'infra' && (to === 'bin' || to === 'test' || to === 'kit')) return `the CDK app imports ${to}/`;
  if (from === 'bin' && to === 'test') return 'a terminal module imports the tests';
  if (from === 'bin' && to === 'kit') return 'a terminal module imports the test kit';
  if (from === 'kit' && (to === 'infra' || to === 'test')) return `the test kit imports ${to}/`;
  return undefined;
}

/**
 * Adding an engine touches no file of another: an engine's files import no
 * other engine's, and the port (`shared/engines/*.ts`) imports no engine's.
 */
function engineRule(file: string, target: string | undefined): string | undefined {
  const to = target === undefined ? undefined : engineOf(target);
  if (to === undefined || file.startsWith('test/')) return undefined;
  const from = engineOf(file);
  if (from !== undefined && from !== to) return `the ${from} engine imports the ${to} engine`;
  if (from === undefined && file.startsWith(ENGINE_PORT)) return `the engine port imports the ${to} engine`;
  return undefined;
}

/** From outside a wing, only its `index.ts`; the wing's own tests may reach inside. */
function wingRule(file: string, target: string | undefined): string | undefined {
  const wing = target === undefined ? undefined : wingOf(target);
  if (wing === undefined || wing === wingOf(file) || ownTest(file, wing) || target === `${wing}index.ts`) return undefined;
  return `imports a file inside the ${wing} wing, whose entry is its index.ts`;
}

/** The wings: adapters whose files are reached from outside through their `index.ts` only. */
export const WINGS = [
  'shared/tasks/dynamodb/',
  'shared/tasks/memory/',
  'bin/local/stepfunctions/',
  'shared/engines/stepfunctions/',
  'shared/tracing/otel/',
  'shared/engines/durable/',
  'shared/engines/github/',
] as const;

function wingOf(path: string): string | undefined {
  return WINGS.find((wing) => path.startsWith(wing));
}

/**
 * The engine port's folder: its own modules sit directly in it, each
 * engine's wing in a folder of its own (`shared/engines/<engine>/`). An
 * engine's parts elsewhere (its local emulator, its construct part) are
 * named here by the engine they belong to.
 */
const ENGINE_PORT = 'shared/engines/';
const ENGINE_PARTS: Readonly<Record<string, string>> = { 'bin/local/stepfunctions/': 'stepfunctions' };

/** The engine a file belongs to (a wing of the port, or an engine's part elsewhere), if any. */
function engineOf(path: string): string | undefined {
  if (path.startsWith(ENGINE_PORT)) {
    const [engine, ...rest] = path.slice(ENGINE_PORT.length).split('/');
    return rest.length > 0 ? engine : undefined;
  }
  return Object.entries(ENGINE_PARTS).find(([folder]) => path.startsWith(folder))?.[1];
}

/** Whether `file` is one of the wing's own tests (`test/<lane>/tasks/dynamodb/…`), which may reach inside it. */
function ownTest(file: string, wing: string): boolean {
  const [lane, ...rest] = file.split('/').slice(1);
  return file.startsWith('test/') && lane !== undefined && `shared/${rest.join('/')}`.startsWith(wing);
}

/** The layers of `shared/` that the protocol, the task actions and the runtime build on. */
const LOWER_LAYERS = ['tasks', 'queue', 'auth', 'events'];
const UPPER_LAYERS = ['protocol', 'actions', 'runtime'];

/**
 * The import circles among the tree's modules (relative imports and the
 * package's `imports` aliases, type-only ones included): each as the list of
 * files around it, from its first file in path order. Tarjan's strongly
 * connected components.
 */
export function importCycles(tree: SourceTree, aliases: Readonly<Record<string, string>>): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, text] of tree) {
    const targets = importsOf(text)
      .map(
        (specifier) =>
          aliases[specifier]?.replace(/^\.\//, '') ?? (specifier.startsWith('.') ? normalize(join(dirname(file), specifier)) : undefined),
      )
      .filter((target): target is string => target !== undefined && tree.has(target));
    edges.set(file, targets);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (edges.get(file) ?? []).includes(file)) cycles.push(component.sort());
    }
  };
  for (const file of [...tree.keys()].sort()) if (!index.has(file)) visit(file);
  return cycles;
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
