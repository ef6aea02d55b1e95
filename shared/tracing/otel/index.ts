/**
 * The OpenTelemetry adapter of the tracing port (a wing: imported only
 * through this module). It enters a Lambda bundle only through the entry
 * generated for a deployment with tracing on ({@link deployedTracing}), and
 * `npm start` only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
 */
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type Sampler, SimpleSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { errorName, jsonLog, type Log } from '../../log.ts';
import { installTracing } from '../tracing.ts';
import { OtlpHttpExporter } from './exporter.ts';
import { DEFAULT_SERVICE_NAME, type TracingSettings, tracingSettingsOf } from './settings.ts';
import { OtelTracing } from './tracer.ts';

export { OtlpHttpExporter } from './exporter.ts';
export { samplerOf, TRACING_ENV } from './settings.ts';
export { sigV4Signer } from './sigv4.ts';

/** A tracer over a given exporter (tests: an in-memory one; spans are handed over as each ends). */
export function otelTracing(options: { exporter: SpanExporter; sampler?: Sampler; tasksGet?: boolean; serviceName?: string }): OtelTracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? DEFAULT_SERVICE_NAME }),
    ...(options.sampler ? { sampler: options.sampler } : {}),
    spanProcessors: [new SimpleSpanProcessor({ exporter: options.exporter })],
  });
  return new OtelTracing(provider, options.tasksGet ?? false);
}

/** The tracer `settings` describe: spans batched, then posted over OTLP/HTTP. */
function batchedTracing(settings: TracingSettings): OtelTracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    sampler: settings.sampler,
    spanProcessors: [
      new BatchSpanProcessor({ exporter: new OtlpHttpExporter(settings.exporter), scheduledDelayMillis: settings.scheduleDelayMs }),
    ],
  });
  return new OtelTracing(provider, settings.tasksGet);
}

/** `npm start`'s tracer: the one the standard variables in `env` describe, or `undefined` when they name no endpoint. */
export function tracingFromEnv(env: Record<string, string | undefined>): OtelTracing | undefined {
  const settings = tracingSettingsOf(env);
  return settings && batchedTracing(settings);
}

/**
 * A deployed function's tracing, installed for its composition (called at
 * module scope by the generated entry, before the handler is composed), and
 * `flushing`, which wraps the handler so that the spans of each invocation
 * are exported before it returns (Lambda freezes the function after).
 */
export function deployedTracing(
  env: Record<string, string | undefined> = process.env,
  log: Log = jsonLog(),
): {
  flushing<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
} {
  const tracing = tracingFromEnv(env);
  if (!tracing) return { flushing: (handler) => handler };
  installTracing(tracing);
  return {
    flushing:
      (handler) =>
      async (...args) => {
        try {
          return await handler(...args);
        } finally {
          // A failed export costs the spans, never the invocation: it is logged and the answer stands.
          await tracing.flush().catch((error: unknown) => log({ event: 'trace-export-failed', error: errorName(error) }));
        }
      },
  };
}
