/**
 * The catalogue's `x-mcp-header` declarations, read from each tool's input
 * schema as `tools/list` shows it and checked against the protocol's rules
 * (`param-headers.ts`). The MCP function reads them when its endpoint is
 * built, and synthesis when it reads the tools (`infra/constructs/tools-module.ts`);
 * the worker, which serves no `tools/list`, never does.
 */
import { CatalogueError } from '../runtime/catalogue.ts';
import { inputJsonSchema } from '../runtime/json-schema.ts';
import type { ToolDefinition } from '../runtime/tool.ts';
import { type HeaderParam, scanHeaderParams } from './param-headers.ts';

/**
 * Each tool's header parameters, by tool name (tools that declare none are
 * left out). A declaration that breaks a rule throws {@link CatalogueError}
 * naming the tool, at start and at synthesis: clients would silently drop the
 * tool otherwise.
 */
export function catalogueHeaderParams(tools: Iterable<ToolDefinition>): ReadonlyMap<string, readonly HeaderParam[]> {
  const byTool = new Map<string, readonly HeaderParam[]>();
  for (const tool of tools) {
    const scan = scanHeaderParams(inputJsonSchema(tool.inputSchema));
    if (!scan.ok) throw new CatalogueError(`Tool "${tool.name}": ${scan.problem}`);
    if (scan.params.length > 0) byTool.set(tool.name, scan.params);
  }
  return byTool;
}
