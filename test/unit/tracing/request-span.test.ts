/**
 * What span a request gets (a table: `requestSpanOf`), the HTTP context it
 * links, trace contexts accepted and refused, the no-op's promise to cost
 * nothing, and the settings the standard variables give.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createdIn, resumeLink } from '../../../shared/tracing/actions.ts';
import { httpContextOf, requestSpanOf } from '../../../shared/tracing/mcp.ts';
import { samplerOf, TRACING_ENV, tracingFromEnv } from '../../../shared/tracing/otel/index.ts';
import { NO_TRACING, traceContextOf, traceIdOf } from '../../../shared/tracing/tracing.ts';

const META = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const HTTP = '00-11111111111111111111111111111111-2222222222222222-01';
const headers = (entries: Record<string, string> = {}) => new Headers(entries);
const body = (method: string, params: Record<string, unknown> = {}, id: unknown = 7) => ({ jsonrpc: '2.0', id, method, params });

describe('the span of a request', () => {
  const cases: Array<[string, Headers, unknown, Record<string, unknown> | undefined]> = [
    [
      'tools/call: named by the tool, parented by _meta, linking the HTTP context',
      headers({ traceparent: HTTP, 'mcp-session-id': 's', 'mcp-protocol-version': '2026-07-28' }),
      body('tools/call', { name: 'greet', _meta: { traceparent: META, tracestate: 'k=v' } }),
      {
        name: 'tools/call greet',
        kind: 'server',
        parent: { traceparent: META, tracestate: 'k=v' },
        links: [{ traceparent: HTTP }],
        attributes: {
          'mcp.method.name': 'tools/call',
          'jsonrpc.request.id': '7',
          'mcp.session.id': 's',
          'mcp.protocol.version': '2026-07-28',
          'gen_ai.tool.name': 'greet',
          'gen_ai.operation.name': 'execute_tool',
          'mcp.task.id': undefined,
        },
      },
    ],
    [
      'tasks/update: the task named; without _meta the HTTP context is the parent',
      headers({ traceparent: HTTP }),
      body('tasks/update', { taskId: 't-1' }, 'abc'),
      {
        name: 'tasks/update',
        kind: 'server',
        parent: { traceparent: HTTP },
        attributes: {
          'mcp.method.name': 'tasks/update',
          'jsonrpc.request.id': 'abc',
          'mcp.session.id': undefined,
          'mcp.protocol.version': undefined,
          'gen_ai.tool.name': undefined,
          'gen_ai.operation.name': undefined,
          'mcp.task.id': 't-1',
        },
      },
    ],
    ['tasks/get: sampled out', headers(), body('tasks/get', { taskId: 't-1' }), undefined],
    ['a batch: none', headers(), [body('ping')], undefined],
    ['not a request: none', headers(), { jsonrpc: '2.0', id: 1, result: {} }, undefined],
  ];
  for (const [name, given, request, expected] of cases) {
    it(name, () => assert.deepEqual(requestSpanOf(given, request, { tasksGet: false }), expected));
  }

  it('prompts/get is named by its prompt; a malformed _meta traceparent is ignored (a new trace)', () => {
    const spec = requestSpanOf(headers(), body('prompts/get', { name: 'p', _meta: { traceparent: '00-zz-zz-01' } }), { tasksGet: true });
    assert.equal(spec?.name, 'prompts/get p');
    assert.equal(spec?.parent, null);
  });

  it('an X-Amzn-Trace-Id header is the HTTP context when there is no traceparent header', () => {
    const context = httpContextOf(
      headers({ 'x-amzn-trace-id': 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' }),
    );
    assert.deepEqual(context, { traceparent: '00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01' });
    assert.equal(httpContextOf(headers({ 'x-amzn-trace-id': 'Root=1-5759e988-bd862e3fe1be46a994272793' })), undefined);
  });
});

describe('trace contexts', () => {
  it('accepts version 00 with non-zero ids; refuses the rest', () => {
    assert.deepEqual(traceContextOf(META), { traceparent: META });
    for (const bad of ['', '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, 42]) {
      assert.equal(traceContextOf(bad), undefined, String(bad));
    }
    assert.equal(traceIdOf(META), '0af7651916cd43dd8448eb211c80319c');
    assert.equal(traceIdOf(undefined), undefined);
  });
});

describe('tracing off costs nothing', () => {
  it('no trace fields on a created row, no link on a resume, the function run as given', async () => {
    assert.deepEqual(createdIn({ tracing: NO_TRACING }, 't'), {});
    assert.deepEqual(resumeLink({ tracing: NO_TRACING }, 't', 'resume'), {});
    assert.equal(await NO_TRACING.span({ name: 'x' }, async () => 7), 7);
    assert.equal(NO_TRACING.current(), undefined);
  });

  it('no endpoint in the environment: no tracer', () => {
    assert.equal(tracingFromEnv({}), undefined);
    assert.ok(tracingFromEnv({ [TRACING_ENV.endpoint]: 'http://127.0.0.1:4318' }));
  });
});

describe('the standard variables', () => {
  it('OTEL_TRACES_SAMPLER names the sampler; an unknown one or grpc is refused', () => {
    assert.match(samplerOf(undefined, undefined).toString(), /ParentBased/);
    assert.match(samplerOf('traceidratio', '0.25').toString(), /TraceIdRatioBased\{0\.25\}/);
    assert.match(samplerOf('always_off', undefined).toString(), /AlwaysOff/);
    assert.throws(() => samplerOf('sometimes', undefined), /OTEL_TRACES_SAMPLER=sometimes/);
    assert.throws(() => tracingFromEnv({ [TRACING_ENV.endpoint]: 'http://x', [TRACING_ENV.protocol]: 'grpc' }), /grpc/);
    assert.throws(() => tracingFromEnv({ [TRACING_ENV.exportTo]: 'xray' }), /AWS_REGION/);
  });
});
