/**
 * How a deployment's tools reach its functions: one mechanism, the Lambda
 * entries generated at synthesis. For the two functions that run tools (the
 * MCP function and the worker) {@link writeToolEntries} writes a small
 * module importing the tools module(s) and the function's composition
 * (`functions/<fn>/deployed.ts`) and calling it with the tools; esbuild
 * bundles that entry, so a bundle holds the deployment's tools and nothing
 * else. What the tools need (settings, permissions, where they may run) is
 * read at synthesis by {@link readTools}, which imports the same modules in a
 * child process (tsx loads TypeScript there), so the CDK app itself may run
 * under any loader.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Execution, ToolNeeds } from '../../shared/runtime/tool.ts';

/**
 * A module of tools: a path (from the project root, or absolute) whose
 * `tools` export lists them, or the module and the name of the export.
 */
export type ToolsSource = string | { readonly module: string; readonly export: string };

/** What synthesis needs of a tool: where it may run and what it needs granted. */
export interface ToolSummary {
  readonly name: string;
  readonly execution: Execution;
  /** Whether it has a `prepare` (which runs in the MCP function). */
  readonly prepare: boolean;
  readonly needs?: ToolNeeds;
  /** A workflow tool's workflow: the engine it names (absent: Step Functions), its name and its ASL file (from the project root). */
  readonly workflow?: { readonly engine?: string; readonly name: string; readonly definition: string };
  /** The `Mcp-Param-*` headers its `x-mcp-header` parameters are sent in (browsers must be allowed to send them). */
  readonly paramHeaders?: readonly string[];
}

/** A {@link ToolsSource} resolved: the module's absolute path and the export's name. */
interface ResolvedSource {
  readonly path: string;
  readonly name: string;
}

/** The sources as absolute paths and export names. */
export function resolveSources(sources: ToolsSource | readonly ToolsSource[], projectRoot: string): ResolvedSource[] {
  const list = typeof sources === 'string' || !Array.isArray(sources) ? [sources as ToolsSource] : sources;
  if (list.length === 0) throw new Error('McpTasks: "tools" names no module');
  return list.map((source) => {
    const module = typeof source === 'string' ? source : source.module;
    const name = typeof source === 'string' ? 'tools' : source.export;
    if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`McpTasks: "${name}" is not an export name`);
    return { path: isAbsolute(module) ? module : resolve(projectRoot, module), name };
  });
}

/** An engine's module for the worker's entry: its absolute path and the export holding its runtime (adapter and runner). */
export interface EngineEntry {
  readonly module: string;
  readonly export: string;
}

/** The functions whose entries are generated: those that run tools. */
export const TOOL_FUNCTIONS = ['mcp', 'worker'] as const;

export type ToolFunction = (typeof TOOL_FUNCTIONS)[number];

/**
 * The text of a generated entry: imports each source's export and the
 * function's composition (`deployed`, the absolute path of
 * `functions/<fn>/deployed`), by paths relative to `dir` (where the entry is
 * written), so the entry, and the bundle's source map, are the same on every
 * machine. `engines` (the worker's: one per engine the tools run on, e.g.
 * `functions/lib/sfn`'s `sfnWorkflows`) hand the worker each engine's adapter
 * and runner; an engine no tool runs on is in no bundle.
 */
