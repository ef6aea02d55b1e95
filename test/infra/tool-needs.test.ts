/**
 * What a tool declares in `needs` becomes the functions' grants, exactly:
 * a tool with a secret and an S3 read permission adds read access to that
 * secret and that permission, to the worker (and to the MCP function when the
 * tool may run inline), and nothing else; cdk-nag stays clean. Synthesized
 * without bundling (the bundles are tested in `bundles.test.ts`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { conformanceTools } from '../../functions/fixtures/conformance.ts';
import { REPORT_BUCKET_OBJECTS, reportDigest } from '../../functions/fixtures/durability/configured.ts';
import { productTools } from '../../functions/tools/index.ts';
import { TOOLSET_SOURCES } from '../../infra/app.ts';
import { FunctionCode } from '../../infra/constructs/function-code.ts';
import { bundlingFor } from '../../infra/constructs/task-function.ts';
import { tasksStackPropsFromContext } from '../../infra/context-props.ts';
import { McpTasks } from '../../infra/mcp-tasks.ts';
import { settingStoresOf } from '../../shared/runtime/settings.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { bundleWorker, CDK_CONTEXT, ROOT } from './synth.ts';

/** The tools modules of these tests (`needs-tools.ts`), by export. */
const NEEDS_TOOLS = fileURLToPath(new URL('./needs-tools.ts', import.meta.url));
type NeedsList = 'product' | 'withTaskTool' | 'withInlineTool' | 'unexplained' | 'duplicated' | 'badHeader';

type Json = Record<string, any>;
const outdirs: string[] = [];
after(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

/** The default deployment serving one list of `needs-tools.ts`, synthesized (without bundling) with cdk-nag. */
function synth(list: NeedsList) {
  const outdir = mkdtempSync(join(tmpdir(), 'mcp-tasks-needs-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  const { toolset: _toolset, ...settings } = tasksStackPropsFromContext(app.node);
  const stack = new Stack(app, 'McpTasks');
  // The product's tools hold a workflow tool: its machine is created from its ASL file, as the repository's deployment does.
  const workflows = { deploy_release: {} };
  new McpTasks(stack, 'Default', { ...settings, tools: { module: NEEDS_TOOLS, export: list }, workflows, projectRoot: ROOT });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  let json: Json | undefined;
  let failed = false;
  try {
    json = app.synth().getStackByName(stack.stackName).template as Json;
  } catch (error) {
    if ((error as Error).name !== 'ValidationFailed') throw error;
    failed = true; // the report says why
  }
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: Array<{
      pluginName: string;
      violations: Array<{ ruleName: string; severity: string; violatingConstructs: Array<{ constructPath: string }> }>;
    }>;
  };
  const findings = report.pluginReports
    .filter((r) => r.pluginName === 'AwsSolutions')
    .flatMap((r) => r.violations.map((v) => `${v.ruleName} at ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`));
  return { json: json ?? {}, template: Template.fromJSON(json ?? {}), findings, failed };
}

/** Statements of the policies of the function whose description contains `text`. */
function statementsOf(json: Json, text: string): Json[] {
  const resources = Object.entries(json['Resources'] as Record<string, Json>);
  const fns = resources.filter(([, r]) => r['Type'] === 'AWS::Lambda::Function' && String(r['Properties']['Description']).includes(text));
  assert.equal(fns.length, 1, text);
  const role = fns[0]![1]['Properties']['Role']['Fn::GetAtt'][0] as string;
  return resources
    .filter(([, r]) => r['Type'] === 'AWS::IAM::Policy' && (r['Properties']['Roles'] as Json[]).some((ref) => ref['Ref'] === role))
    .flatMap(([, r]) => r['Properties']['PolicyDocument']['Statement'] as Json[]);
}

/** Statements in `withTool` that `without` lacks. */
const added = (withTool: Json[], without: Json[]) => withTool.filter((s) => !without.some((b) => JSON.stringify(b) === JSON.stringify(s)));

const SECRET_READ = {
  Effect: 'Allow',
  Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
  Resource: {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':secretsmanager:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        ':secret:report-digest/api-key-??????',
      ],
    ],
  },
};
const S3_READ = { Effect: 'Allow', Action: 's3:GetObject', Resource: REPORT_BUCKET_OBJECTS };

const bare = synth('product');
const withTaskTool = synth('withTaskTool');
const withInlineTool = synth('withInlineTool');

