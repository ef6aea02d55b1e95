/**
 * The project `mcp-tasks init` writes (`template/`, run end to end by the
 * package lane) synthesizes as this repository does: its `cdk.json` carries
 * the same CDK feature flags, and its app runs with tsx.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8')) as Record<string, unknown>;

describe("init's template", () => {
  it("carries this repository's CDK feature flags", () => {
    assert.deepEqual(read('template/cdk.json')['context'], read('cdk.json')['context']);
    assert.equal(read('template/cdk.json')['app'], 'npx tsx infra/app.ts');
  });
});
