import type { ToolDefinition } from '#tool';
import { validateCatalogue } from '../../shared/runtime/catalogue.ts';
import { approvalGate } from './approval-gate.ts';
import { batchProcess } from './batch-process.ts';
import { externalJob } from './external-job.ts';
import { intakeForm } from './intake-form.ts';
import { longComputation } from './long-computation.ts';

/** The product's own tools: what a default deployment serves. Add yours here. */
export const productTools: ToolDefinition[] = [batchProcess, approvalGate, externalJob, longComputation, intakeForm];

/**
 * A catalogue of tools, by name, validated: a duplicate name or an invalid
 * definition throws at start-up with a message naming the tool.
 */
export function catalogue(tools: readonly ToolDefinition[]): ReadonlyMap<string, ToolDefinition> {
  return validateCatalogue(tools);
}
