/**
 * `cdk synth` in the project `init` made, offline: the construct bundles the
 * project's tool into the MCP function and the worker, and no tool of this
 * repository into any function; both bundles stay within 1.2× of a bare
 * bundle of the same SDKs (`test/bench/bare.ts`), built from the project's
 * own `node_modules`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { BUNDLING } from '../../infra/constructs/task-function.ts';
import { bareEntry, USES } from '../bench/bare.ts';
import { functions, type Json } from '../infra/synth.ts';
import { projectDir, run } from './project.ts';

let template: Json;
const assetOf = (fn: Json) => join(projectDir(), 'cdk.out', `asset.${String(fn['Properties']['Code']['S3Key']).replace(/\.zip$/, '')}`);
/** The sources a bundle was built from, from its source map: the project's own, and the package's tools, if any. */
const sourcesOf = (fn: Json) =>
  (JSON.parse(readFileSync(join(assetOf(fn), 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources.map((source) =>
    source.replace(/^(\.\.\/)+/, ''),
  );

before(() => {
  run('npx', ['cdk', 'synth', '--no-notices', '-q'], {
    env: { CDK_DISABLE_VERSION_CHECK: '1', CDK_DISABLE_CLI_TELEMETRY: 'true' },
    timeoutMs: 240_000,
  });
  const [file] = readdirSync(join(projectDir(), 'cdk.out')).filter((name) => name.endsWith('.template.json'));
  assert.ok(file, 'cdk.out holds a template');
  template = JSON.parse(readFileSync(join(projectDir(), 'cdk.out', file), 'utf8')) as Json;
});

describe('cdk synth in the project', () => {
  it("bundles the project's tool into the MCP function and the worker, and no tool of this repository anywhere", () => {
    const fns = functions(template);
    for (const name of ['mcp', 'worker'] as const) {
      const sources = sourcesOf(fns[name][1]);
      assert.ok(sources.includes('src/tools/hello.ts'), `${name}: ${sources.filter((s) => !s.includes('node_modules/')).join(', ')}`);
    }
    for (const [name, [, fn]] of Object.entries(fns)) {
      const sources = sourcesOf(fn);
      assert.deepEqual(
        sources.filter((source) => /functions\/(tools|fixtures)\//.test(source)),
        [],
        `${name} bundles no tool of the repository`,
      );
      if (name !== 'mcp' && name !== 'worker') assert.ok(!sources.includes('src/tools/hello.ts'), `${name} runs no tool`);
    }
  });

  it('keeps the bundles that carry the tool within 1.2× of a bare bundle of the same SDKs', async () => {
    const fns = functions(template);
    for (const name of ['mcp', 'worker'] as const) {
      const bytes = statSync(join(assetOf(fns[name][1]), 'index.mjs')).size;
      const bare = await build({
        stdin: { contents: bareEntry(name, USES[name]), resolveDir: projectDir(), sourcefile: 'bare.ts', loader: 'ts' },
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
