/**
 * Where each function's code comes from: the package's own entries (this
 * repository's sources in a checkout, the compiled `dist/` in the installed
 * package) for the functions that run no tool, and the entries generated for
 * the deployment's tools (`tools-module.ts`) for the MCP function and the
 * worker; and the project whose lock file and `node_modules` esbuild bundles
 * them from.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  readTools,
  resolveSources,
  TOOL_FUNCTIONS,
  type ToolSummary,
  type ToolsSource,
  writeToolEntries,
  writeTracedEntries,
} from './tools-module.ts';

/** The package's root: the repository in a checkout, `dist/` in the installed package (this file is `<root>/infra/constructs/`). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** `.ts` when running from the sources, `.js` from the compiled package. */
const EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/**
 * Every function's module in the package, without its extension. The MCP
 * function and the worker are compositions the generated entries call with
 * the tools; the others are Lambda entries themselves. One list, so that
 * `test/bench/bundles.ts` measures exactly what is deployed.
 */
export const FUNCTION_MODULES = {
  mcp: 'functions/mcp/deployed',
  worker: 'functions/worker/deployed',
  deadLetter: 'functions/dlq/handler',
  sweeper: 'functions/sweeper/handler',
  stackSecret: 'functions/stack-secret/handler',
  console: 'functions/console/handler',
  callbacks: 'functions/callbacks/handler',
  workflowEvents: 'functions/workflow-events/handler',
  workflowReceiver: 'functions/workflow-receiver/handler',
} as const;

export type FunctionName = keyof typeof FUNCTION_MODULES;

/**
 * Each engine's runtime (its adapter and the runner of its tools): the
 * module and export the worker's entry imports when the deployment has tools
 * on that engine, and only then.
 */
const ENGINE_MODULES = {
  stepfunctions: { module: 'functions/lib/sfn', export: 'sfnWorkflows' },
} as const satisfies Record<string, { module: string; export: string }>;

type EngineKind = keyof typeof ENGINE_MODULES;

/** The engine a tool runs on, as its declaration names it (absent: Step Functions, whose declaration names an ASL file). */
function engineOf(tool: ToolSummary): EngineKind | undefined {
  if (tool.workflow === undefined) return undefined;
  const engine = tool.workflow.engine ?? 'stepfunctions';
  if (!Object.hasOwn(ENGINE_MODULES, engine))
    throw new Error(`Tool "${tool.name}" names engine "${engine}", which this package does not have`);
  return engine as EngineKind;
}
/** The module synthesis checks the tools with, in a child process (`tools-module.ts`). */
const CATALOGUE_MODULE = 'shared/runtime/catalogue';
/** The module synthesis checks the tools' header parameters with (`x-mcp-header`), likewise. */
const HEADERS_MODULE = 'shared/protocol/tool-headers';

/**
 * Every module of the package synthesis names by path: the functions' entries,
 * each engine's runtime and the catalogue checks. The package's build compiles
 * each into `dist/` (`bin/scripts/build.ts`), so an entry added here is packed
 * without a second list to keep.
 */
export const SYNTHESIS_MODULES: readonly string[] = [
  ...Object.values(FUNCTION_MODULES),
  ...Object.values(ENGINE_MODULES).map((engine) => engine.module),
  CATALOGUE_MODULE,
  HEADERS_MODULE,
];

/** The tracing adapter's entry, which the generated entries of a deployment with tracing on import. */
const TRACING_MODULE = 'shared/tracing/otel/index';

/**
 * The functions beside the MCP function and the worker that send spans when
 * tracing is on: each resumes tasks for an outside party (a callback's
 * completion, a workflow's question, progress or end), so its resume links
 * the delivery's span. Their traced entries wrap their own (`tracedEntryText`).
 */
export const TRACED_FUNCTIONS = ['callbacks', 'workflowEvents', 'workflowReceiver'] as const satisfies readonly FunctionName[];

