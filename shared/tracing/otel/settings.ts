/**
 * Where spans go and which are kept, read once from the environment: the
 * standard OpenTelemetry variables (`npm start`, and any OTLP endpoint a
 * deployment names) and the deployment's own choice of X-Ray, which the
 * construct sets on the functions of a deployment with tracing on.
 */
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, type Sampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { headersOf, type OtlpExporterOptions, type OtlpProtocol, tracesUrlOf } from './exporter.ts';
import { sigV4Signer, xrayTracesUrl } from './sigv4.ts';

/** The variables, by name: the construct sets them, this module reads them. */
export const TRACING_ENV = {
  /** `xray`: X-Ray's OTLP endpoint in the function's region, signed; `otlp`: `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  exportTo: 'TASKS_TRACING',
  /** `true`: `tasks/get` requests get spans too. */
  tasksGet: 'TASKS_TRACE_TASKS_GET',
  endpoint: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  tracesEndpoint: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  protocol: 'OTEL_EXPORTER_OTLP_PROTOCOL',
  headers: 'OTEL_EXPORTER_OTLP_HEADERS',
  sampler: 'OTEL_TRACES_SAMPLER',
  samplerArg: 'OTEL_TRACES_SAMPLER_ARG',
  serviceName: 'OTEL_SERVICE_NAME',
  scheduleDelay: 'OTEL_BSP_SCHEDULE_DELAY',
} as const;

/** What the tracer is built from. */
export interface TracingSettings {
  exporter: OtlpExporterOptions;
  sampler: Sampler;
  serviceName: string;
  /** The batch processor's delay between exports (ms); a Lambda function also flushes before each return. */
  scheduleDelayMs: number;
  tasksGet: boolean;
}

/** The service name spans carry when `OTEL_SERVICE_NAME` names none. */
export const DEFAULT_SERVICE_NAME = 'mcp-tasks-serverless';

/**
 * The settings `env` gives, or `undefined` when it names nowhere to send
 * spans (no `OTEL_EXPORTER_OTLP_ENDPOINT` and no `TASKS_TRACING=xray`):
 * tracing stays off. A value that is not understood throws, naming it.
 */
export function tracingSettingsOf(env: Record<string, string | undefined>): TracingSettings | undefined {
  const exportTo = env[TRACING_ENV.exportTo];
  const region = env['AWS_REGION'];
  let exporter: OtlpExporterOptions;
  if (exportTo === 'xray') {
    if (!region) throw new Error(`${TRACING_ENV.exportTo}=xray needs AWS_REGION`);
    // X-Ray's OTLP endpoint takes protobuf only; the SDK's endpoint variables move it (a test's proxy).
    const moved = env['AWS_ENDPOINT_URL_XRAY'] || env['AWS_ENDPOINT_URL'];
    const url = moved ? tracesUrlOf(moved) : xrayTracesUrl(region);
    exporter = { url, protocol: 'http/protobuf', sign: sigV4Signer(region, env) };
  } else {
    const traces = env[TRACING_ENV.tracesEndpoint];
    const base = env[TRACING_ENV.endpoint];
    if (!traces && !base) return undefined;
    exporter = {
      url: traces || tracesUrlOf(base as string),
      protocol: protocolOf(env[TRACING_ENV.protocol]),
      headers: headersOf(env[TRACING_ENV.headers]),
    };
  }
  return {
    exporter,
    sampler: samplerOf(env[TRACING_ENV.sampler], env[TRACING_ENV.samplerArg]),
    serviceName: env[TRACING_ENV.serviceName] || DEFAULT_SERVICE_NAME,
    scheduleDelayMs: numberOf(TRACING_ENV.scheduleDelay, env[TRACING_ENV.scheduleDelay], 5000),
    tasksGet: env[TRACING_ENV.tasksGet] === 'true',
  };
}

function protocolOf(value: string | undefined): OtlpProtocol {
  if (value === undefined || value === '' || value === 'http/protobuf') return 'http/protobuf';
  if (value === 'http/json') return 'http/json';
  throw new Error(`${TRACING_ENV.protocol}=${value}: this server exports over http/protobuf or http/json (not grpc)`);
}

/** `OTEL_TRACES_SAMPLER` (and its argument, a ratio), as the specification names them; default `parentbased_always_on`. */
export function samplerOf(name: string | undefined, arg: string | undefined): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(arg === undefined || arg === '' ? 1 : numberOf(TRACING_ENV.samplerArg, arg, 1));
  switch (name ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case '':
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      throw new Error(`${TRACING_ENV.sampler}=${name}: not a sampler this server knows`);
  }
}

function numberOf(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new Error(`${name}=${value}: not a number`);
  return number;
}
