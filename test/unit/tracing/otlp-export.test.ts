/**
 * The OTLP/HTTP exporter against a receiver of this test's own: protobuf
 * and JSON bodies with their content types, an endpoint's refusal reported
 * as a failed export, and the SigV4 headers of an X-Ray export.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ExportResultCode } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { OtlpHttpExporter, otelTracing, sigV4Signer } from '../../../shared/tracing/otel/index.ts';

interface Received {
  contentType: string;
  body: Buffer;
}

describe('the OTLP/HTTP exporter', () => {
  let receiver: Server;
  let url: string;
  let status = 200;
  const received: Received[] = [];
  let spans: ReadableSpan[];

  before(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ contentType: String(request.headers['content-type']), body: Buffer.concat(chunks) });
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
    const memory = new InMemorySpanExporter();
    await otelTracing({ exporter: memory }).span({ name: 'tools/call greet', attributes: { 'mcp.task.id': 'task-1' } }, async () => {});
    spans = memory.getFinishedSpans();
  });

  after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

  const exported = (exporter: OtlpHttpExporter) =>
    new Promise<{ code: ExportResultCode }>((resolve) => exporter.export(spans, (result) => resolve(result)));

  it('posts protobuf (application/x-protobuf): an ExportTraceServiceRequest naming the span', async () => {
    const result = await exported(new OtlpHttpExporter({ url, protocol: 'http/protobuf' }));
    assert.equal(result.code, ExportResultCode.SUCCESS);
    const last = received.at(-1)!;
    assert.equal(last.contentType, 'application/x-protobuf');
    assert.equal(last.body[0], 0x0a, 'field 1 (resource_spans), length-delimited');
    assert.ok(last.body.includes(Buffer.from('tools/call greet')));
  });

  it('posts JSON (application/json), with the headers given', async () => {
    const result = await exported(new OtlpHttpExporter({ url, protocol: 'http/json', headers: { 'x-team': 'a' } }));
    assert.equal(result.code, ExportResultCode.SUCCESS);
    const body = JSON.parse(received.at(-1)!.body.toString('utf8')) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }>;
    };
    assert.equal(body.resourceSpans[0]?.scopeSpans[0]?.spans[0]?.name, 'tools/call greet');
  });

  it("an endpoint's refusal is a failed export", async () => {
    status = 503;
    try {
      const result = await exported(new OtlpHttpExporter({ url, protocol: 'http/protobuf' }));
      assert.equal(result.code, ExportResultCode.FAILED);
    } finally {
      status = 200;
    }
  });

  it('an X-Ray export is signed with SigV4 for the xray service, with the session token', async () => {
    const env = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'session' };
    const sign = sigV4Signer('eu-west-1', env);
    const headers = await sign({
      url: new URL('https://xray.eu-west-1.amazonaws.com/v1/traces'),
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array([1, 2, 3]),
    });
    assert.match(
      headers['authorization'] ?? '',
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/xray\/aws4_request, SignedHeaders=[a-z0-9;-]*content-type;host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    assert.equal(headers['x-amz-security-token'], 'session');
    assert.match(headers['x-amz-date'] ?? '', /^\d{8}T\d{6}Z$/);
    await assert.rejects(
      sigV4Signer('eu-west-1', {})({ url: new URL('https://x'), headers: {}, body: new Uint8Array() }),
      /no AWS credentials/,
    );
  });
});
