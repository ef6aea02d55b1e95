import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { conformanceTools } from '../../../functions/fixtures/conformance.ts';
import { testingTools } from '../../../functions/fixtures/durability/fixtures.ts';
import { catalogue, productTools } from '../../../functions/tools/index.ts';
import { CatalogueError, validateCatalogue } from '../../../shared/runtime/catalogue.ts';
import { defineTool, type ToolDefinition } from '../../../shared/runtime/tool.ts';

const valid = defineTool({
  name: 'valid_tool',
  description: 'A tool.',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async () => 'ok',
});
/** A definition as plain JavaScript (or a cast) could produce it. */
const broken = (overrides: Record<string, unknown>) => ({ ...valid, ...overrides }) as unknown as ToolDefinition;

describe('tool catalogue validation', () => {
  it('accepts every catalogue the project serves', () => {
    for (const tools of [productTools, conformanceTools, [...productTools, ...conformanceTools, ...testingTools]]) {
      assert.equal(catalogue(tools).size, tools.length);
    }
  });

  it('refuses a second tool with an existing name, naming it', () => {
    assert.throws(
      () => validateCatalogue([valid, { ...valid, description: 'another' }]),
      (error: unknown) => {
        assert.ok(error instanceof CatalogueError);
        assert.match(error.message, /Tool "valid_tool" is defined twice/);
        return true;
      },
    );
  });

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    ['without execution', { execution: undefined }, /Tool "valid_tool": execution must be one of sync, task, optional/],
    ['with an unknown execution', { execution: 'background' }, /execution must be one of/],
    ['with an invalid name', { name: 'has space' }, /Tool "has space": the name must be/],
    ['without a name', { name: undefined }, /Tool #1 of the catalogue: the name must be/],
    ['without a description', { description: ' ' }, /Tool "valid_tool": has no description/],
    ['whose inputSchema is not zod', { inputSchema: { type: 'object' } }, /inputSchema must be a zod schema/],
    ['whose inputSchema is not an object', { inputSchema: z.string() }, /zod object schema/],
    ['without a handler', { handler: undefined }, /has no handler function/],
    ['with prepare on a sync tool', { execution: 'sync', prepare: async () => {} }, /prepare only applies/],
    ['with inline on a task tool', { inline: () => true }, /inline must be a function, on an optional tool/],
    ['with a bad pollIntervalMs', { pollIntervalMs: -1 }, /pollIntervalMs must be a positive integer/],
    ['with an empty version', { version: '' }, /version must be a non-empty string/],
  ];
  for (const [what, overrides, message] of invalid) {
    it(`refuses a tool ${what}, naming it`, () => {
      assert.throws(() => validateCatalogue([broken(overrides)]), message);
    });
  }
});
