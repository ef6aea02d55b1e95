/**
 * Tracing deployed: the earlier `tracing` flag (`-c tracing=true`) maps onto
 * the construct's prop as X-Ray; then the MCP function, the worker, the
 * callbacks function and the workflow receiver and consumer (the functions
 * whose generated entries install the adapter) get the variables and the
 * X-Ray upload actions on `*`, acknowledged for cdk-nag; no other function
 * does, and none has Lambda's active tracing. Off (the default), no function
 * has any of it, and every function's entry is the package's own.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { TOOLSET_SOURCES } from '../../infra/app.ts';
import { FUNCTION_MODULES, FunctionCode, TRACED_FUNCTIONS } from '../../infra/constructs/function-code.ts';
import { tracingEnvironment, tracingTarget, XRAY_SPAN_ACTIONS } from '../../infra/tracing.ts';
import { TRACING_ENV } from '../../shared/tracing/otel/index.ts';
import {
  asList,
  functions,
  type Json,
  ROOT,
  resourcesOf,
  roleLogicalIdOf,
  type Synthesized,
  statementsOf,
  synth,
  templateStacks,
  workflowFunctions,
} from './synth.ts';

const stacks = templateStacks();

const xrayStatements = (json: Json, fn: Json) =>
  statementsOf(json, roleLogicalIdOf(fn)).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('xray:')));
const variablesOf = (fn: Json) => (fn['Properties']['Environment']?.['Variables'] ?? {}) as Record<string, unknown>;

/** Exactly `traced` have the variables and the upload actions on "*" (and cdk-nag reports none of their roles). */
function assertTraced(stack: { json: Json; report: Synthesized['report'] }, traced: Array<[string, Json]>): void {
  for (const [id, fn] of traced) {
    assert.equal(variablesOf(fn)[TRACING_ENV.exportTo], 'xray', id);
    assert.ok(variablesOf(fn)[TRACING_ENV.serviceName], id);
    const statements = xrayStatements(stack.json, fn);
    assert.deepEqual(
      statements.map((s) => ({ actions: asList<string>(s['Action']).sort(), resources: asList<unknown>(s['Resource']) })),
      [{ actions: [...XRAY_SPAN_ACTIONS].sort(), resources: ['*'] }],
      id,
    );
  }
  const ids = new Set(traced.map(([id]) => id));
  for (const [id, fn] of resourcesOf(stack.json, 'AWS::Lambda::Function').filter(([id]) => !ids.has(id))) {
    assert.equal(variablesOf(fn)[TRACING_ENV.exportTo], undefined, id);
    assert.deepEqual(xrayStatements(stack.json, fn), [], id);
  }
  const findings = stack.report.pluginReports
    .filter((report) => report.pluginName === 'AwsSolutions')
    .flatMap((report) => report.violations.map((violation) => violation.ruleName));
  assert.deepEqual(findings, []);
}

describe('tracing deployed', () => {
  it('tracing=true: the MCP function, the worker and the callbacks function send to X-Ray, with the upload actions on "*" and nothing more', () => {
    const { mcp, worker, callbacks } = functions(stacks.jwt.json);
    assertTraced(stacks.jwt, [mcp, worker, callbacks]);
  });

  it('tracing=true with workflow tools: the workflow receiver and consumer send to X-Ray too, acknowledged for cdk-nag', () => {
    const stack = synth({ tracing: true, 'aws:cdk:bundling-stacks': [] });
    const { mcp, worker, callbacks } = functions(stack.json);
    const { receiver, events } = workflowFunctions(stack.json);
    assertTraced(stack, [mcp, worker, callbacks, receiver, events]);
  });

  it('tracing on: the traced functions that run no tool get an entry installing the adapter around their own handler', () => {
    const on = new FunctionCode({ tools: TOOLSET_SOURCES.conformance, projectRoot: ROOT, tracing: true });
    const off = new FunctionCode({ tools: TOOLSET_SOURCES.conformance, projectRoot: ROOT });
    for (const name of TRACED_FUNCTIONS) {
      assert.match(off.entry(name), new RegExp(`${FUNCTION_MODULES[name]}\\.ts$`), name);
      const lines = readFileSync(on.entry(name), 'utf8').split('\n');
      assert.match(lines[1]!, /^import \{ deployedTracing \} from ".*\/shared\/tracing\/otel\/index\.ts";$/, name);
      assert.equal(lines[2], `import { handler as composed } from "../../../../${FUNCTION_MODULES[name]}.ts";`, name);
      assert.deepEqual(
        lines.slice(3),
        ['const tracing = deployedTracing();', 'export const handler = tracing.flushing(composed);', ''],
        name,
      );
    }
    for (const name of ['deadLetter', 'sweeper', 'stackSecret', 'console'] as const) assert.equal(on.entry(name), off.entry(name), name);
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
