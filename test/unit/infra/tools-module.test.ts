/**
 * The generated entries, the one way a deployment's tools reach its bundles
 * (`infra/constructs/tools-module.ts`): what they import, by relative paths,
 * and what they call. Bundled and run: test/infra/bundles.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entryText, resolveSources, tracedEntryText } from '../../../infra/constructs/tools-module.ts';

describe('generated entries', () => {
  it('import every source by a relative path and hand all their tools to the composition', () => {
    const sources = resolveSources(['src/tools/index.ts', { module: '/work/app/lib/more.ts', export: 'extraTools' }], '/work/app');
    const text = entryText(
      'worker',
      '/work/app/node_modules/pkg/dist/functions/worker/deployed.js',
      sources,
      '/work/app/node_modules/.cache/x',
    );
    assert.equal(
      text,
      [
        '// Generated at synthesis by McpTasks: the worker with the tools below.',
        'import { deployedHandler } from "../../pkg/dist/functions/worker/deployed.js";',
        'import { tools as tools0 } from "../../../src/tools/index.ts";',
        'import { extraTools as tools1 } from "../../../lib/more.ts";',
        'export const handler = deployedHandler([...tools0, ...tools1]);',
        '',
      ].join('\n'),
    );
  });

  it("hand the worker the engines its tools run on, each imported by its module's path and export", () => {
    const sources = resolveSources(['src/tools/index.ts'], '/work/app');
    const text = entryText(
      'worker',
      '/work/app/node_modules/pkg/dist/functions/worker/deployed.js',
      sources,
      '/work/app/node_modules/.cache/x',
      [
        { module: '/work/app/node_modules/pkg/dist/functions/lib/sfn.js', export: 'sfnWorkflows' },
        { module: '/work/app/node_modules/pkg/dist/functions/lib/other.js', export: 'otherEngine' },
      ],
    );
    assert.equal(
      text,
      [
        '// Generated at synthesis by McpTasks: the worker with the tools below.',
        'import { deployedHandler } from "../../pkg/dist/functions/worker/deployed.js";',
        'import { tools as tools0 } from "../../../src/tools/index.ts";',
        'import { sfnWorkflows as engine0 } from "../../pkg/dist/functions/lib/sfn.js";',
        'import { otherEngine as engine1 } from "../../pkg/dist/functions/lib/other.js";',
        'export const handler = deployedHandler([...tools0], [engine0, engine1]);',
        '',
      ].join('\n'),
    );
  });

  it('with tracing on, install the adapter before composing and flush what each invocation traced before it returns', () => {
    const sources = resolveSources(['src/tools/index.ts'], '/work/app');
    const text = entryText(
      'mcp',
      '/work/app/node_modules/pkg/dist/functions/mcp/deployed.js',
      sources,
      '/work/app/node_modules/.cache/x',
      [],
      '/work/app/node_modules/pkg/dist/shared/tracing/otel/index.js',
    );
    assert.deepEqual(text.split('\n').slice(3), [
      'import { deployedTracing } from "../../pkg/dist/shared/tracing/otel/index.js";',
      'const tracing = deployedTracing();',
      'export const handler = tracing.flushing(deployedHandler([...tools0]));',
      '',
    ]);
  });

  it('of a function that runs no tool, with tracing on: install the adapter and flush around its own handler', () => {
    const text = tracedEntryText(
      'callbacks',
      '/work/app/node_modules/pkg/dist/functions/callbacks/handler.js',
      '/work/app/node_modules/.cache/x',
      '/work/app/node_modules/pkg/dist/shared/tracing/otel/index.js',
    );
    assert.deepEqual(text.split('\n'), [
      '// Generated at synthesis by McpTasks: the callbacks function, traced.',
      'import { deployedTracing } from "../../pkg/dist/shared/tracing/otel/index.js";',
      'import { handler as composed } from "../../pkg/dist/functions/callbacks/handler.js";',
      'const tracing = deployedTracing();',
      'export const handler = tracing.flushing(composed);',
      '',
    ]);
  });

  it('refuse no module and an export name that is not an identifier', () => {
    assert.throws(() => resolveSources([], '/work/app'), /names no module/);
    assert.throws(() => resolveSources({ module: 'x.ts', export: 'a-b' }, '/work/app'), /"a-b" is not an export name/);
  });
});
