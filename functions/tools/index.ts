import type { Toolset } from '../../shared/config.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { conformanceTools } from './conformance/fixtures.ts';
import { approvalGate } from './examples/approval-gate.ts';
import { batchProcess } from './examples/batch-process.ts';
import { externalJob } from './examples/external-job.ts';
import { testingTools } from './testing/fixtures.ts';

/** The product's own tools. */
export const productTools: ToolDefinition[] = [batchProcess, approvalGate, externalJob];

/** The tools served for a toolset, by name. */
export function toolCatalogue(toolset: Toolset): ReadonlyMap<string, ToolDefinition> {
  const tools = [
    ...(toolset === 'conformance' ? [] : productTools),
    ...(toolset === 'product' ? [] : conformanceTools),
    ...(toolset === 'test' ? testingTools : []),
  ];
  return new Map(tools.map((tool) => [tool.name, tool]));
}
