/**
 * `npm run synth` in the project `init` made (the CDK CLI fetched by npx),
 * offline once fetched: every function's bundle holds its entry; the MCP
 * function and the worker hold every tool of the project and no tool of this
 * repository, the others none; the worker holds the Step Functions engine
 * (the project has a workflow tool), and the workflow's receiver and event
 * consumer are bundled too; the local handlers' module enters no bundle; the
 * workflow's machine is created from the project's ASL file. The bundles
 * that carry the tools stay within 1.2× of a bare bundle of the same SDKs
 * (`test/bench/bare.ts`), built from the project's own `node_modules`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { BUNDLING } from '../../infra/constructs/task-function.ts';
import { bareEntry, USES, WORKFLOW_PACKAGE } from '../bench/bare.ts';
import { functions, type Json, workflowFunctions } from '../infra/synth.ts';
import { projectDir, run } from './project.ts';

/** The project's tool modules (`kinds.ts` and the sample). */
const TOOL_SOURCES = ['hello', 'count-words', 'approve-release', 'build-artifact', 'ship-batch'].map((name) => `src/tools/${name}.ts`);
/** Each function's entry in the package, as its bundle's source map names it. */
const ENTRIES: Record<string, string> = {
  mcp: 'dist/functions/mcp/deployed.js',
  worker: 'dist/functions/worker/deployed.js',
  deadLetter: 'dist/functions/dlq/handler.js',
  sweeper: 'dist/functions/sweeper/handler.js',
  console: 'dist/functions/console/handler.js',
  callbacks: 'dist/functions/callbacks/handler.js',
  receiver: 'dist/functions/workflow-receiver/handler.js',
  events: 'dist/functions/workflow-events/handler.js',
};

let template: Json;
const assetOf = (fn: Json) => join(projectDir(), 'cdk.out', `asset.${String(fn['Properties']['Code']['S3Key']).replace(/\.zip$/, '')}`);
/** The sources a bundle was built from, from its source map. */
const sourcesOf = (fn: Json) =>
  (JSON.parse(readFileSync(join(assetOf(fn), 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources.map((source) =>
    source.replace(/^(\.\.\/)+/, ''),
  );
const bundled = () => ({ ...functions(template), ...workflowFunctions(template) });

before(() => {
  run('npm', ['run', 'synth'], {
    env: { CDK_DISABLE_VERSION_CHECK: '1', CDK_DISABLE_CLI_TELEMETRY: 'true', npm_config_prefer_offline: 'true' },
    timeoutMs: 240_000,
  });
  const [file] = readdirSync(join(projectDir(), 'cdk.out')).filter((name) => name.endsWith('.template.json'));
  assert.ok(file, 'cdk.out holds a template');
  template = JSON.parse(readFileSync(join(projectDir(), 'cdk.out', file), 'utf8')) as Json;
});

describe('npm run synth in the project', () => {
  it('bundles each function from its entry, the tools into the MCP function and the worker only, the engine into the worker', () => {
    for (const [name, [, fn]] of Object.entries(bundled())) {
      const sources = sourcesOf(fn);
      const own = sources.filter((source) => !source.includes('node_modules/') || source.includes('mcp-tasks-serverless/'));
      assert.ok(
        sources.some((source) => source.endsWith(`mcp-tasks-serverless/${ENTRIES[name]}`)),
        `${name}: no ${ENTRIES[name]} in ${own.join(', ')}`,
      );
      const tools = TOOL_SOURCES.filter((tool) => sources.includes(tool));
      assert.deepEqual(tools, name === 'mcp' || name === 'worker' ? TOOL_SOURCES : [], `${name}: the project's tools`);
      assert.deepEqual(
        sources.filter((source) => /functions\/(tools|fixtures)\/|src\/local-states/.test(source)),
        [],
        `${name} bundles no tool of the repository, and no local handler`,
      );
      const engine = sources.some((source) => source.endsWith('mcp-tasks-serverless/dist/functions/lib/sfn.js'));
      assert.equal(engine, name === 'worker', `${name}: the Step Functions engine`);
    }
  });

  it("creates the workflow's machine from the project's ASL file", () => {
    const machines = Object.values(template['Resources'] as Record<string, Json>).filter(
      (resource) => resource['Type'] === 'AWS::StepFunctions::StateMachine',
    );
    assert.equal(machines.length, 1);
    const definition = JSON.stringify(machines[0]!['Properties']['DefinitionString']);
    // The Parallel's type, the Map's item processor, the SNS state's resource and the second question's key.
    for (const part of ['Parallel', 'ItemProcessor', 'arn:aws:states:::sns:publish', 'signoff']) assert.ok(definition.includes(part), part);
  });

  it('keeps the bundles that carry the tools within 1.2× of a bare bundle of the same SDKs', async () => {
    const fns = functions(template);
    for (const name of ['mcp', 'worker'] as const) {
      const bytes = statSync(join(assetOf(fns[name][1]), 'index.mjs')).size;
      const uses = name === 'worker' ? [...USES[name], WORKFLOW_PACKAGE] : USES[name];
      const bare = await build({
        stdin: { contents: bareEntry(name, uses), resolveDir: projectDir(), sourcefile: 'bare.ts', loader: 'ts' },
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: BUNDLING.target ?? 'node22',
        minify: true,
        mainFields: BUNDLING.mainFields ?? ['module', 'main'],
        banner: { js: BUNDLING.banner ?? '' },
        write: false,
        logLevel: 'silent',
      });
      const bareBytes = bare.outputFiles[0]!.contents.byteLength;
      const ratio = bytes / bareBytes;
      console.log(`${name}: ${(bytes / 1024).toFixed(1)} KB, bare ${(bareBytes / 1024).toFixed(1)} KB, ${ratio.toFixed(2)}×`);
      assert.ok(ratio <= 1.2, `${name} is ${ratio.toFixed(2)}× its bare bundle`);
    }
  });
});
