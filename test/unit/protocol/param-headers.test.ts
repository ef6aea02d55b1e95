/**
 * Tool parameters mirrored into `Mcp-Param-*` headers: which declarations
 * the catalogue refuses (clients would drop the tool), how a header's value
 * is encoded and read, and which calls the endpoint refuses `-32020`, HTTP
 * 400, before a task row is written.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { defineTool, jsonSchemaInput, type ToolDefinition } from '#tool';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { createEndpoint } from '../../../shared/protocol/endpoint.ts';
import {
  decodeHeaderValue,
  encodeHeaderValue,
  type HeaderParam,
  paramHeaderProblem,
  paramHeadersFor,
  scanHeaderParams,
} from '../../../shared/protocol/param-headers.ts';
import { catalogueHeaderParams } from '../../../shared/protocol/tool-headers.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { CatalogueError } from '../../../shared/runtime/catalogue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { HEADER_MISMATCH } from '../../../shared/wire.ts';
import { storePolicy } from '../../support/factories.ts';
import { errorOf, resultOf, rpc } from '../../support/wire.ts';

/** An object schema whose one property `p` is `property`. */
const withProperty = (property: Record<string, unknown>) => ({ type: 'object', properties: { p: property } });

describe('x-mcp-header declarations', () => {
  const accepted: Array<[string, Record<string, unknown>, HeaderParam[]]> = [
    ['a string', withProperty({ type: 'string', 'x-mcp-header': 'Region' }), [{ path: ['p'], name: 'Region', type: 'string' }]],
    ['an integer', withProperty({ type: 'integer', 'x-mcp-header': 'Shard' }), [{ path: ['p'], name: 'Shard', type: 'integer' }]],
    ['a boolean', withProperty({ type: 'boolean', 'x-mcp-header': 'Dry-Run' }), [{ path: ['p'], name: 'Dry-Run', type: 'boolean' }]],
    [
      'a property of a property, at any depth',
      withProperty({ type: 'object', properties: { q: { type: 'string', 'x-mcp-header': "T~e|n.a^n_t`!#$%&'*+" } } }),
      [{ path: ['p', 'q'], name: "T~e|n.a^n_t`!#$%&'*+", type: 'string' }],
    ],
    ['none', withProperty({ type: 'string' }), []],
  ];
  for (const [label, schema, params] of accepted) {
    it(`accepts ${label}`, () => assert.deepEqual(scanHeaderParams(schema), { ok: true, params }));
  }

  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an empty name', withProperty({ type: 'string', 'x-mcp-header': '' }), /must be a header name/],
    ['a name with a space', withProperty({ type: 'string', 'x-mcp-header': 'My Region' }), /RFC 9110 token/],
    ['a name with a colon', withProperty({ type: 'string', 'x-mcp-header': 'Region:' }), /RFC 9110 token/],
    ['a name with CR LF', withProperty({ type: 'string', 'x-mcp-header': 'Region\r\nX-Injected' }), /RFC 9110 token/],
    ['a name that is not a string', withProperty({ type: 'string', 'x-mcp-header': 7 }), /must be a header name/],
    ['a non-ASCII name', withProperty({ type: 'string', 'x-mcp-header': 'Région' }), /RFC 9110 token/],
    ['a number', withProperty({ type: 'number', 'x-mcp-header': 'Ratio' }), /string, integer or boolean, not "number"/],
    ['an object', withProperty({ type: 'object', 'x-mcp-header': 'Obj' }), /not "object"/],
    ['an array', withProperty({ type: 'array', items: { type: 'string' }, 'x-mcp-header': 'List' }), /not "array"/],
    ['no type', withProperty({ enum: ['a', 'b'], 'x-mcp-header': 'Choice' }), /not null/],
    ['a nullable string', withProperty({ type: ['string', 'null'], 'x-mcp-header': 'Maybe' }), /not \["string","null"\]/],
    ['the schema itself', { type: 'object', 'x-mcp-header': 'Root', properties: {} }, /on the input schema itself/],
    [
      'an array item',
      withProperty({ type: 'array', items: { type: 'object', properties: { q: { type: 'string', 'x-mcp-header': 'Q' } } } }),
      /"p\.\(items\)\.q".*reached through "properties" alone/,
    ],
    ['a branch of anyOf', withProperty({ anyOf: [{ type: 'string', 'x-mcp-header': 'A' }] }), /reached through "properties" alone/],
    [
      'additionalProperties',
      { type: 'object', additionalProperties: { type: 'string', 'x-mcp-header': 'Extra' } },
      /reached through "properties" alone/,
    ],
    [
      'a definition behind $ref',
      { type: 'object', properties: { p: { $ref: '#/$defs/r' } }, $defs: { r: { type: 'string', 'x-mcp-header': 'R' } } },
      /reached through "properties" alone/,
    ],
    ['if/else', withProperty({ if: { type: 'string' }, else: { type: 'string', 'x-mcp-header': 'E' } }), /reached through/],
    [
      'two names equal but for case',
      {
        type: 'object',
        properties: { a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'REGION' } },
      },
      /"REGION" on "b": the header names must differ whatever the case \("Region"\)/,
    ],
  ];
  for (const [label, schema, message] of refused) {
    it(`refuses ${label}`, () => {
      const scan = scanHeaderParams(schema);
      assert.equal(scan.ok, false, `${label} must be refused`);
      assert.match(scan.ok ? '' : scan.problem, message);
    });
  }
});

