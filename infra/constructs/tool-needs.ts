import { Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { TaskFunction } from './task-function.ts';
import type { ToolSummary } from './tools-module.ts';

/** Tools the worker may run: all but the `sync` ones. */
export function runsAsTask(tool: ToolSummary): boolean {
  return tool.execution !== 'sync';
}

/** Tools the MCP function may run: `sync` and `optional` ones inside the request, and any tool's `prepare`. */
export function runsInline(tool: ToolSummary): boolean {
  return tool.execution !== 'task' || tool.prepare;
}

/**
 * Grants a function exactly what these tools declare in `needs`: read access
 * to each setting's SSM parameter or Secrets Manager secret (the `grantRead`
 * of an imported parameter or secret), and each declared permission as one
 * statement. A declared wildcard resource or action is acknowledged to
 * cdk-nag with the tool's own `why`; without one it stays a finding and fails
 * synthesis.
 */
export function grantToolNeeds(fn: TaskFunction, tools: readonly ToolSummary[]): void {
  for (const tool of tools) {
    const settings = Object.entries(tool.needs?.settings ?? {});
    for (const [key, source] of settings) {
      const id = `Setting-${tool.name}-${key}`;
      if ('ssmParameter' in source) {
        // Imported by name: no resource is created, the grant names this parameter's ARN.
        StringParameter.fromStringParameterName(fn, id, source.ssmParameter).grantRead(fn.role);
      } else {
        Secret.fromSecretNameV2(fn, id, source.secretsManager).grantRead(fn.role);
      }
    }
    for (const permission of tool.needs?.permissions ?? []) {
      if (permission.actions.length === 0 || permission.resources.length === 0) {
        throw new Error(`Tool "${tool.name}" declares a permission without actions or resources`);
      }
      fn.role.addToPrincipalPolicy(new PolicyStatement({ actions: permission.actions, resources: permission.resources }));
      if (permission.why === undefined) continue;
      const wildcards = [
        ...permission.actions.filter((action) => action.includes('*')).map((action) => `Action::${action}`),
        ...permission.resources.filter((resource) => resource.includes('*')).map((resource) => `Resource::${resource}`),
      ];
      for (const finding of wildcards) {
        Validations.of(fn.role).acknowledge({
          id: `AwsSolutions-IAM5[${finding}]`,
          reason: `Declared by tool "${tool.name}": ${permission.why}`,
        });
      }
    }
  }
}
