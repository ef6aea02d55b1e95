/**
 * The CDK stack synthesized the way `cdk synth` does it (`createApp`, the
 * context of `cdk.json`, cdk-nag registered on the app), and the lookups the
 * stack tests share. The default and the JWT stacks are synthesized once per
 * process, on first use: a test file pays only for the stacks it asks for.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { Metafile } from 'esbuild';
import { createApp, TOOLSET_SOURCES } from '../../infra/app.ts';
import { FunctionCode, type FunctionName } from '../../infra/constructs/function-code.ts';
import type { ToolsSource } from '../../infra/constructs/tools-module.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CDK_CONTEXT = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

export type Json = Record<string, any>;

export interface Synthesized {
  app: App;
  outdir: string;
  template: Template;
  json: Json;
  /** `validation-report.json` of the cloud assembly: cdk-nag findings and annotations. */
  report: {
    pluginReports: Array<{
      pluginName: string;
      violations: Array<{ ruleName: string; severity: string; violatingConstructs: Array<{ constructPath: string }> }>;
    }>;
  };
}

const outdirs: string[] = [];

export function synth(context: Record<string, unknown> = {}): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'mcp-tasks-cdk-'));
  outdirs.push(outdir);
  const { app, stack } = createApp({ outdir, context: { ...CDK_CONTEXT, ...context } });
  // Synthesizing the app (not `Template.fromStack`, which would synthesize
  // again) runs the validation plugins once and keeps the assets on disk.
  const assembly = app.synth();
  const json = assembly.getStackByName(stack.stackName).template as Json;
  const reportPath = join(outdir, 'validation-report.json');
  const report = existsSync(reportPath) ? JSON.parse(readFileSync(reportPath, 'utf8')) : { pluginReports: [] };
  return { app, outdir, template: Template.fromJSON(json), json, report };
}

/** Removes every cloud assembly `synth` wrote (for an `after` hook). */
export function removeSynthesized(): void {
  for (const outdir of outdirs.splice(0)) rmSync(outdir, { recursive: true, force: true });
}

let base: Synthesized | undefined;
let bundled: Synthesized | undefined;
let jwt: Synthesized | undefined;

/**
 * The default stack's template. esbuild is skipped: the template is the same
 * but for the assets' hashes (the bundles themselves are {@link bundledStack}'s).
 */
export function defaultStack(): Synthesized {
  return (base ??= synth({ 'aws:cdk:bundling-stacks': [] }));
}

/** The default stack, bundled by esbuild for real (its assets are the deployed bundles). */
export function bundledStack(): Synthesized {
  return (bundled ??= synth());
}

/**
 * The two stacks of a template test file, synthesized before its tests (a
 * failure fails them all) and removed after; read `base`/`jwt` inside tests.
 */
export function templateStacks(): { readonly base: Synthesized; readonly jwt: Synthesized } {
  const stacks: { base?: Synthesized; jwt?: Synthesized } = {};
  before(() => {
    stacks.base = defaultStack();
    stacks.jwt = jwtStack();
  });
  after(removeSynthesized);
  return {
    get base() {
      return stacks.base ?? assert.fail('synthesized in before()');
    },
    get jwt() {
      return stacks.jwt ?? assert.fail('synthesized in before()');
    },
  };
}

/** A stack with JWT authorization and the optional parts on; its functions are the default stack's, so bundling is skipped. */
export function jwtStack(): Synthesized {
  return (jwt ??= synth({
    jwtIssuer: 'https://issuer.example.com/',
    jwtAudience: 'mcp-tasks, other-client',
    toolset: 'conformance',
    removalPolicy: 'destroy',
    sweepIntervalMinutes: 5,
    // The optional parts, off by default, are on here.
    tracing: true,
    dashboard: true,
    // The functions are the same as in the default stack: skip esbuild.
    'aws:cdk:bundling-stacks': [],
  }));
}

export function resourcesOf(json: Json, type: string): Array<[string, Json]> {
  return Object.entries(json['Resources'] as Record<string, Json>).filter(([, resource]) => resource['Type'] === type);
}

