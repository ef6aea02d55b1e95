import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { conformanceTools } from '../fixtures/conformance.ts';
import { catalogue, productTools } from '../tools/index.ts';

/**
 * The catalogue a deployed function serves, chosen by `TASKS_TOOLSET`
 * (`product`, `conformance` or `all`; `loadConfig` has validated it).
 *
 * The stack bundles each function with `process.env.TASKS_TOOLSET` replaced
 * by its value (esbuild `define`), so these comparisons are decided at build
 * time and a bundle carries only the tools it serves: a product bundle holds
 * no conformance fixture (`sideEffects: false` in `package.json` lets esbuild
 * drop a module nothing references). The durability fixtures of the local
 * stack's `test` toolset are not reachable from here at all.
 */
export function servedTools(): ReadonlyMap<string, ToolDefinition> {
  if (process.env.TASKS_TOOLSET === 'conformance') return catalogue(conformanceTools);
  if (process.env.TASKS_TOOLSET === 'all') return catalogue([...productTools, ...conformanceTools]);
  return catalogue(productTools);
}
