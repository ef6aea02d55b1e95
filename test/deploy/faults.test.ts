/**
 * The lane catches faults planted in a cloud assembly from outside, each with
 * a message naming its cause. Every case copies the default assembly, plants
 * one fault in the copy (the template or a bundle, as a broken build or a
 * hand edit would leave it) and runs the check that must catch it.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { build, type Plugin } from 'esbuild';
import { STACK_ID, TOOLSET_SOURCES } from '../../infra/app.ts';
import { FunctionCode } from '../../infra/constructs/function-code.ts';
import { BUNDLING, bundlingFor } from '../../infra/constructs/task-function.ts';
import { resultOf, rpc } from '../support/wire.ts';
import { type Assembly, assemblyRoot, functionsOf, type Json, loadAssembly, ROOT, resourcesOf } from './assembly.ts';
import { cfnLint, environmentProblems, servedToolProblems } from './checks.ts';
import { startDeployment } from './deployment.ts';
import { checkIam, grantReasons, grantsOf } from './iam.ts';

const copies: string[] = [];
after(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the default assembly with `plant` applied to its template (and, through the assembly, its assets). */
async function planted(plant: (template: Json, assembly: Assembly) => void | Promise<void>): Promise<Assembly> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-planted-'));
  copies.push(dir);
  cpSync(join(assemblyRoot(), 'default'), dir, { recursive: true });
  const path = join(dir, `${STACK_ID}.template.json`);
  const template = JSON.parse(readFileSync(path, 'utf8')) as Json;
  await plant(template, loadAssembly(dir));
  writeFileSync(path, JSON.stringify(template, null, 1));
  return loadAssembly(dir);
}

describe('faults planted in the assembly', () => {
  it("names dynamodb:UpdateItem removed from the worker's policy", async () => {
    const assembly = await planted((template, original) => {
      const roleId = functionsOf(original).worker.properties['Role']['Fn::GetAtt'][0];
      const [, policy] = resourcesOf(template, 'AWS::IAM::Policy').find(([, p]) => p['Properties']['Roles'][0]['Ref'] === roleId)!;
      const statement = (policy['Properties']['PolicyDocument']['Statement'] as Json[]).find((s) =>
        [s['Action']].flat().includes('dynamodb:UpdateItem'),
      )!;
      statement['Action'] = (statement['Action'] as string[]).filter((action) => action !== 'dynamodb:UpdateItem');
    });
    const deployment = await startDeployment(assembly);
    try {
      const created = resultOf(await rpc(deployment.url, 'tools/call', { name: 'batch_process', arguments: { items: ['a'], delayMs: 0 } }));
      const deadline = Date.now() + 20_000;
      while (!deployment.calls.calls.some((call) => call.fn === 'worker' && call.action === 'dynamodb:UpdateItem')) {
        assert.ok(Date.now() < deadline, `the worker never ran task ${String(created['taskId'])}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const report = await checkIam(
        [{ calls: deployment.calls.distinct(), grants: grantsOf(assembly, deployment.resolve) }],
        grantReasons(),
      );
      const denied = report.denied.find((line) => line.startsWith('worker called dynamodb:UpdateItem'));
      assert.ok(denied, `expected the worker's UpdateItem to be denied, got: ${JSON.stringify(report.denied)}`);
      assert.match(denied, /table\/McpTasks-TaskTable[0-9A-F]+, which its role's policies do not allow/);
      console.log(`planted IAM fault: ${denied}`);
    } finally {
      await deployment.stop();
    }
  });

  it('names a function environment variable renamed in the template', async () => {
    const assembly = await planted((template, original) => {
      const variables = template['Resources'][functionsOf(original).worker.logicalId]['Properties']['Environment']['Variables'];
      variables['TASKS_TABLE'] = variables['TASKS_TABLE_NAME'];
      delete variables['TASKS_TABLE_NAME'];
    });
    const deployment = await startDeployment(assembly);
    try {
      const problems = environmentProblems(assembly, deployment);
      assert.deepEqual(problems, [
        `worker (${functionsOf(assembly).worker.logicalId}) is given TASKS_TABLE, which no setting of shared/config.ts reads`,
        'worker failed to start from its bundle: Error: Missing required environment variable TASKS_TABLE_NAME',
      ]);
      console.log(`planted environment fault:\n  ${problems.join('\n  ')}`);
    } finally {
      await deployment.stop();
    }
  });

  it('names a tool module that only the bundle drops', async () => {
    // The stack's own esbuild options and `define`s, with a build step that loses external_job's module from the catalogue.
    const dropTool: Plugin = {
      name: 'drop-tool-module',
      setup(builder) {
        builder.onLoad({ filter: /functions[\\/]tools[\\/]index\.ts$/ }, (args) => ({
          contents: readFileSync(args.path, 'utf8')
            .replace(/^import \{ externalJob \} from '\.\/external-job\.ts';$/m, '')
            // Wherever it stands in the list (a trailing comma left behind is valid).
            .replace(/\bexternalJob\b,?\s*/, ''),
          loader: 'ts',
        }));
      },
    };
    const code = new FunctionCode({ tools: TOOLSET_SOURCES.product, projectRoot: ROOT });
    const assembly = await planted(async (_template, original) => {
      const fns = functionsOf(original);
      for (const role of ['mcp', 'worker'] as const) {
        const fn = fns[role];
        const { define } = bundlingFor();
        await build({
          entryPoints: [code.entry(role)],
          outfile: join(fn.assetDir, 'index.mjs'),
          bundle: true,
          platform: 'node',
          format: 'esm',
          ...(BUNDLING.target === undefined ? {} : { target: BUNDLING.target }),
          minify: true,
          mainFields: ['module', 'main'],
          banner: { js: BUNDLING.banner! },
          define: define!,
          plugins: [dropTool],
          logLevel: 'silent',
        });
      }
    });
    const deployment = await startDeployment(assembly);
    try {
      const problems = await servedToolProblems(deployment);
      assert.deepEqual(problems, [
        'The bundled MCP function does not serve external_job, which the product toolset declares: the bundle dropped it',
      ]);
      console.log(`planted bundle fault: ${problems[0]}`);
    } finally {
      await deployment.stop();
    }
  });

  it('names an error cfn-lint finds in a planted template', async () => {
    const assembly = await planted((template, original) => {
      template['Resources'][functionsOf(original).sweeper.logicalId]['Properties']['Runtime'] = 'nodejs99.x';
    });
    const errors = cfnLint([join(assembly.dir, `${STACK_ID}.template.json`)]).filter((match) => match.Level === 'Error');
    assert.ok(
      errors.some((match) => match.Location.Path.join('/').endsWith('Properties/Runtime')),
      `expected an error on the Runtime, got ${JSON.stringify(errors.map((match) => match.Message))}`,
    );
  });
});
