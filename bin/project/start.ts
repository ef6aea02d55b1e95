/**
 * `mcp-tasks start` in a project that installed the package: the local stack
 * (the deployed handlers on dynalite and fauxqs, as this repository's
 * `npm start` runs them) serving the project's tools and nothing else. The
 * tools module is TypeScript loaded through tsx (the `mcp-tasks` launcher
 * registers it); the emulators are the project's devDependencies.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';

/** Where `start` and `dev` find the tools unless told: the module `init` writes. */
export const DEFAULT_TOOLS_MODULE = 'src/tools/index.ts';

export interface StartOptions {
  /** The tools module, from the working directory. */
  tools: string;
  /** The export listing the tools. */
  export: string;
}

/** The tools `module`'s export `name` lists, imported from the working directory. */
async function importTools(module: string, name: string): Promise<ToolDefinition[]> {
  const path = resolve(module);
  const loaded = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const tools = loaded[name];
  if (!Array.isArray(tools)) throw new Error(`${module} has no export "${name}" listing tools (export const ${name} = [...])`);
  return tools as ToolDefinition[];
}

/** Imports the project's tools and serves them until a signal stops the process. */
export async function startProject(options: StartOptions): Promise<void> {
  const tools = await importTools(options.tools, options.export);
  // Loaded only now: the emulators are needed by `start` alone, not by the rest of the CLI.
  const { serveLocally } = await import('../local/serve.ts');
  const [first] = tools;
  await serveLocally({
    tools,
    tryIt: (url) =>
      `Serving ${tools.map((tool) => tool.name).join(', ')} from ${options.tools}. Try it with the CLI:\n` +
      `  npx mcp-tasks --url ${url} tools\n` +
      (first ? `  npx mcp-tasks --url ${url} call ${first.name} '{…}'\n` : ''),
  });
}
