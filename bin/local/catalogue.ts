import type { Toolset } from '../../shared/config.ts';
import { validateCatalogue } from '../../shared/runtime/catalogue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';

/** This module's sibling holding the repository's toolsets (`tools.ts`), by a specifier the package build does not follow. */
const REPOSITORY_TOOLSETS = new URL('./tools.ts', import.meta.url).href;

/**
 * The tools the local stack serves: the ones given (a project's, from
 * `mcp-tasks start` or the test kit), checked as a deployed function checks
 * them; else the catalogue `TASKS_TOOLSET` names. Those toolsets are this
 * repository's demo tools and fixtures: they are imported by a computed
 * specifier, which the package's build does not follow, so the installed
 * package carries none of them.
 */
export async function localCatalogue(
  tools: readonly ToolDefinition[] | undefined,
  toolset: Toolset,
): Promise<ReadonlyMap<string, ToolDefinition>> {
  if (tools) return validateCatalogue(tools);
  let module: { localTools: (toolset: Toolset) => ReadonlyMap<string, ToolDefinition> };
  try {
    module = (await import(REPOSITORY_TOOLSETS)) as typeof module;
  } catch (error) {
    throw new Error(
      "No tools given: the TASKS_TOOLSET catalogues are the repository checkout's; start the stack with the project's tools",
      {
        cause: error,
      },
    );
  }
  return module.localTools(toolset);
}