export function only(json: Json, type: string, predicate: (resource: Json) => boolean = () => true): [string, Json] {
  const matches = resourcesOf(json, type).filter(([, resource]) => predicate(resource));
  assert.equal(matches.length, 1, `expected exactly one ${type}, found ${matches.length}`);
  return matches[0]!;
}

export const refTo = (logicalId: string) => ({ Ref: logicalId });
export const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** The functions by entry, told apart by their description. */
export function functions(json: Json) {
  const byDescription = (text: string) =>
    only(json, 'AWS::Lambda::Function', (fn) => String(fn['Properties']['Description']).includes(text));
  return {
    mcp: byDescription('MCP endpoint'),
    worker: byDescription('runs queued tasks'),
    deadLetter: byDescription('dead-lettered'),
    sweeper: byDescription('sweeper'),
    console: byDescription('the console'),
    callbacks: byDescription("an outside system's completion"),
  };
}

/** The workflow tools' functions (a deployment with workflow tools only). */
export function workflowFunctions(json: Json) {
  const byDescription = (text: string) =>
    only(json, 'AWS::Lambda::Function', (fn) => String(fn['Properties']['Description']).includes(text));
  return { receiver: byDescription("a workflow's questions and progress"), events: byDescription("a workflow's end") };
}

/** The task queue, and its dead-letter queue (the one its redrive policy names). */
export function queues(json: Json) {
  const queue = only(json, 'AWS::SQS::Queue', (q) => q['Properties']['RedrivePolicy'] !== undefined);
  const target = JSON.stringify(queue[1]['Properties']['RedrivePolicy']['deadLetterTargetArn']);
  const deadLetter = only(json, 'AWS::SQS::Queue', (q) => JSON.stringify(arnOf(idOf(json, q))) === target);
  return { queue, deadLetter };
}

/** A resource's logical id. */
function idOf(json: Json, resource: Json): string {
  return Object.entries(json['Resources'] as Record<string, Json>).find(([, r]) => r === resource)![0];
}

/** The sweeper's schedule: the one rule with a schedule expression (the others match events). */
export function scheduleRule(json: Json): [string, Json] {
  return only(json, 'AWS::Events::Rule', (rule) => rule['Properties']['ScheduleExpression'] !== undefined);
}

export function roleLogicalIdOf(fn: Json): string {
  return fn['Properties']['Role']['Fn::GetAtt'][0] as string;
}

/** Statements of the policies attached to a role. */
export function statementsOf(json: Json, roleLogicalId: string): Json[] {
  return resourcesOf(json, 'AWS::IAM::Policy')
    .filter(([, policy]) => (policy['Properties']['Roles'] as Json[]).some((role) => role['Ref'] === roleLogicalId))
    .flatMap(([, policy]) => policy['Properties']['PolicyDocument']['Statement'] as Json[]);
}

export const asList = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** The rule names of the warnings in a synthesis's validation report. */
export function warnings(s: Synthesized): string[] {
  return s.report.pluginReports.flatMap((report) => report.violations.filter((v) => v.severity === 'warning').map((v) => v.ruleName));
}

/**
 * The worker's entry generated for these tools (the product's by default),
 * bundled in memory with a bundling `define` (as `bundlingFor` gives it): esbuild's metafile.
 */
export async function bundleWorker(
  define: Record<string, string>,
  tools: readonly ToolsSource[] = TOOLSET_SOURCES.product,
  options: { tracing?: boolean; fn?: FunctionName } = {},
): Promise<Metafile> {
  const { build } = await import('esbuild');
  const code = new FunctionCode({ tools, projectRoot: ROOT, ...(options.tracing ? { tracing: true } : {}) });
  const result = await build({
    entryPoints: [code.entry(options.fn ?? 'worker')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    minify: true,
    logLevel: 'silent',
    mainFields: ['module', 'main'],
    define,
  });
  return result.metafile;
}
