import type { Toolset } from '../../shared/config.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { conformanceTools } from '../fixtures/conformance.ts';
import { toolsetCatalogue } from '../tools/index.ts';

/**
 * The catalogue a deployed function serves, chosen by `TASKS_TOOLSET`
 * (`product`, `conformance` or `all`; `loadConfig` has validated it).
 *
 * The stack bundles each function with `process.env.TASKS_TOOLSET` replaced
 * by its value (esbuild `define`), so the comparison below is decided at
 * build time and a product bundle references no conformance fixture
 * (`sideEffects: false` in `package.json` lets esbuild drop a module nothing
 * references). The durability fixtures of the local stack's `test` toolset
 * are not reachable from here at all.
 */
export function servedTools(): ReadonlyMap<string, ToolDefinition> {
  const toolset = (process.env.TASKS_TOOLSET || 'product') as Toolset;
  const fixtures = process.env.TASKS_TOOLSET === 'conformance' || process.env.TASKS_TOOLSET === 'all' ? conformanceTools : [];
  return toolsetCatalogue(toolset, { conformance: fixtures });
}
