import { conformanceTools } from '../../functions/fixtures/conformance.ts';
import { testingTools } from '../../functions/fixtures/durability/fixtures.ts';
import { toolsetCatalogue } from '../../functions/tools/index.ts';
import type { Toolset } from '../../shared/config.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';

/**
 * The catalogue the local stack serves: a deployed toolset (`product`,
 * `conformance`, `all`), or `test`, which adds the durability fixtures the
 * integration tests drive (they never ship in a function bundle).
 */
export function localTools(toolset: Toolset): ReadonlyMap<string, ToolDefinition> {
  return toolsetCatalogue(toolset, { conformance: conformanceTools, testing: testingTools });
}
