/**
 * Tracing deployed: the earlier `tracing` flag (`-c tracing=true`) maps onto
 * the construct's prop as X-Ray; then the MCP function and the worker (the
 * functions whose generated entries install the adapter) get the variables
 * and the X-Ray upload actions on `*`, acknowledged for cdk-nag; no other
 * function does, and none has Lambda's active tracing. Off (the default),
 * no function has any of it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tracingEnvironment, tracingTarget, XRAY_SPAN_ACTIONS } from '../../infra/tracing.ts';
import { TRACING_ENV } from '../../shared/tracing/otel/index.ts';
import { asList, functions, type Json, resourcesOf, roleLogicalIdOf, statementsOf, templateStacks } from './synth.ts';

const stacks = templateStacks();

const xrayStatements = (json: Json, fn: Json) =>
  statementsOf(json, roleLogicalIdOf(fn)).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('xray:')));
const variablesOf = (fn: Json) => (fn['Properties']['Environment']?.['Variables'] ?? {}) as Record<string, unknown>;

describe('tracing deployed', () => {
  it('tracing=true: the MCP function and the worker send to X-Ray, with the upload actions on "*" and nothing more', () => {
    const { mcp, worker } = functions(stacks.jwt.json);
    for (const [id, fn] of [mcp, worker]) {
      assert.equal(variablesOf(fn)[TRACING_ENV.exportTo], 'xray', id);
      assert.ok(variablesOf(fn)[TRACING_ENV.serviceName], id);
      const statements = xrayStatements(stacks.jwt.json, fn);
      assert.deepEqual(
        statements.map((s) => ({ actions: asList<string>(s['Action']).sort(), resources: asList<unknown>(s['Resource']) })),
        [{ actions: [...XRAY_SPAN_ACTIONS].sort(), resources: ['*'] }],
        id,
      );
    }
    const traced = new Set([mcp[0], worker[0]]);
    for (const [id, fn] of resourcesOf(stacks.jwt.json, 'AWS::Lambda::Function').filter(([id]) => !traced.has(id))) {
      assert.equal(variablesOf(fn)[TRACING_ENV.exportTo], undefined, id);
      assert.deepEqual(xrayStatements(stacks.jwt.json, fn), [], id);
    }
  });

  it('off by default: no function has a tracing variable or an X-Ray grant', () => {
    for (const [id, fn] of resourcesOf(stacks.base.json, 'AWS::Lambda::Function')) {
      assert.equal(variablesOf(fn)[TRACING_ENV.exportTo], undefined, id);
      assert.deepEqual(xrayStatements(stacks.base.json, fn), [], id);
      assert.equal(fn['Properties']['TracingConfig'], undefined, id);
    }
  });

  it('the prop: off, xray (or true), or an OTLP endpoint with its protocol, sampler and tasks/get choice', () => {
    assert.equal(tracingTarget(undefined), undefined);
    assert.equal(tracingTarget(false), undefined);
    assert.equal(tracingTarget('off'), undefined);
    assert.deepEqual(tracingTarget(true), { exportTo: 'xray' });
    const otlp = {
      exportTo: 'https://otlp.example.com',
      protocol: 'http/json' as const,
      tasksGet: true,
      sampler: 'parentbased_traceidratio',
      samplerArg: '0.1',
    };
    assert.deepEqual(tracingEnvironment(tracingTarget(otlp)!, 'stack'), {
      OTEL_SERVICE_NAME: 'stack',
      TASKS_TRACING: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      TASKS_TRACE_TASKS_GET: 'true',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    });
    assert.throws(() => tracingTarget({ exportTo: 'otlp.example.com' }), /tracing.exportTo/);
  });
});
