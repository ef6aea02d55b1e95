/**
 * The tracing port: what the functions ask of a tracer, and the no-op that
 * answers when tracing is off (the default). No OpenTelemetry here: the
 * adapter (`shared/tracing/otel/`) enters a bundle only through the entry
 * generated for a deployment with tracing on, or through `npm start` when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set; everything else imports this module,
 * which costs a bundle a few hundred bytes and a call nothing.
 */

/** A W3C trace context (`traceparent`, and `tracestate` when one came with it). */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** Attribute values a span carries: ids, names, counts and outcomes, never arguments, answers or results. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** OpenTelemetry's span kinds, by name. */
export type SpanKindName = 'server' | 'consumer' | 'internal' | 'client';

/** What a span is. */
export interface SpanSpec {
  readonly name: string;
  readonly kind?: SpanKindName;
  /** Its parent: a stored or received context; absent: the active span, if any; `null`: a new trace. */
  readonly parent?: TraceContext | null;
  /** Contexts it follows from without being their child (what resumed a task, the HTTP request's own trace). */
  readonly links?: readonly TraceContext[];
  readonly attributes?: SpanAttributes;
}

/** A span recorded after the fact (a wait), with its start and end (epoch ms). */
export interface RecordedSpanSpec extends SpanSpec {
  readonly startTime: number;
  readonly endTime: number;
}

/** The open span, as the code that runs inside it sees it. */
export interface OpenSpan {
  /** Adds attributes. */
  set(attributes: SpanAttributes): void;
  /** Marks the span failed: its status ERROR, `error.type` the given type (the conventions' rule: status ERROR whenever `error.type` is set). */
  fail(errorType: string): void;
}

/** The port. */
export interface Tracing {
  /** Whether spans are recorded at all: `false` for the no-op, so callers may skip gathering attributes. */
  readonly enabled: boolean;
  /** Whether `tasks/get` requests get spans (off by default: a polling client sends one every few seconds per task). */
  readonly tasksGet: boolean;
  /**
   * Runs `fn` inside a span that ends when `fn` settles (ERROR, with
   * `error.type` the thrown error's name, when it throws). Log lines written
   * inside carry the span's `trace_id` and `span_id`.
   */
  span<T>(spec: SpanSpec, fn: (span: OpenSpan) => Promise<T>): Promise<T>;
  /** Records a span that already happened (a wait from its start to its resume). */
  record(spec: RecordedSpanSpec): void;
  /** Adds attributes to the active span, if any. */
  annotate(attributes: SpanAttributes): void;
  /** The active span's context, if a sampled one is active: what a task row and a queue message keep. */
  current(): TraceContext | undefined;
  /** Exports what is pending; resolves once sent (a Lambda function calls it before each return). */
  flush(): Promise<void>;
}

const NO_SPAN: OpenSpan = { set: () => {}, fail: () => {} };

/** Tracing off: runs what it is given, records nothing. */
export const NO_TRACING: Tracing = {
  enabled: false,
  tasksGet: false,
  span: (_spec, fn) => fn(NO_SPAN),
  record: () => {},
  annotate: () => {},
  current: () => undefined,
  flush: () => Promise.resolve(),
};

let installed: Tracing = NO_TRACING;

/**
 * Installs the tracing a deployed function uses when its composition is given
 * none: called at module scope by the entry generated for a deployment with
 * tracing on, before the handler is composed.
 */
export function installTracing(tracing: Tracing): void {
  installed = tracing;
}

/** The tracing of a composition: the one it was given, else the installed one (the no-op unless an entry installed another). */
export function tracingOf(deps: { readonly tracing?: Tracing | undefined }): Tracing {
  return deps.tracing ?? installed;
}

/** The 32-hex trace id of a `traceparent` (`00-<trace id>-<span id>-<flags>`), if it is one. */
export function traceIdOf(context: TraceContext | string | undefined): string | undefined {
  const traceparent = typeof context === 'string' ? context : context?.traceparent;
  return traceparent === undefined ? undefined : TRACEPARENT.exec(traceparent)?.[1];
}

/** A W3C `traceparent` of version 00 (an all-zero trace or span id is invalid). */
const TRACEPARENT = /^00-((?!0{32})[0-9a-f]{32})-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** `value` as a trace context, when it is a valid `traceparent` (and a `tracestate` string, kept as given). */
export function traceContextOf(traceparent: unknown, tracestate?: unknown): TraceContext | undefined {
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  return typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= 512
    ? { traceparent, tracestate }
    : { traceparent };
}
