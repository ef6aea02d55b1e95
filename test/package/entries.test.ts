/**
 * Every function entry the construct can generate, bundled with esbuild from
 * the unpacked tarball alone (its `dist/`, and the packages it depends on):
 * an entry the build left out of `dist/`, or an import of one, fails here,
 * before any project is made (`lane.ts` runs this file first). The tools
 * module declares a workflow tool, so the worker's entry imports the Step
 * Functions engine and the workflow functions' entries are those a
 * deployment with workflow tools bundles. The MCP function's bundle names
 * the package's version and carries no `package.json`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { UNPACKED_VARIABLE } from './project.ts';

const unpacked = process.env[UNPACKED_VARIABLE];
const work = mkdtempSync(join(tmpdir(), 'mcp-tasks-package-entries-'));

const TOOLS = `import { defineTool, defineWorkflowTool } from 'mcp-tasks-serverless';
import * as z from 'zod';

export const tools = [
  defineTool({ name: 'plain', description: 'Plain.', inputSchema: z.object({}), execution: 'task', handler: async () => 'done' }),
  defineWorkflowTool({
    name: 'flow',
    description: 'A workflow.',
    inputSchema: z.object({}),
    workflow: { name: 'flow', definition: 'flow.asl.json' },
  }),
];
`;

interface Construct {
  FUNCTION_MODULES: Record<string, string>;
  FunctionCode: new (props: { tools: string; projectRoot: string }) => { entry(name: string): string };
}
interface Bundling {
  BUNDLING: { target?: string; mainFields?: string[]; banner?: string };
}

let construct: Construct;
let bundling: Bundling;
let code: { entry(name: string): string };
const manifest = () =>
  JSON.parse(readFileSync(join(unpacked!, 'package.json'), 'utf8')) as { name: string; version: string; description: string };

before(async () => {
  assert.ok(unpacked, `${UNPACKED_VARIABLE} is not set: run the lane with \`npm run test:package\``);
  // A project of one tools module, with the unpacked package and the packages it needs as its node_modules.
  mkdirSync(join(work, 'node_modules'));
  symlinkSync(unpacked, join(work, 'node_modules', manifest().name), 'dir');
  symlinkSync(realpathSync(join(unpacked, 'node_modules', 'zod')), join(work, 'node_modules', 'zod'), 'dir');
  writeFileSync(join(work, 'package-lock.json'), '{}\n');
  writeFileSync(join(work, 'tools.ts'), TOOLS);
  const dist = (path: string) => pathToFileURL(join(unpacked, 'dist', path)).href;
  construct = (await import(dist('infra/constructs/function-code.js'))) as Construct;
  bundling = (await import(dist('infra/constructs/task-function.js'))) as Bundling;
  code = new construct.FunctionCode({ tools: 'tools.ts', projectRoot: work });
});

after(() => rmSync(work, { recursive: true, force: true }));

/** Bundles `entry` as the stack does (ESM, the stack's target, main fields and banner, the AWS SDK bundled). */
async function bundle(entry: string): Promise<{ text: string; metafile: Metafile }> {
  const { BUNDLING } = bundling;
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLING.target ?? 'node22',
    ...(BUNDLING.mainFields ? { mainFields: BUNDLING.mainFields } : {}),
    ...(BUNDLING.banner ? { banner: { js: BUNDLING.banner } } : {}),
    absWorkingDir: work,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { text: result.outputFiles[0]!.text, metafile: result.metafile };
}

const inputs = (metafile: Metafile) => Object.keys(metafile.inputs);

describe('every function entry the construct can generate, from the unpacked tarball', () => {
  it('bundles each one, the tools in the MCP function and the worker, the Step Functions engine in the worker', async () => {
    const names = Object.keys(construct.FUNCTION_MODULES);
    assert.ok(names.includes('workflowReceiver') && names.includes('workflowEvents'), names.join(', '));
    for (const name of names) {
      const { metafile } = await bundle(code.entry(name)).catch((error: Error) => assert.fail(`${name}: ${error.message}`));
      const files = inputs(metafile);
      const carriesTools = files.includes('tools.ts');
      assert.equal(carriesTools, name === 'mcp' || name === 'worker', `${name}: the tools module ${carriesTools ? 'in' : 'not in'} it`);
      if (name === 'worker')
        assert.ok(
          files.some((file) => file.endsWith('dist/functions/lib/sfn.js')),
          'the worker carries the engine',
        );
    }
  });

  it("names the package's version in the MCP function, and carries no package.json", async () => {
    const { text, metafile } = await bundle(code.entry('mcp'));
    // The AWS SDK's clients carry their own package.json; the package's is not in the bundle.
    assert.deepEqual(
      inputs(metafile).filter((file) => file.endsWith('package.json') && !file.includes('node_modules/')),
      [],
    );
    assert.ok(text.includes(JSON.stringify(manifest().version)), 'the version is in the bundle');
    assert.ok(!text.includes(manifest().description), "the package's manifest is not in the bundle");
  });
});
