/**
 * The 2025-11-25 task methods share the one error mapper: an unexpected error
 * in `tasks/get`, `tasks/result` or `tasks/cancel` is answered as a bare
 * `-32603 Internal error` and logged by name, as in every other method.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { LogEvent } from '../../../shared/log.ts';
import { createEndpoint } from '../../../shared/protocol/endpoint.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { storePolicy } from '../../support/factories.ts';
import { parseMessages } from '../../support/wire.ts';

const SECRET = 'row 0f0f0f0f of principal bob';

/** An endpoint whose store fails every read and cancel with an exception quoting `SECRET`. */
function endpointWithFailingStore(logs: LogEvent[]) {
  const store = new InMemoryTaskStore(storePolicy());
  store.get = () => Promise.reject(new TypeError(SECRET));
  store.cancel = () => Promise.reject(new TypeError(SECRET));
  const key = randomBytes(32);
  return createEndpoint({
    store,
    queue: new InMemoryTaskQueue(),
    tools: new Map(),
    config: { taskTtlMs: 60_000, pollIntervalMs: 1_000, maxPollIntervalMs: 10_000, retentionMs: 60_000, syncBudgetMs: 1_000 },
    log: (event) => void logs.push(event),
    stackSecret: async () => key,
    originPolicy: { kind: 'loopback' },
  });
}

/** A 2025-11-25 request (no envelope, that revision's header), as a stateless client sends it. */
function legacyRequest(method: string, params: Record<string, unknown>): Request {
  return new Request('http://127.0.0.1:3000/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
}

describe('2025-11-25 task methods and the one error mapper', () => {
  for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
    it(`an unexpected error in ${method} answers a bare -32603 and is logged by name`, async () => {
      const logs: LogEvent[] = [];
      const response = await endpointWithFailingStore(logs).fetch(legacyRequest(method, { taskId: 't-1' }), 'alice');
      const text = await response.text();
      const reply = parseMessages(text, response.headers.get('content-type') ?? '').find((message) => message['id'] === 7);
      assert.deepEqual(reply?.['error'], { code: -32603, message: 'Internal error' }, text);
      assert.doesNotMatch(text, /0f0f0f0f|bob/);
      const logged = logs.filter((line) => line.event === 'request-error');
      assert.deepEqual(
        logged.map((line) => [line['method'], line['error']]),
        [[method, 'TypeError']],
        JSON.stringify(logs),
      );
      assert.doesNotMatch(JSON.stringify(logs), /0f0f0f0f|bob/);
    });
  }
});
