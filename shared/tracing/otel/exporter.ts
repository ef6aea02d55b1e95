/**
 * An OTLP/HTTP span exporter over `fetch`: the OTLP request serialized by
 * OpenTelemetry's own transformer (protobuf or JSON), posted to the traces
 * endpoint, signed first when a signer is given (X-Ray's OTLP endpoint wants
 * SigV4). Smaller than the SDK's exporters, which bring an HTTP agent stack.
 */
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/** OTLP over HTTP, as `OTEL_EXPORTER_OTLP_PROTOCOL` names it. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Adds headers to a request about to be sent (SigV4: `authorization`, `x-amz-date`, …). */
export type RequestSigner = (request: { url: URL; headers: Record<string, string>; body: Uint8Array }) => Promise<Record<string, string>>;

export interface OtlpExporterOptions {
  /** The traces endpoint itself (`…/v1/traces`). */
  url: string;
  protocol: OtlpProtocol;
  /** Extra headers (`OTEL_EXPORTER_OTLP_HEADERS`). */
  headers?: Record<string, string>;
  sign?: RequestSigner;
  /** How long one export may take (ms). */
  timeoutMs?: number;
}

export class OtlpHttpExporter implements SpanExporter {
  readonly #pending = new Set<Promise<void>>();

  constructor(private readonly options: OtlpExporterOptions) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const sent = this.#send(spans).then(
      () => resultCallback({ code: ExportResultCode.SUCCESS }),
      (error: unknown) =>
        resultCallback({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) }),
    );
    this.#pending.add(sent);
    void sent.finally(() => this.#pending.delete(sent));
  }

  async forceFlush(): Promise<void> {
    await Promise.all(this.#pending);
  }

  shutdown(): Promise<void> {
    return this.forceFlush();
  }

  async #send(spans: ReadableSpan[]): Promise<void> {
    const { protocol, url, sign, timeoutMs = 10_000 } = this.options;
    const body = (protocol === 'http/json' ? JsonTraceSerializer : ProtobufTraceSerializer).serializeRequest(spans);
    if (!body) throw new Error('OTLP: the spans could not be serialized');
    const target = new URL(url);
    const headers: Record<string, string> = {
      ...this.options.headers,
      'content-type': protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
    };
    const signed = sign ? { ...headers, ...(await sign({ url: target, headers, body })) } : headers;
    const response = await fetch(target, { method: 'POST', headers: signed, body, signal: AbortSignal.timeout(timeoutMs) });
    // The body is drained either way (keep-alive), and never logged: an endpoint may echo what it was sent.
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`OTLP: the endpoint answered HTTP ${response.status}`);
  }
}

/** The traces URL of an `OTEL_EXPORTER_OTLP_ENDPOINT` (the base URL, to which `v1/traces` is added, as the specification says). */
export function tracesUrlOf(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs, comma-separated, values percent-encoded. */
export function headersOf(value: string | undefined): Record<string, string> {
  if (!value) return {};
  return Object.fromEntries(
    value.split(',').flatMap((pair) => {
      const at = pair.indexOf('=');
      return at > 0 ? [[pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())]] : [];
    }),
  );
}
