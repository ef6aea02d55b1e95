/**
 * Tracing under `npm start`: with `OTEL_EXPORTER_OTLP_ENDPOINT` naming this
 * test's own OTLP/HTTP receiver (`http/json`), a task's spans arrive there,
 * and the `traceparent` a client puts in `params._meta` is the parent of the
 * call's span and the trace of the task's run.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, requestMeta, resultOf, rpc } from '../support/wire.ts';

/** A span as OTLP/JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

interface OtlpRequest {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans: Array<{ spans: OtlpSpan[] }>;
  }>;
}

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describe('npm start exports spans over OTLP/HTTP', () => {
  let receiver: Server;
  let stack: LocalStackProcess;
  const received: OtlpRequest[] = [];
  const contentTypes: string[] = [];

  before(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces') {
          contentTypes.push(String(request.headers['content-type']));
          received.push(JSON.parse(body) as OtlpRequest);
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    stack = await startLocalStackProcess({
      env: {
        TASKS_TOOLSET: 'test',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'tasks-under-test',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
  });

  after(async () => {
    await stack?.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  const spans = () => received.flatMap((request) => request.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
  const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

  it("the call's span is the client's child, and the task's run is in the client's trace", async () => {
    const meta = { ...requestMeta(), traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` };
    const reply = await rpc(stack.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 } }, { meta });
    const created = resultOf(reply);
    const taskId = String((created['task'] as { taskId?: string } | undefined)?.taskId ?? created['taskId']);
    await pollUntil(stack.url, taskId, (task) => task.status === 'completed', 60_000);

    // Generous: the batch goes out 100 ms after the run ends, on a machine that may be busy.
    await waitFor("the run's span", () => spans().some((span) => span.name === 'run slow_compute'), 30_000);
    const call = spans().find((span) => span.name === 'tools/call slow_compute');
    const run = spans().find((span) => span.name === 'run slow_compute');
    assert.ok(
      call && run,
      `spans received: ${spans()
        .map((span) => span.name)
        .join(', ')}`,
    );
    assert.equal(call.traceId, CLIENT_TRACE);
    assert.equal(call.parentSpanId, CLIENT_SPAN);
    assert.equal(attribute(call, 'mcp.method.name'), 'tools/call');
    assert.equal(attribute(call, 'mcp.task.id'), taskId);
    assert.equal(run.traceId, CLIENT_TRACE);
    assert.equal(run.parentSpanId, call.spanId);
    assert.equal(attribute(run, 'mcp.task.id'), taskId);
    const service = received[0]?.resourceSpans[0]?.resource.attributes.find((a) => a.key === 'service.name');
    assert.equal(service?.value.stringValue, 'tasks-under-test');
    assert.ok(
      contentTypes.every((type) => type === 'application/json'),
      contentTypes.join(', '),
    );
  });
});
