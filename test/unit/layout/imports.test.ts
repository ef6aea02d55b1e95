/** The import rules of the tree (`test/support/import-graph.ts`): one audience per folder. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkImports, importCycles, importsOf, readTree } from '../../support/import-graph.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const aliases = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { imports: Record<string, string> }).imports;

describe('import rules', () => {
  it('the tree keeps them', () => {
    const tree = readTree(ROOT, ['functions', 'shared', 'infra', 'bin', 'kit', 'test', 'examples']);
    assert.ok(tree.size > 100, `read the sources (${tree.size})`);
    assert.deepEqual(checkImports(tree, aliases), []);
  });

  it('finds static, re-exported and dynamic imports', () => {
    const text =
      "import a from './a.ts';\nimport type { B } from \"../b.ts\";\nexport { c } from './c.ts';\nconst d = await " +
      "import('./d.ts');\nimport './e.ts';";
    assert.deepEqual(importsOf(text), ['./a.ts', '../b.ts', './c.ts', './d.ts', './e.ts']);
  });

  it('a planted violation of each rule is reported, naming the file and the import', () => {
    const planted = new Map([
      ['functions/tools/x.ts', "import { main } from '../../bin/cli/cli.ts';"],
      ['shared/tasks/y.ts', "import { deployedHandler } from '../../functions/mcp/deployed.ts';"],
      ['shared/log2.ts', "import { Command } from 'commander';"],
      ['functions/lib/z.ts', "const { McpTasks } = await import('../../infra/mcp-tasks.ts');"],
      ['infra/constructs/w.ts', "import { testTool } from '#tool-kit';"],
      ['infra/constructs/u.ts', "export { startLocalStack } from '../../bin/local/stack.ts';"],
      ['bin/ops/v.ts', "import { sandbox } from '../../test/support/sandbox.ts';"],
      ['bin/scripts/k.ts', "import { testTool } from '../../kit/kit.ts';"],
      ['kit/j.ts', "import { McpTasks } from '../infra/mcp-tasks.ts';"],
      ['kit/ok.ts', "import { startLocalStack } from '../bin/local/stack.ts';\nimport { runTool } from '../shared/runtime/run.ts';"],
      ['shared/tasks/q.ts', "import type { TaskActions } from '../actions/task-actions.ts';"],
      ['shared/auth/r.ts', "import { runTool } from '../runtime/run.ts';"],
      ['shared/events/n.ts', "import { delay } from '../runtime/tool.ts';"],
      ['shared/events/ok.ts', "import { delay } from '../delay.ts';\nimport type { TaskRecord } from '../tasks/model.ts';"],
      ['shared/protocol/ok.ts', "import { TaskNotFoundError } from '../tasks/store-errors.ts';"],
      ['bin/ops/t.ts', "import { taskFromItem } from '../../shared/tasks/dynamodb/codec.ts';"],
      ['shared/protocol/s.ts', "import type { InMemoryTaskStore } from '../tasks/memory/store.ts';"],
      ['test/integration/p.test.ts', "import { toItem } from '../../shared/tasks/dynamodb/codec.ts';"],
      ['shared/tasks/memory/o.ts', "import { fromItem } from '../dynamodb/codec.ts';"],
      ['shared/tasks/dynamodb/ok.ts', "import { toItem } from './codec.ts';\nimport { visible } from '../predicates.ts';"],
      ['bin/ops/ok.ts', "import { taskFromItem } from '../../shared/tasks/dynamodb/index.ts';"],
      ['test/integration/tasks/dynamodb/ok.test.ts', "import { toItem } from '../../../../shared/tasks/dynamodb/codec.ts';"],
      ['shared/engines/lambda/m.ts', "import { SfnWorkflowEngine } from '../stepfunctions/index.ts';"],
      ['shared/engines/l.ts', "import { SfnWorkflowEngine } from './stepfunctions/index.ts';"],
      ['bin/local/stepfunctions/h.ts', "import { LambdaEngine } from '../../../shared/engines/lambda/index.ts';"],
      ['shared/engines/stepfunctions/ok.ts', "import type { EngineAdapter } from '../port.ts';\nimport { x } from './engine.ts';"],
      ['functions/lib/ok.ts', "import { SfnWorkflowEngine } from '../../shared/engines/stepfunctions/index.ts';"],
      ['functions/tools/ok.ts', "import { defineTool } from '#tool';\nimport * as z from 'zod';\nimport { join } from 'node:path';"],
    ]);
    const found = checkImports(planted, aliases).map((v) => `${v.file} ${v.imports}: ${v.rule}`);
    assert.deepEqual(found, [
      'functions/tools/x.ts ../../bin/cli/cli.ts: a Lambda-bundled module imports bin/',
      'shared/tasks/y.ts ../../functions/mcp/deployed.ts: the core (shared/) imports a function',
      'shared/log2.ts commander: a Lambda-bundled module imports a package that is not for functions',
      'functions/lib/z.ts ../../infra/mcp-tasks.ts: a Lambda-bundled module imports infra/',
      'infra/constructs/w.ts #tool-kit: the CDK app imports kit/',
      'infra/constructs/u.ts ../../bin/local/stack.ts: the CDK app imports bin/',
      'bin/ops/v.ts ../../test/support/sandbox.ts: a terminal module imports the tests',
      'bin/scripts/k.ts ../../kit/kit.ts: a terminal module imports the test kit',
      'kit/j.ts ../infra/mcp-tasks.ts: the test kit imports infra/',
      'shared/tasks/q.ts ../actions/task-actions.ts: shared/tasks/ imports shared/actions/, a layer above it',
      'shared/auth/r.ts ../runtime/run.ts: shared/auth/ imports shared/runtime/, a layer above it',
      'shared/events/n.ts ../runtime/tool.ts: shared/events/ imports shared/runtime/, a layer above it',
      'bin/ops/t.ts ../../shared/tasks/dynamodb/codec.ts: imports a file inside the shared/tasks/dynamodb/ wing, whose entry is its index.ts',
      'shared/protocol/s.ts ../tasks/memory/store.ts: imports a file inside the shared/tasks/memory/ wing, whose entry is its index.ts',
      'test/integration/p.test.ts ../../shared/tasks/dynamodb/codec.ts: imports a file inside the shared/tasks/dynamodb/ wing, whose entry is its index.ts',
      'shared/tasks/memory/o.ts ../dynamodb/codec.ts: imports a file inside the shared/tasks/dynamodb/ wing, whose entry is its index.ts',
      'shared/engines/lambda/m.ts ../stepfunctions/index.ts: the lambda engine imports the stepfunctions engine',
      'shared/engines/l.ts ./stepfunctions/index.ts: the engine port imports the stepfunctions engine',
      'bin/local/stepfunctions/h.ts ../../../shared/engines/lambda/index.ts: the stepfunctions engine imports the lambda engine',
    ]);
  });

  it('no module imports itself through others, type-only imports included', () => {
    const tree = readTree(ROOT, ['functions', 'shared', 'infra', 'bin', 'kit', 'test']);
    assert.deepEqual(importCycles(tree, aliases), []);
  });

  it('a planted circle is found, type-only or not', () => {
    const planted = new Map([
      ['bin/a.ts', "import { b } from './b.ts';"],
      ['bin/b.ts', "import type { C } from './c/c.ts';"],
      ['bin/c/c.ts', "export { a } from '../a.ts';"],
      ['bin/d.ts', "import { a } from './a.ts';"],
    ]);
    assert.deepEqual(importCycles(planted, aliases), [['bin/a.ts', 'bin/b.ts', 'bin/c/c.ts']]);
  });
});
