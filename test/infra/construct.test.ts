/**
 * `McpTasks` as a project uses it: in a stack of its own under an id of its
 * own, from a tools module, with the defaults. It hands out what a project
 * adds around it, keeps the operator outputs' names whatever its id, and
 * refuses what cannot work. Synthesized without bundling (the bundles:
 * bundles.test.ts, and the package lane for a project's).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { FunctionCode } from '../../infra/constructs/function-code.ts';
import { McpTasks, type McpTasksProps } from '../../infra/mcp-tasks.ts';
import { OPS_OUTPUTS } from '../../infra/outputs.ts';
import { CDK_CONTEXT, type Json, ROOT } from './synth.ts';

const TOOLS = { module: fileURLToPath(new URL('./needs-tools.ts', import.meta.url)), export: 'withTaskTool' };
const outdirs: string[] = [];
after(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

function project(props: Partial<McpTasksProps> = {}) {
  const outdir = mkdtempSync(join(tmpdir(), 'mcp-tasks-construct-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'MyTools');
  // The product's tools hold a workflow tool: bound to a machine created from its ASL file.
  const tasks = new McpTasks(stack, 'Tasks', { tools: TOOLS, projectRoot: ROOT, workflows: { deploy_release: {} }, ...props });
  return { app, stack, tasks, template: () => app.synth().getStackByName('MyTools').template as Json };
}

describe('McpTasks in a project', () => {
  it('hands out the functions that run the tools, the endpoint URL and the event bus', () => {
    const { tasks, stack } = project();
    assert.deepEqual(tasks.toolFunctions, [tasks.mcp.function, tasks.worker.function]);
    assert.ok(tasks.eventBus && tasks.eventBus === tasks.events?.bus);
    assert.match(stack.resolve(tasks.endpointUrl)['Fn::Join'][1].at(-1), /\/mcp$/);
    assert.equal(project({ events: false }).tasks.eventBus, undefined);
    assert.ok(project({ cognito: { domainPrefix: 'my-tools' } }).tasks.userPool, 'a user pool with the default callbacks');
  });

  it("keeps the operator commands' output names whatever its id, and prefixes its own resources' ids with it", () => {
    const template = project().template();
    for (const name of Object.values(OPS_OUTPUTS)) assert.ok(name in template['Outputs'], `${name} in ${Object.keys(template['Outputs'])}`);
    const tables = Object.entries(template['Resources'] as Record<string, Json>).filter(([, r]) => r['Type'] === 'AWS::DynamoDB::Table');
    assert.deepEqual(
      tables.map(([id]) => id.replace(/[0-9A-F]{8}$/, '')),
      ['TasksTaskTable'],
    );
  });

  it('grants what the tools declare, from the module its generated entries import', () => {
    const { template } = project();
    assert.ok(JSON.stringify(template()).includes('arn:aws:s3:::example-reports/*'), 'the S3 read the module declares');
    // The entries are named by what they import: the construct's are these.
    const entry = readFileSync(new FunctionCode({ tools: TOOLS, projectRoot: ROOT }).entry('worker'), 'utf8');
    assert.match(entry, /import \{ withTaskTool as tools0 \} from "[./]+\/test\/infra\/needs-tools\.ts";/);
  });

  it('refuses a second one in the same stack, approvers nobody can sign in as, and a console listing every task behind an issuer', () => {
    const { stack } = project();
    assert.throws(
      () => new McpTasks(stack, 'Again', { tools: TOOLS, projectRoot: ROOT, workflows: { deploy_release: {} } }),
      /already holds one/,
    );
    assert.throws(() => project({ approvers: 'group:ops' }), /approvers need people to sign in/);
    assert.throws(() => project({ cognito: { domainPrefix: 'My Tools' } }), /cognito.domainPrefix must be/);
    assert.throws(
      () => project({ approvers: 'team:ops', jwt: { issuer: 'https://i.example.com/', audience: ['a'] } }),
      /McpTasks: approvers/,
    );
    assert.throws(
      () => project({ console: { open: true }, jwt: { issuer: 'https://i.example.com/', audience: ['a'] } }),
      /console.open .* is for an open endpoint only/,
    );
  });
});