describe('tool needs', () => {
  it('grant the worker exactly read access to the declared secret and the declared S3 permission', () => {
    const grants = added(statementsOf(withTaskTool.json, 'runs queued tasks'), statementsOf(bare.json, 'runs queued tasks'));
    assert.deepEqual(grants, [SECRET_READ, S3_READ]);
    withTaskTool.template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 's3:GetObject', Resource: REPORT_BUCKET_OBJECTS })]) },
    });
  });

  it('grant the MCP function nothing for a task-only tool, the same as the worker for a tool that may run inline', () => {
    assert.deepEqual(added(statementsOf(withTaskTool.json, 'MCP endpoint'), statementsOf(bare.json, 'MCP endpoint')), []);
    assert.deepEqual(added(statementsOf(withInlineTool.json, 'MCP endpoint'), statementsOf(bare.json, 'MCP endpoint')), [
      SECRET_READ,
      S3_READ,
    ]);
    assert.deepEqual(added(statementsOf(withInlineTool.json, 'runs queued tasks'), statementsOf(bare.json, 'runs queued tasks')), [
      SECRET_READ,
      S3_READ,
    ]);
  });

  it('grant the other functions nothing', () => {
    for (const text of ['dead-lettered', 'sweeper'])
      assert.deepEqual(added(statementsOf(withInlineTool.json, text), statementsOf(bare.json, text)), [], text);
  });

  it("keep cdk-nag clean: a declared wildcard resource is acknowledged with the tool's reason", () => {
    assert.equal(bare.failed || withTaskTool.failed || withInlineTool.failed, false);
    assert.deepEqual(bare.findings, []);
    assert.deepEqual(withTaskTool.findings, []);
    assert.deepEqual(withInlineTool.findings, []);
  });

  it('leave a wildcard resource declared without a reason to cdk-nag, which fails synthesis', () => {
    const { findings, failed } = synth('unexplained');
    assert.equal(failed, true);
    assert.equal(findings.length, 1, findings.join('\n'));
    assert.match(
      findings[0]!,
      /^AwsSolutions-IAM5\[Resource::arn:aws:s3:::example-reports\/\*\] at McpTasks\/Default\/TaskQueue\/Worker\/Role/,
    );
  });

  it("decide which setting stores' clients a bundle carries", async () => {
    // external_job's callback mode reads where its job system is (an SSM parameter).
    assert.deepEqual(settingStoresOf(productTools), { ssmParameter: true, secretsManager: false });
    assert.deepEqual(settingStoresOf([reportDigest]), { ssmParameter: false, secretsManager: true });
    const packages = async (tools: readonly ToolDefinition[]) => {
      const metafile = await bundleWorker(bundlingFor(settingStoresOf(tools)).define ?? {});
      const [, output] = Object.entries(metafile.outputs)[0]!;
      return new Set(
        Object.entries(output.inputs)
          .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
          .map(([path]) => /@aws-sdk\/client-[a-z-]+/.exec(path)?.[0])
          .filter(Boolean),
      );
    };
    const lean = await packages(productTools.filter((tool) => tool.needs === undefined));
    assert.ok(!lean.has('@aws-sdk/client-secrets-manager'), [...lean].join(', '));
    const withSecrets = await packages([reportDigest]);
    assert.ok(withSecrets.has('@aws-sdk/client-secrets-manager'));
    // The SSM client comes with the worker whatever its tools read: it reads the state key, for callback tokens.
    assert.ok(lean.has('@aws-sdk/client-ssm') && withSecrets.has('@aws-sdk/client-ssm'));
  });

  it('are read from the modules each toolset deploys, the lists the generated entries import', () => {
    const expected = { product: productTools, conformance: conformanceTools, all: [...productTools, ...conformanceTools] };
    for (const [toolset, tools] of Object.entries(expected) as Array<[keyof typeof TOOLSET_SOURCES, ToolDefinition[]]>) {
      const code = new FunctionCode({ tools: TOOLSET_SOURCES[toolset], projectRoot: ROOT });
      assert.deepEqual(
        code.tools.map((tool) => tool.name),
        tools.map((tool) => tool.name),
        toolset,
      );
      assert.deepEqual(
        code.tools.map((tool) => tool.needs ?? null),
        tools.map((tool) => tool.needs ?? null),
        `${toolset}: needs read as declared`,
      );
    }
  });

  it('fail synthesis, naming the tool, for a catalogue a function would refuse (a duplicate name)', () => {
    assert.throws(
      () => synth('duplicated'),
      /reading the tools of .*needs-tools\.ts failed: CatalogueError: Tool "batch_process" is defined twice/,
    );
  });

  it('fail synthesis, naming the tool, for an x-mcp-header declaration clients would drop the tool for', () => {
    assert.throws(
      () => synth('badHeader'),
      /reading the tools of .*needs-tools\.ts failed: CatalogueError: Tool "regional_digest": x-mcp-header on "region" must be a header name/,
    );
  });
});
