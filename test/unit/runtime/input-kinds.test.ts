/**
 * The runtime's input kinds besides elicitation and sampling (`roots/list`),
 * progress amounts, and tools whose input schema is raw JSON Schema.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { describeTool } from '../../../shared/protocol/server.ts';
import { validateCatalogue } from '../../../shared/runtime/catalogue.ts';
import { jsonSchemaInput } from '../../../shared/runtime/json-schema.ts';
import { runTool } from '../../../shared/runtime/run.ts';
import type { RunOptions } from '../../../shared/runtime/run-types.ts';
import { defineTool, type ProgressAmount, type ToolDefinition } from '../../../shared/runtime/tool.ts';

function options(overrides: Partial<RunOptions> = {}): RunOptions {
  return {
    taskId: undefined,
    clientCapabilities: { roots: {} },
    answers: {},
    cancel: new AbortController().signal,
    progress: async () => {},
    ...overrides,
  };
}

const rootsTool = defineTool({
  name: 'roots',
  description: 'Lists the roots',
  inputSchema: z.object({}),
  execution: 'sync',
  handler: async (_args, ctx) => (await ctx.listRoots('where')).roots.map((root) => root.uri).join(','),
});

describe('ctx.listRoots', () => {
  it('asks roots/list under its key, and returns the recorded answer on the next run', async () => {
    assert.deepEqual(await runTool(rootsTool, {}, options()), {
      kind: 'input',
      inputRequests: { where: { method: 'roots/list', params: {} } },
    });
    const answered = await runTool(rootsTool, {}, options({ answers: { where: { roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] } } }));
    assert.deepEqual(answered, { kind: 'result', result: { content: [{ type: 'text', text: 'file:///a,file:///b' }] } });
  });

  it('fails with -32021 naming roots when the client did not declare it', async () => {
    const outcome = await runTool(rootsTool, {}, options({ clientCapabilities: { elicitation: {} } }));
    assert.deepEqual(outcome, {
      kind: 'protocol-error',
      error: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { roots: {} } } },
    });
  });
});

describe('ctx.progress amounts', () => {
  it('passes the amount through to the run’s progress sink', async () => {
    const seen: [string, ProgressAmount | undefined][] = [];
    const tool = defineTool({
      name: 'p',
      description: 'p',
      inputSchema: z.object({}),
      execution: 'sync',
      handler: async (_args, ctx) => {
        await ctx.progress('half', { progress: 50, total: 100 });
        await ctx.progress('no figure');
        return 'done';
      },
    });
    await runTool(tool, {}, options({ progress: async (message, amount) => void seen.push([message, amount]) }));
    assert.deepEqual(seen, [
      ['half', { progress: 50, total: 100 }],
      ['no figure', undefined],
    ]);
  });
});

describe('jsonSchemaInput', () => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object' as const,
    $defs: { city: { $anchor: 'cityDef', type: 'string' } },
    properties: { city: { $ref: '#/$defs/city' }, phone: { type: 'string' }, email: { type: 'string' } },
    anyOf: [{ required: ['phone'] }, { required: ['email'] }],
    additionalProperties: false,
  };
  const tool: ToolDefinition = defineTool({
    name: 'contact',
    description: 'contact',
    inputSchema: jsonSchemaInput(schema),
    execution: 'sync',
    handler: async (args) => JSON.stringify(args),
  });

  it('is listed exactly as written', () => {
    assert.deepEqual(describeTool(tool).inputSchema, schema);
  });

  it('passes the catalogue checks', () => {
    assert.equal(validateCatalogue([tool]).get('contact'), tool);
  });

  it('validates arguments with the JSON Schema, keeping them as sent', () => {
    assert.deepEqual(tool.inputSchema.safeParse({ email: 'a@example.com', city: 'Paris' }), {
      success: true,
      data: { email: 'a@example.com', city: 'Paris' },
    });
    for (const bad of [{}, { email: 'a', extra: 1 }, { phone: 5 }, { email: 'a', city: 3 }]) {
      const parsed = tool.inputSchema.safeParse(bad);
      assert.equal(parsed.success, false, JSON.stringify(bad));
      assert.match(parsed.error?.issues[0]?.message ?? '', /must/);
    }
  });
});