const regional = defineTool({
  name: 'regional',
  description: 'Runs in a region.',
  inputSchema: z.object({
    region: z.string().meta({ 'x-mcp-header': 'Region' }),
    shard: z.number().int().meta({ 'x-mcp-header': 'Shard' }).optional(),
    query: z.string().optional(),
  }),
  execution: 'task',
  handler: async ({ region }) => `Ran in ${region}`,
});

describe('the catalogue', () => {
  it("takes a zod parameter's .meta({ 'x-mcp-header' }) into its input schema's declarations", () => {
    assert.deepEqual(catalogueHeaderParams([regional]).get('regional'), [
      { path: ['region'], name: 'Region', type: 'string' },
      { path: ['shard'], name: 'Shard', type: 'integer' },
    ]);
  });

  it('leaves out the tools that declare no header, and reads raw JSON Schema tools as written', () => {
    const raw = defineTool({
      name: 'raw',
      description: 'A raw schema.',
      inputSchema: jsonSchemaInput({ type: 'object', properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } } }),
      execution: 'sync',
      handler: async () => 'ok',
    });
    const plain = { ...regional, name: 'plain', inputSchema: z.object({ region: z.string() }) } as ToolDefinition;
    const params = catalogueHeaderParams([raw, plain]);
    assert.deepEqual([...params.keys()], ['raw']);
    assert.deepEqual(params.get('raw'), [{ path: ['tenant'], name: 'Tenant', type: 'string' }]);
  });

  const broken: Array<[string, z.ZodObject, RegExp]> = [
    ['a number parameter', z.object({ ratio: z.number().meta({ 'x-mcp-header': 'Ratio' }) }), /not "number"/],
    ['a name with a space', z.object({ r: z.string().meta({ 'x-mcp-header': 'My Region' }) }), /RFC 9110 token/],
    ['an item of a list', z.object({ r: z.array(z.string().meta({ 'x-mcp-header': 'R' })) }), /reached through "properties" alone/],
    [
      'duplicate names',
      z.object({ a: z.string().meta({ 'x-mcp-header': 'Zone' }), b: z.string().meta({ 'x-mcp-header': 'zone' }) }),
      /must differ whatever the case/,
    ],
    ['a nullable parameter', z.object({ r: z.string().nullable().meta({ 'x-mcp-header': 'R' }) }), /not \["string","null"\]/],
  ];
  for (const [label, inputSchema, message] of broken) {
    it(`refuses a tool with ${label} at start, naming the tool`, () => {
      const tool = { ...regional, name: 'broken_tool', inputSchema } as ToolDefinition;
      assert.throws(
        () => catalogueHeaderParams([regional, tool]),
        (error: unknown) =>
          error instanceof CatalogueError && /^Tool "broken_tool": x-mcp-header/.test(error.message) && message.test(error.message),
      );
    });
  }

  it('stops the endpoint from being built with such a tool', () => {
    const tool = { ...regional, inputSchema: z.object({ r: z.number().meta({ 'x-mcp-header': 'R' }) }) } as ToolDefinition;
    assert.throws(() => endpointWith(new InMemoryTaskStore(storePolicy()), new InMemoryTaskQueue(), tool), CatalogueError);
  });
});

