/**
 * Tools modules for `tool-needs.test.ts`: the product's tools with one more
 * that declares needs, each list an export the construct is pointed at
 * (`{ module, export }`), as a project points it at its own tools module.
 */
import * as z from 'zod';
import type { ToolDefinition } from '#tool';
import { reportDigest } from '../../functions/fixtures/durability/configured.ts';
import { productTools } from '../../functions/tools/index.ts';

export const product: ToolDefinition[] = productTools;

/** The product's tools but its workflow tool (deploy_release). */
export const withoutWorkflows: ToolDefinition[] = productTools.filter((tool) => tool.workflow === undefined);

/** A task-only tool with a secret and an S3 read permission. */
export const withTaskTool: ToolDefinition[] = [...productTools, reportDigest];

/** The same needs on a tool that may run inline, in the MCP function. */
export const withInlineTool: ToolDefinition[] = [...productTools, { ...reportDigest, name: 'report_digest_inline', execution: 'optional' }];

const [permission] = reportDigest.needs!.permissions!;

/** Its wildcard resource declared without a reason. */
export const unexplained: ToolDefinition[] = [
  ...productTools,
  { ...reportDigest, needs: { ...reportDigest.needs, permissions: [{ actions: permission!.actions, resources: permission!.resources }] } },
];

/** Two tools of one name: the catalogue a function would refuse to start with. */
export const duplicated: ToolDefinition[] = [...productTools, productTools[0]!];

/** A parameter mirrored into a header under a name that is no header token: a tool clients would drop, which the function refuses to start with. */
export const badHeader: ToolDefinition[] = [
  ...productTools,
  { ...reportDigest, name: 'regional_digest', inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region Name' }) }) },
];
