/**
 * What `npm run build` compiles (`bin/scripts/build.ts`): the package's
 * entries, the CLI and every module synthesis names by path, each an
 * existing source. The package lane bundles each function entry from the
 * packed tarball (`test/package/entries.test.ts`).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildRoots } from '../../../bin/scripts/build.ts';
import { FUNCTION_MODULES } from '../../../infra/constructs/function-code.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('the build', () => {
  const roots = buildRoots();

  it('starts from existing sources', () => {
    assert.deepEqual(
      roots.filter((path) => !existsSync(`${ROOT}${path}`)),
      [],
    );
  });

  it("starts from every function's module, the Step Functions engine, the catalogue, the entries and the CLI", () => {
    for (const path of Object.values(FUNCTION_MODULES)) assert.ok(roots.includes(`${path}.ts`), path);
    for (const path of [
      'functions/lib/sfn.ts',
      'shared/runtime/catalogue.ts',
      'shared/runtime/tool.ts',
      'infra/mcp-tasks.ts',
      'kit/kit.ts',
      'bin/cli/cli.ts',
    ])
      assert.ok(roots.includes(path), path);
  });
});
