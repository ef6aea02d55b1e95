/**
 * The deployment's tracing: off (the default), OpenTelemetry spans to X-Ray
 * (its OTLP endpoint, SigV4-signed with the function's own role), or to any
 * OTLP/HTTP endpoint. On, the generated entries of the MCP function, the
 * worker, the callbacks function and the workflow receiver and consumer
 * install the adapter (`shared/tracing/otel/`): no other bundle, and
 * no bundle of a deployment with tracing off, carries OpenTelemetry.
 * The construct never turns on X-Ray's Transaction Search (an account-wide
 * setting that moves the account's span ingestion to CloudWatch Logs
 * pricing): docs/tracing.md says how, and what it costs.
 */

import { Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { TRACING_ENV } from '../shared/tracing/otel/index.ts';
import type { TaskFunction } from './constructs/task-function.ts';

/** Where spans go, when tracing is on. */
export interface TracingTarget {
  /** `xray`: X-Ray's OTLP endpoint in the stack's region; else an OTLP/HTTP endpoint's base URL (`…/v1/traces` is added). */
  readonly exportTo: 'xray' | string;
  /** How spans are encoded for an OTLP endpoint (X-Ray takes protobuf only). @default `http/protobuf` */
  readonly protocol?: 'http/protobuf' | 'http/json';
  /** Spans of `tasks/get` requests too (a polling client sends one every few seconds per task). @default `false` */
  readonly tasksGet?: boolean;
  /** `OTEL_TRACES_SAMPLER` (and its ratio, `samplerArg`). @default `parentbased_always_on` */
  readonly sampler?: string;
  readonly samplerArg?: string;
}

/**
 * The construct's `tracing` prop: `false`/`'off'` (the default), `'xray'`,
 * or a {@link TracingTarget}. `true`, the earlier flag (Lambda's active
 * X-Ray tracing), means `'xray'`: one trace per task instead of one per
 * invocation.
 */
export type TracingProp = boolean | 'off' | 'xray' | TracingTarget;

/** The prop as a target, or `undefined` for off; an endpoint that is not an `http(s)` URL throws. */
export function tracingTarget(prop: TracingProp | undefined): TracingTarget | undefined {
  if (prop === undefined || prop === false || prop === 'off') return undefined;
  if (prop === true || prop === 'xray') return { exportTo: 'xray' };
  if (prop.exportTo !== 'xray' && !/^https?:\/\/[^\s]+$/.test(prop.exportTo)) {
    throw new Error(`McpTasks: tracing.exportTo must be "xray" or an http(s) URL of an OTLP endpoint, got "${prop.exportTo}"`);
  }
  return prop;
}

/** The variables a traced function reads (`shared/tracing/otel/settings.ts`). */
export function tracingEnvironment(target: TracingTarget, serviceName: string): Record<string, string> {
  return {
    [TRACING_ENV.serviceName]: serviceName,
    ...(target.exportTo === 'xray'
      ? { [TRACING_ENV.exportTo]: 'xray' }
      : { [TRACING_ENV.exportTo]: 'otlp', [TRACING_ENV.endpoint]: target.exportTo }),
    ...(target.protocol && target.exportTo !== 'xray' ? { [TRACING_ENV.protocol]: target.protocol } : {}),
    ...(target.tasksGet ? { [TRACING_ENV.tasksGet]: 'true' } : {}),
    ...(target.sampler ? { [TRACING_ENV.sampler]: target.sampler } : {}),
    ...(target.samplerArg ? { [TRACING_ENV.samplerArg]: target.samplerArg } : {}),
  };
}

/**
 * The actions X-Ray's OTLP endpoint authorizes a span upload as (the service
 * reference names `PutSpans`; its page on API keys, `PutTraceSegments`).
 * Neither supports resource-level permissions: `Resource` is `*`.
 */
export const XRAY_SPAN_ACTIONS = ['xray:PutSpans', 'xray:PutTraceSegments'] as const;

/** Turns tracing on for `fn` (its generated entry installs the adapter): the variables, and for X-Ray the grant on `*`, acknowledged. */
export function traceFunction(fn: TaskFunction, target: TracingTarget, serviceName: string): void {
  for (const [name, value] of Object.entries(tracingEnvironment(target, serviceName))) fn.function.addEnvironment(name, value);
  if (target.exportTo !== 'xray') return;
  fn.role.addToPolicy(new PolicyStatement({ actions: [...XRAY_SPAN_ACTIONS], resources: ['*'] }));
  Validations.of(fn.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'Tracing to X-Ray uploads spans with xray:PutSpans (and PutTraceSegments), which support no resource-level permissions (X-Ray ' +
      'accepts only "*"). No other statement of this role uses a wildcard resource.',
  });
}
