/**
 * The tracing port over the OpenTelemetry SDK. The active span travels in an
 * `AsyncLocalStorage` of this adapter's own (no global context manager is
 * registered: the process's other OpenTelemetry users, if any, are left
 * alone), and every span is started with its parent context given explicitly.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Attributes,
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { parseTraceParent, TraceState } from '@opentelemetry/core';
import type { TracerProvider } from '@opentelemetry/sdk-trace';
import { withLogContext } from '../../log.ts';
import { MCP_ATTRIBUTES } from '../names.ts';
import type { OpenSpan, RecordedSpanSpec, SpanAttributes, SpanKindName, SpanSpec, TraceContext, Tracing } from '../tracing.ts';

const KINDS: Record<SpanKindName, SpanKind> = {
  server: SpanKind.SERVER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
  client: SpanKind.CLIENT,
};

/** The instrumentation scope's name. */
const SCOPE = 'mcp-tasks-serverless';

/** The {@link Tracing} over `provider`; `tasksGet`: whether `tasks/get` requests get spans. */
export class OtelTracing implements Tracing {
  readonly enabled = true;
  readonly #tracer: Tracer;
  readonly #active = new AsyncLocalStorage<Context>();

  constructor(
    private readonly provider: TracerProvider,
    readonly tasksGet: boolean,
  ) {
    this.#tracer = provider.getTracer(SCOPE);
  }

  span<T>(spec: SpanSpec, fn: (span: OpenSpan) => Promise<T>): Promise<T> {
    const parent = this.#parentOf(spec.parent);
    const span = this.#tracer.startSpan(spec.name, this.#options(spec), parent);
    const context = trace.setSpan(parent, span);
    const { traceId, spanId, traceFlags } = span.spanContext();
    // A sampled span's ids go on every log line written inside it (OpenTelemetry's log field names).
    const fields = traceFlags & 1 ? { trace_id: traceId, span_id: spanId } : {};
    return this.#active.run(context, () =>
      withLogContext(fields, async () => {
        try {
          return await fn(openSpan(span));
        } catch (error) {
          fail(span, error instanceof Error ? error.name : typeof error);
          throw error;
        } finally {
          span.end();
        }
      }),
    );
  }

  record(spec: RecordedSpanSpec): void {
    const parent = this.#parentOf(spec.parent);
    this.#tracer.startSpan(spec.name, { ...this.#options(spec), startTime: spec.startTime }, parent).end(spec.endTime);
  }

  annotate(attributes: SpanAttributes): void {
    const span = trace.getSpan(this.#active.getStore() ?? ROOT_CONTEXT);
    span?.setAttributes(defined(attributes));
  }

  current(): TraceContext | undefined {
    const span = trace.getSpan(this.#active.getStore() ?? ROOT_CONTEXT);
    const context = span?.spanContext();
    if (!context || !(context.traceFlags & 1)) return undefined;
    const traceparent = `00-${context.traceId}-${context.spanId}-01`;
    const tracestate = context.traceState?.serialize();
    return tracestate ? { traceparent, tracestate } : { traceparent };
  }

  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  /** The parent context: the given one (a new trace for `null`), else the active span's. */
  #parentOf(parent: TraceContext | null | undefined): Context {
    if (parent === undefined) return this.#active.getStore() ?? ROOT_CONTEXT;
    const remote = parent === null ? undefined : spanContextOf(parent);
    return remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
  }

  #options(spec: SpanSpec): { kind: SpanKind; attributes: Attributes; links: Link[] } {
    const links = (spec.links ?? []).flatMap((link) => {
      const context = spanContextOf(link);
      return context ? [{ context }] : [];
    });
    return { kind: KINDS[spec.kind ?? 'internal'], attributes: defined(spec.attributes ?? {}), links };
  }
}

function spanContextOf(context: TraceContext) {
  const parsed = parseTraceParent(context.traceparent);
  if (!parsed) return undefined;
  return { ...parsed, isRemote: true, ...(context.tracestate ? { traceState: new TraceState(context.tracestate) } : {}) };
}

function openSpan(span: Span): OpenSpan {
  return {
    set: (attributes) => span.setAttributes(defined(attributes)),
    fail: (errorType) => fail(span, errorType),
  };
}

/** `error.type` and status ERROR together, as the conventions want (no message: it may quote arguments). */
function fail(span: Span, errorType: string): void {
  span.setAttribute(MCP_ATTRIBUTES.errorType, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

function defined(attributes: SpanAttributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined)) as Attributes;
}
