/**
 * The lane's checks that name a cause, shared by its run and by the tests
 * that plant faults: each returns the problems it found, one sentence each.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { conformanceTools } from '../../functions/fixtures/conformance.ts';
import { productTools } from '../../functions/tools/index.ts';
import { SETTINGS } from '../../shared/config.ts';
import { resultOf, rpc } from '../support/wire.ts';
import { type Assembly, functionsOf, VARIANTS, type VariantName } from './assembly.ts';
import type { Deployment } from './deployment.ts';

/** Variables the template gives a function that no setting reads (a renamed or misspelt variable), and functions that failed to start. */
export function environmentProblems(assembly: Assembly, deployment?: Deployment): string[] {
  const known = new Set([...Object.values(SETTINGS).map((setting) => setting.env), 'NODE_OPTIONS']);
  const problems: string[] = [];
  for (const fn of Object.values(functionsOf(assembly))) {
    const names = Object.keys(fn.properties['Environment']?.['Variables'] ?? {});
    for (const name of names.filter((variable) => !known.has(variable))) {
      problems.push(`${fn.role} (${fn.logicalId}) is given ${name}, which no setting of shared/config.ts reads`);
    }
  }
  for (const [role, fn] of Object.entries(deployment?.functions ?? {})) {
    if (fn.initError) problems.push(`${role} failed to start from its bundle: ${fn.initError.errorType}: ${fn.initError.errorMessage}`);
  }
  return problems;
}

/** Tools the toolset declares (in the sources) that the bundled MCP function does not serve, or serves without declaring. */
export async function servedToolProblems(deployment: Deployment): Promise<string[]> {
  const context: Record<string, unknown> = VARIANTS[deployment.assembly.name as VariantName]?.context ?? {};
  const toolset = (context['toolset'] ?? 'product') as 'product' | 'conformance' | 'all';
  const served = (resultOf(await rpc(deployment.url, 'tools/list', {}))['tools'] as Array<{ name: string }>).map((tool) => tool.name);
  const lists = { product: productTools, conformance: conformanceTools, all: [...productTools, ...conformanceTools] };
  const declared = lists[toolset].map((tool) => tool.name);
  return [
    ...declared
      .filter((name) => !served.includes(name))
      .map((name) => `The bundled MCP function does not serve ${name}, which the ${toolset} toolset declares: the bundle dropped it`),
    ...served
      .filter((name) => !declared.includes(name))
      .map((name) => `The bundled MCP function serves ${name}, which the ${toolset} toolset does not declare`),
  ];
}

/** One finding of cfn-lint's JSON output. */
export interface CfnLintMatch {
  Rule: { Id: string };
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Location: { Path: Array<string | number> };
  Filename: string;
}

/** Runs cfn-lint over templates; throws when it is not installed (the lane needs it) or fails itself. */
export function cfnLint(files: string[]): CfnLintMatch[] {
  for (const file of files) if (!existsSync(file)) throw new Error(`No template at ${file}`);
  const run = spawnSync('cfn-lint', ['--format', 'json', ...files], { encoding: 'utf8' });
  if (run.error) throw new Error(`cfn-lint could not be run (${run.error.message}): install it (pip install cfn-lint); the lane needs it`);
  // Exit codes are bit flags: 2 errors, 4 warnings, 8 informational; 1 is a failure of cfn-lint itself.
  if (run.status === 1) throw new Error(`cfn-lint failed: ${run.stderr}`);
  return JSON.parse(run.stdout || '[]') as CfnLintMatch[];
}