describe('header values', () => {
  // The Value Encoding table of the 2026-07-28 Streamable HTTP transport.
  const encodings: Array<[string, string]> = [
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
    ['', '=?base64??='],
    ['a\tb c', 'a\tb c'],
  ];
  for (const [text, header] of encodings) {
    it(`${JSON.stringify(text)} travels as ${JSON.stringify(header)} and reads back`, () => {
      assert.equal(encodeHeaderValue(text), header);
      assert.equal(decodeHeaderValue(header), text);
    });
  }

  const malformed: Array<[string, string]> = [
    ['padding missing', '=?base64?SGVsbG8?='],
    ['characters outside the alphabet', '=?base64?SGVs!!!bG8=?='],
    ['the URL-safe alphabet', '=?base64?-_-_?='],
    ['bytes that are not UTF-8', `=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`],
    ['a plain value with a control character', 'a\u0001b'],
    ['a plain value with a non-ASCII character', 'caf\u00e9'],
  ];
  for (const [label, header] of malformed) {
    it(`a header with ${label} is malformed`, () => assert.equal(decodeHeaderValue(header), undefined));
  }

  it('a value with only one of the markers is literal', () => {
    assert.equal(decodeHeaderValue('=?base64?SGVsbG8='), '=?base64?SGVsbG8=');
    assert.equal(decodeHeaderValue('SGVsbG8=?='), 'SGVsbG8=?=');
  });
});

describe('a call against its headers', () => {
  const params: HeaderParam[] = [
    { path: ['region'], name: 'Region', type: 'string' },
    { path: ['limits', 'shard'], name: 'Shard', type: 'integer' },
    { path: ['dry'], name: 'Dry-Run', type: 'boolean' },
  ];
  const cases: Array<[string, Record<string, unknown>, Record<string, string>, RegExp | undefined]> = [
    ['every header matching', { region: 'eu', limits: { shard: 3 }, dry: true }, h('eu', '3', 'true'), undefined],
    ['header names in any case', { region: 'eu' }, { 'mcp-param-region': 'eu' }, undefined],
    ['a Base64 header matching', { region: 'Zürich' }, { 'Mcp-Param-Region': encodeHeaderValue('Zürich') }, undefined],
    ['an integer written 3.0', { limits: { shard: 3 } }, { 'Mcp-Param-Shard': '3.0' }, undefined],
    ['no arguments at all', {}, {}, undefined],
    ['an argument left out, its header sent anyway', {}, { 'Mcp-Param-Region': 'anything' }, undefined],
    ['a null argument', { region: null }, {}, undefined],
    ['an argument of another shape (left to the arguments check)', { region: { nested: 1 } }, {}, undefined],
    ['a header missing', { region: 'eu' }, {}, /^The Mcp-Param-Region header is missing: it must mirror arguments\.region$/],
    ['a nested header missing', { limits: { shard: 1 } }, {}, /Mcp-Param-Shard header is missing: it must mirror arguments\.limits\.shard/],
    ['a different value', { region: 'eu' }, { 'Mcp-Param-Region': 'us' }, /^The Mcp-Param-Region header does not match arguments\.region$/],
    ['a value differing in case', { region: 'eu' }, { 'Mcp-Param-Region': 'EU' }, /does not match/],
    ['a different integer', { limits: { shard: 3 } }, { 'Mcp-Param-Shard': '4' }, /Mcp-Param-Shard header does not match/],
    ['a boolean in capitals', { dry: false }, { 'Mcp-Param-Dry-Run': 'FALSE' }, /Mcp-Param-Dry-Run header does not match/],
    ['Base64 without its padding', { region: 'Hello' }, { 'Mcp-Param-Region': '=?base64?SGVsbG8?=' }, /header is malformed/],
    ['Base64 of another value', { region: 'Hello' }, { 'Mcp-Param-Region': '=?base64?SGVsbG8h?=' }, /does not match/],
  ];
  for (const [label, args, headers, problem] of cases) {
    it(`${problem ? 'refuses' : 'accepts'} ${label}`, () => {
      const found = paramHeaderProblem(params, args, new Headers(headers));
      if (problem) assert.match(found ?? '(accepted)', problem);
      else assert.equal(found, undefined);
    });
  }

  it('the problem never quotes a value', () => {
    const found = paramHeaderProblem(params, { region: 'secret-eu' }, new Headers({ 'Mcp-Param-Region': 'secret-us' }));
    assert.ok(found && !found.includes('secret'), found);
  });

  it('a client sends the headers its arguments need (paramHeadersFor)', () => {
    const schema = {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer', 'x-mcp-header': 'N' } },
    };
    assert.deepEqual(paramHeadersFor(schema, { region: 'Zürich', n: 42 }), {
      'Mcp-Param-Region': '=?base64?WsO8cmljaA==?=',
      'Mcp-Param-N': '42',
    });
    assert.deepEqual(paramHeadersFor(schema, { region: null }), {});
  });
});