/** A module of the package by its path from the package root, without extension (e.g. `functions/dlq/handler`). */
function packageModule(path: string): string {
  return join(PACKAGE_ROOT, `${path}${EXTENSION}`);
}

/** Lock files NodejsFunction knows, in the order it prefers them. */
const LOCK_FILES = ['pnpm-lock.yaml', 'yarn.lock', 'bun.lock', 'bun.lockb', 'package-lock.json'];

export interface FunctionCodeProps {
  /** The tools module(s) the MCP function and the worker serve. */
  readonly tools: ToolsSource | readonly ToolsSource[];
  /**
   * The project whose lock file and `node_modules` the bundles are built from; relative tools paths start here.
   * @default the nearest folder up from the working directory holding a lock file
   */
  readonly projectRoot?: string;
  /**
   * The entries of the MCP function, the worker and the {@link TRACED_FUNCTIONS} install the tracing adapter (`shared/tracing/otel/`); without, no bundle carries it.
   * @default `false`
   */
  readonly tracing?: boolean;
}

/** The functions' entries and where they are bundled from; reads the tools once (see `tools-module.ts`). */
export class FunctionCode {
  readonly projectRoot: string;
  readonly depsLockFilePath: string;
  /** What synthesis knows of the tools: names, where they may run, what they need. */
  readonly tools: readonly ToolSummary[];
  readonly #entries: Record<FunctionName, string>;

  constructor(props: FunctionCodeProps) {
    this.depsLockFilePath = lockFileOf(props.projectRoot);
    this.projectRoot = props.projectRoot === undefined ? dirname(this.depsLockFilePath) : resolve(props.projectRoot);
    const sources = resolveSources(props.tools, this.projectRoot);
    this.tools = readTools(sources, this.projectRoot, {
      catalogue: packageModule(CATALOGUE_MODULE),
      headerParams: packageModule(HEADERS_MODULE),
    });
    const deployed = Object.fromEntries(TOOL_FUNCTIONS.map((fn) => [fn, packageModule(FUNCTION_MODULES[fn])]));
    // The worker gets the engines its tools run on, and no other: a bundle without such tools has no engine's client.
    const kinds = [...new Set(this.tools.map(engineOf).filter((kind) => kind !== undefined))].sort();
    const engines = kinds.map((kind) => ({ module: packageModule(ENGINE_MODULES[kind].module), export: ENGINE_MODULES[kind].export }));
    const tracing = props.tracing ? packageModule(TRACING_MODULE) : undefined;
    const generated = writeToolEntries(
      this.projectRoot,
      deployed as Record<(typeof TOOL_FUNCTIONS)[number], string>,
      sources,
      engines,
      tracing,
    );
    this.#entries = {
      ...(Object.fromEntries(Object.entries(FUNCTION_MODULES).map(([name, path]) => [name, packageModule(path)])) as Record<
        FunctionName,
        string
      >),
      ...generated,
      ...(tracing
        ? writeTracedEntries(
            this.projectRoot,
            Object.fromEntries(TRACED_FUNCTIONS.map((name) => [name, packageModule(FUNCTION_MODULES[name])])) as Record<
              (typeof TRACED_FUNCTIONS)[number],
              string
            >,
            tracing,
          )
        : {}),
    };
  }

  /** The entry esbuild bundles for a function (it exports `handler`). */
  entry(name: FunctionName): string {
    return this.#entries[name];
  }
}

/** The project's lock file: in `projectRoot` when given, else the nearest one up from the working directory. */
function lockFileOf(projectRoot: string | undefined): string {
  const start = resolve(projectRoot ?? process.cwd());
  for (let dir = start; ; dir = dirname(dir)) {
    const found = LOCK_FILES.map((name) => join(dir, name)).find((path) => existsSync(path));
    if (found) return found;
    if (projectRoot !== undefined || dirname(dir) === dir) break;
  }
  throw new Error(
    `McpTasks: no lock file (${LOCK_FILES.join(', ')}) ${projectRoot === undefined ? `in ${start} or above` : `in ${start}`}: bundling needs one`,
  );
}
