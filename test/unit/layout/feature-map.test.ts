/** The feature map of docs/architecture.md names files and folders that exist: a move or a rename updates it. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The paths (in backticks, under a top-level folder) that the section `## Feature map` of `markdown` names. */
function mappedPaths(markdown: string): string[] {
  const section = /^## Feature map\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1] ?? '';
  const paths = [...section.matchAll(/`([^`\s]+)`/g)].map((match) => match[1]!);
  return [...new Set(paths.filter((path) => /^(shared|functions|infra|bin|test|examples)\//.test(path)))];
}

describe('feature map', () => {
  it('names only paths that exist', () => {
    const paths = mappedPaths(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));
    assert.ok(paths.length > 40, `the map names the features' files (${paths.length})`);
    assert.deepEqual(
      paths.filter((path) => !existsSync(join(ROOT, path))),
      [],
    );
  });

  it('a planted map with a missing file reports it', () => {
    const planted =
      '## Feature map\n\n| x | `shared/actions/task-actions.ts`, `shared/gone.ts`, `POST /callbacks/<token>` |\n\n## Next\n`bin/other.ts`\n';
    assert.deepEqual(mappedPaths(planted), ['shared/actions/task-actions.ts', 'shared/gone.ts']);
  });
});