/** `Mcp-Param-Region`, `-Shard` and `-Dry-Run` with these values. */
function h(region: string, shard: string, dry: string): Record<string, string> {
  return { 'Mcp-Param-Region': region, 'Mcp-Param-Shard': shard, 'Mcp-Param-Dry-Run': dry };
}

function endpointWith(store: InMemoryTaskStore, queue: InMemoryTaskQueue, tool: ToolDefinition = regional) {
  const key = randomBytes(32);
  return createEndpoint({
    store,
    queue,
    tools: new Map([[tool.name, tool]]),
    config: DEFAULT_SETTINGS,
    log: () => {},
    stackSecret: async () => key,
    originPolicy: { kind: 'loopback' },
  });
}

/** The in-memory store, counting the rows it is asked to write. */
class CountingStore extends InMemoryTaskStore {
  writes = 0;
  override async create(...args: Parameters<InMemoryTaskStore['create']>) {
    this.writes++;
    return super.create(...args);
  }
}

describe('the endpoint', () => {
  const start = () => {
    const store = new CountingStore(storePolicy());
    const queue = new InMemoryTaskQueue();
    const served = endpointWith(store, queue);
    const target = (request: Request) => served.fetch(request, 'alice');
    const call = (args: Record<string, unknown>, headers: Record<string, string | undefined>) =>
      rpc(target, 'tools/call', { name: 'regional', arguments: args }, { headers });
    const rows = () => store.writes;
    return { queue, call, rows };
  };

  const refusals: Array<[string, Record<string, unknown>, Record<string, string | undefined>]> = [
    ['missing', { region: 'eu' }, {}],
    ['mismatched', { region: 'eu' }, { 'Mcp-Param-Region': 'us' }],
    ['with invalid Base64', { region: 'eu' }, { 'Mcp-Param-Region': '=?base64?ZX?=' }],
    ['of a second parameter mismatched', { region: 'eu', shard: 2 }, { 'Mcp-Param-Region': 'eu', 'Mcp-Param-Shard': '20' }],
  ];
  for (const [label, args, headers] of refusals) {
    it(`answers a 2026-07-28 call with its header ${label} -32020, HTTP 400, before any row is written`, async () => {
      const { queue, call, rows } = start();
      const response = await call(args, headers);
      assert.equal(response.status, 400, response.text);
      assert.equal(errorOf(response).code, HEADER_MISMATCH);
      assert.equal(response.body?.id, response.requestId, 'the error echoes the request id');
      assert.equal(rows(), 0, 'no task row');
      assert.equal(queue.sent.length, 0, 'nothing queued');
    });
  }

  it('starts the task when the headers match (Base64 included)', async () => {
    const { queue, call, rows } = start();
    const response = await call(
      { region: 'Zürich', shard: 2 },
      { 'Mcp-Param-Region': encodeHeaderValue('Zürich'), 'Mcp-Param-Shard': '2' },
    );
    assert.equal(resultOf(response)['resultType'], 'task', response.text);
    assert.equal(rows(), 1);
    assert.equal(queue.sent.length, 1);
  });
});
