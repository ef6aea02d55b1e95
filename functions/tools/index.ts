import type { ToolDefinition } from '#tool';
import type { Toolset } from '../../shared/config.ts';
import { validateCatalogue } from '../../shared/runtime/catalogue.ts';
import { approvalGate } from './approval-gate.ts';
import { batchProcess } from './batch-process.ts';
import { deployRelease } from './deploy-release.ts';
import { externalJob } from './external-job.ts';
import { intakeForm } from './intake-form.ts';
import { longComputation } from './long-computation.ts';

/** The product's own tools: what a default deployment serves. Add yours here. */
export const productTools: ToolDefinition[] = [batchProcess, approvalGate, externalJob, longComputation, intakeForm, deployRelease];

/**
 * A catalogue of tools, by name, validated: a duplicate name or an invalid
 * definition throws at start-up with a message naming the tool.
 */
export function catalogue(tools: readonly ToolDefinition[]): ReadonlyMap<string, ToolDefinition> {
  return validateCatalogue(tools);
}

/**
 * The catalogue a toolset serves: `product` the product's tools, `conformance`
 * the suite's fixtures, `all` both, `test` both and the durability fixtures
 * (local only). The fixture lists are the caller's to give (the local
 * stack's `bin/local/tools.ts`); a deployment bundles the modules its
 * toolset names instead (`infra/app.ts`), so a product bundle holds no fixture.
 */
export function toolsetCatalogue(
  toolset: Toolset,
  fixtures: { conformance: readonly ToolDefinition[]; testing?: readonly ToolDefinition[] },
): ReadonlyMap<string, ToolDefinition> {
  return catalogue([
    ...(toolset === 'conformance' ? [] : productTools),
    ...(toolset === 'product' ? [] : fixtures.conformance),
    ...(toolset === 'test' ? (fixtures.testing ?? []) : []),
  ]);
}