export function entryText(
  fn: ToolFunction,
  deployed: string,
  sources: readonly ResolvedSource[],
  dir: string,
  engines: readonly EngineEntry[] = [],
  tracing?: string,
): string {
  const specifier = (path: string) => {
    const relativePath = relative(dir, path).split(sep).join('/');
    return relativePath.startsWith('.') ? relativePath : `./${relativePath}`;
  };
  const lines = [
    `// Generated at synthesis by McpTasks: the ${fn === 'mcp' ? 'MCP function' : 'worker'} with the tools below.`,
    `import { deployedHandler } from ${JSON.stringify(specifier(deployed))};`,
    ...sources.map((source, index) => `import { ${source.name} as tools${index} } from ${JSON.stringify(specifier(source.path))};`),
    ...engines.map((engine, index) => `import { ${engine.export} as engine${index} } from ${JSON.stringify(specifier(engine.module))};`),
    // Tracing on: the adapter is installed before the handler is composed, and each invocation's spans are sent before it returns.
    ...(tracing ? [`import { deployedTracing } from ${JSON.stringify(specifier(tracing))};`, 'const tracing = deployedTracing();'] : []),
    `export const handler = ${tracing ? 'tracing.flushing(' : ''}deployedHandler([${sources.map((_, index) => `...tools${index}`).join(', ')}]${
      engines.length ? `, [${engines.map((_, index) => `engine${index}`).join(', ')}]` : ''
    })${tracing ? ')' : ''};`,
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the generated entries under `<projectRoot>/node_modules/.cache/mcp-tasks/`
 * (NodejsFunction bundles entries inside the project root only), in a folder
 * named by their content: synthesizing twice, or two processes at once, write
 * the same files. Returns each entry's path. `engines`: see {@link entryText}.
 */
export function writeToolEntries(
  projectRoot: string,
  deployed: Record<ToolFunction, string>,
  sources: readonly ResolvedSource[],
  engines: readonly EngineEntry[] = [],
  tracing?: string,
): Record<ToolFunction, string> {
  const base = join(projectRoot, 'node_modules', '.cache', 'mcp-tasks');
  // Named by what the entries import, relative to the project: the same folder on every machine.
  const fromRoot = (path: string) => relative(projectRoot, path).split(sep).join('/');
  const named = {
    deployed: TOOL_FUNCTIONS.map((fn) => fromRoot(deployed[fn])),
    sources: sources.map((s) => [fromRoot(s.path), s.name]),
    ...(engines.length ? { engines: engines.map((engine) => [fromRoot(engine.module), engine.export]) } : {}),
    ...(tracing ? { tracing: fromRoot(tracing) } : {}),
  };
  const dir = join(base, createHash('sha256').update(JSON.stringify(named)).digest('hex').slice(0, 16));
  mkdirSync(dir, { recursive: true });
  const entries = {} as Record<ToolFunction, string>;
  for (const fn of TOOL_FUNCTIONS) {
    const path = join(dir, `${fn}.mjs`);
    // Written aside, then renamed: a concurrent synthesis never reads half a file.
    const aside = `${path}.${process.pid}.tmp`;
    writeFileSync(aside, entryText(fn, deployed[fn], sources, dir, fn === 'worker' ? engines : [], tracing));
    renameSync(aside, path);
    entries[fn] = path;
  }
  return entries;
}

/**
 * The text of a traced entry, for a function that runs no tool (its module
 * `handler`, absolute, exports the composed handler): installs the tracing
 * adapter (`tracing`, absolute) and wraps the handler so that each
 * invocation's spans are sent before it returns. Imports are hoisted: the
 * handler's module composes its deps before `deployedTracing()` runs, which
 * is sound because a composition given no tracing reads the installed one at
 * call time (`tracingOf`), never at composition.
 */
export function tracedEntryText(name: string, handler: string, dir: string, tracing: string): string {
  const specifier = (path: string) => {
    const relativePath = relative(dir, path).split(sep).join('/');
    return relativePath.startsWith('.') ? relativePath : `./${relativePath}`;
  };
  return [
    `// Generated at synthesis by McpTasks: the ${name} function, traced.`,
    `import { deployedTracing } from ${JSON.stringify(specifier(tracing))};`,
    `import { handler as composed } from ${JSON.stringify(specifier(handler))};`,
    'const tracing = deployedTracing();',
    'export const handler = tracing.flushing(composed);',
    '',
  ].join('\n');
}

/**
 * Writes the traced entries of the functions that run no tool (`handlers`:
 * each function's name and module, absolute) beside the tools' entries (see
 * {@link writeToolEntries}); a deployment with tracing off writes none.
 * Returns each entry's path.
 */
export function writeTracedEntries<N extends string>(projectRoot: string, handlers: Record<N, string>, tracing: string): Record<N, string> {
  const fromRoot = (path: string) => relative(projectRoot, path).split(sep).join('/');
  const named = { traced: Object.entries<string>(handlers).map(([name, path]) => [name, fromRoot(path)]), tracing: fromRoot(tracing) };
  const dir = join(
    projectRoot,
    'node_modules',
    '.cache',
    'mcp-tasks',
    createHash('sha256').update(JSON.stringify(named)).digest('hex').slice(0, 16),
  );
  mkdirSync(dir, { recursive: true });
  const entries = {} as Record<N, string>;
  for (const [name, handler] of Object.entries<string>(handlers)) {
    const path = join(dir, `${name}.mjs`);
    const aside = `${path}.${process.pid}.tmp`;
    writeFileSync(aside, tracedEntryText(name, handler, dir, tracing));
    renameSync(aside, path);
    entries[name as N] = path;
  }
  return entries;
}

/**
 * The child's program: import each source, check the catalogue as the MCP
 * function does at start (the definitions, then the header parameters), print
 * what synthesis needs.
 */
const READER = `
const { sources, catalogue, headerParams } = JSON.parse(process.env.MCP_TASKS_TOOL_SOURCES);
const tools = [];
for (const source of sources) {
  const module = await import(source.url);
  const list = module[source.name];
  if (!Array.isArray(list)) throw new Error(source.path + ' has no export "' + source.name + '" listing tools');
  tools.push(...list);
}
(await import(catalogue)).validateCatalogue(tools);
const declared = (await import(headerParams)).catalogueHeaderParams(tools);
process.stdout.write(JSON.stringify(tools.map((tool) => ({
  name: tool.name,
  execution: tool.execution,
  prepare: tool.prepare !== undefined,
  ...(tool.needs ? { needs: tool.needs } : {}),
  ...(tool.workflow ? { workflow: { ...(tool.workflow.engine ? { engine: tool.workflow.engine } : {}), name: tool.workflow.name, definition: tool.workflow.definition } } : {}),
  ...(declared.has(tool.name) ? { paramHeaders: declared.get(tool.name).map((param) => 'Mcp-Param-' + param.name) } : {}),
}))));
`;

const summaries = new Map<string, ToolSummary[]>();

/**
 * The tools of `sources`, read by importing them in a child process with
 * tsx's loader (so a TypeScript tools module needs no build), checked as a
 * deployed function checks its catalogue (a duplicate name, an invalid
 * definition or an `x-mcp-header` declaration clients would drop the tool for
 * fails synthesis, naming the tool). `checks`: the modules of those checks
 * (`shared/runtime/catalogue`, `shared/protocol/tool-headers`). Cached per
 * process, by the sources and their modification times.
 */
export function readTools(
  sources: readonly ResolvedSource[],
  projectRoot: string,
  checks: { readonly catalogue: string; readonly headerParams: string },
): ToolSummary[] {
  const key = JSON.stringify(sources.map((source) => [source.path, source.name, mtimeOf(source.path)]));
  const cached = summaries.get(key);
  if (cached) return cached;
  let output: string;
  try {
    output = execFileSync(process.execPath, ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', READER], {
      cwd: projectRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        MCP_TASKS_TOOL_SOURCES: JSON.stringify({
          sources: sources.map((source) => ({ ...source, url: pathToFileURL(source.path).href })),
          catalogue: pathToFileURL(checks.catalogue).href,
          headerParams: pathToFileURL(checks.headerParams).href,
        }),
      },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    const reason = /^\w*Error: .*$/m.exec(stderr)?.[0] ?? stderr.split('\n').slice(-3).join('\n');
    throw new Error(`McpTasks: reading the tools of ${sources.map((source) => source.path).join(', ')} failed: ${reason}`);
  }
  const tools = JSON.parse(output) as ToolSummary[];
  summaries.set(key, tools);
  return tools;
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch (error) {
    throw new Error(`McpTasks: no tools module at ${path}`, { cause: error });
  }
}
