/**
 * The cloud assemblies the deployment lane checks: one per context
 * combination, synthesized the way `cdk synth` does it (`createApp`, the
 * context of `cdk.json`, cdk-nag on the app), each in its own directory under
 * one root. `TEST_DEPLOY_CDK_OUT=<root>` makes the lane read an existing root
 * instead (so a fault can be planted in a template or a bundle first).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, STACK_ID } from '../../infra/app.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The variable naming an existing root of assemblies (one directory per {@link VARIANTS} key). */
export const CDK_OUT_VARIABLE = 'TEST_DEPLOY_CDK_OUT';

export interface Variant {
  /** Context on top of `cdk.json`'s. */
  readonly context: Record<string, unknown>;
  /** Whether its functions are bundled (run by the lane) or only its template is checked. */
  readonly bundled: boolean;
}

/** The issuer and resource URLs the `auth` variant is synthesized with; the lane runs it against its own (a stated deviation). */
export const SYNTH_ISSUER = 'https://issuer.example.com';
export const SYNTH_RESOURCE = 'https://mcp.example.com/mcp';

/** The context combinations: each one's template goes through cfn-lint and cdk-nag; the bundled ones are run. */
export const VARIANTS = {
  default: { context: {}, bundled: true },
  auth: { context: { authIssuer: SYNTH_ISSUER, authResource: SYNTH_RESOURCE }, bundled: true },
  cognito: { context: { cognito: true, cognitoDomainPrefix: 'mcp-tasks-deploy-lane' }, bundled: false },
  jwt: { context: { jwtIssuer: 'https://issuer.example.com/', jwtAudience: 'mcp-tasks' }, bundled: false },
  // Run too: its MCP function and worker send spans to X-Ray's OTLP endpoint (the lane's fake), signed with their roles.
  observability: { context: { dashboard: true, tracing: true }, bundled: true },
  eventsOff: { context: { events: 'off' }, bundled: false },
  // Its console is open (it lists every task): the list index's reads are exercised there.
  toolsetAll: { context: { toolset: 'all', console: 'open' }, bundled: true },
} as const satisfies Record<string, Variant>;

export type VariantName = keyof typeof VARIANTS;

export type Json = Record<string, any>;

/** Synthesizes one variant into `outdir` (cdk-nag runs: an unacknowledged finding throws). */
export function synthesizeVariant(name: VariantName, outdir: string): void {
  const cdkContext = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
  const variant: Variant = VARIANTS[name];
  const context = { ...cdkContext, ...variant.context, ...(variant.bundled ? {} : { 'aws:cdk:bundling-stacks': [] }) };
  const { app } = createApp({ outdir, context });
  app.synth();
}

/** The root of the assemblies this run checks (the lane sets the variable after synthesizing). */
export function assemblyRoot(): string {
  const root = process.env[CDK_OUT_VARIABLE];
  assert.ok(
    root,
    `${CDK_OUT_VARIABLE} is not set: run the lane with \`npm run test:deploy\` (it synthesizes), or point it at a root of assemblies`,
  );
  return root;
}

/** One synthesized variant: its directory and template. */
export interface Assembly {
  readonly name: string;
  readonly dir: string;
  readonly template: Json;
}

export function loadAssembly(dir: string, name = 'default'): Assembly {
  const path = join(dir, `${STACK_ID}.template.json`);
  assert.ok(existsSync(path), `No ${STACK_ID}.template.json in ${dir}: not a cloud assembly of this stack`);
  return { name, dir, template: JSON.parse(readFileSync(path, 'utf8')) as Json };
}

export function variantAssembly(name: VariantName): Assembly {
  return loadAssembly(join(assemblyRoot(), name), name);
}

export function resourcesOf(template: Json, type: string): Array<[string, Json]> {
  return Object.entries(template['Resources'] as Record<string, Json>).filter(([, resource]) => resource['Type'] === type);
}

/** The stack's functions by role, told apart by their descriptions (as `test/infra/synth.ts` does). */
export const FUNCTION_ROLES = {
  mcp: 'MCP endpoint',
  worker: 'runs queued tasks',
  deadLetter: 'dead-lettered',
  sweeper: 'sweeper',
  stackSecret: "creates the stack's secret",
  console: 'the console',
  callbacks: "an outside system's completion",
  // The workflow tools' (every bundled variant serves deploy_release).
  workflowReceiver: "a workflow's questions and progress",
  workflowEvents: "a workflow's end",
} as const;

export type FunctionRole = keyof typeof FUNCTION_ROLES;

export interface FunctionResource {
  readonly role: FunctionRole;
  readonly logicalId: string;
  readonly properties: Json;
  /** The directory of its bundled asset in the assembly (`asset.<hash>`). */
  readonly assetDir: string;
}

export function functionsOf(assembly: Assembly): Record<FunctionRole, FunctionResource> {
  const all = resourcesOf(assembly.template, 'AWS::Lambda::Function');
  const result: Partial<Record<FunctionRole, FunctionResource>> = {};
  for (const [role, text] of Object.entries(FUNCTION_ROLES) as Array<[FunctionRole, string]>) {
    const matches = all.filter(([, fn]) => String(fn['Properties']['Description'] ?? '').includes(text));
    assert.equal(matches.length, 1, `expected one function described "${text}" in ${assembly.name}, found ${matches.length}`);
    const [logicalId, fn] = matches[0]!;
    const key = String(fn['Properties']['Code']?.['S3Key'] ?? '');
    const hash = key.replace(/\.zip$/, '');
    result[role] = { role, logicalId, properties: fn['Properties'] as Json, assetDir: join(assembly.dir, `asset.${hash}`) };
  }
  return result as Record<FunctionRole, FunctionResource>;
}
