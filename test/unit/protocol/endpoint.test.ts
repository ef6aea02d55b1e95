/**
 * The endpoint's answers that tell a client how to use it: the server's
 * `instructions`, the 2025-11-25 tasks capability only on that revision,
 * a fallback tool's mistakes (an oversized call included) as text a model
 * can act on, `notifications/cancelled` logged without cancelling, and a body
 * refused for its nesting answered with its request's id.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { createEndpoint } from '../../../shared/protocol/endpoint.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { MAX_ARGUMENTS_BYTES } from '../../../shared/tasks/limits.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { storePolicy } from '../../support/factories.ts';
import { parseMessages, resultOf, rpc } from '../../support/wire.ts';

function endpoint(logs: LogEvent[] = []) {
  const key = randomBytes(32);
  return createEndpoint({
    store: new InMemoryTaskStore(storePolicy()),
    queue: new InMemoryTaskQueue(),
    tools: new Map(),
    config: DEFAULT_SETTINGS,
    log: (event) => void logs.push(event),
    stackSecret: async () => key,
    originPolicy: { kind: 'loopback' },
  });
}

/** One JSON-RPC message to the endpoint; the reply to `id` 7 (undefined for a notification). */
async function send(body: Record<string, unknown>, protocolVersion: string, logs?: LogEvent[]) {
  const response = await endpoint(logs).fetch(
    new Request('http://127.0.0.1:3000/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': protocolVersion,
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    }),
    'alice',
  );
  const text = await response.text();
  return parseMessages(text, response.headers.get('content-type') ?? '').find((message) => message['id'] === 7);
}

/** The endpoint as an in-process target of the test client. */
const inProcess = (logs?: LogEvent[]) => {
  const served = endpoint(logs);
  return (request: Request) => served.fetch(request, 'alice');
};

const initialize = (protocolVersion: string) =>
  send(
    { id: 7, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    protocolVersion,
  );

describe('what the endpoint tells a client', () => {
  it('initialize carries the instructions, and the tasks capability on 2025-11-25 only', async () => {
    const current = (await initialize('2025-11-25'))?.result as Record<string, Record<string, unknown>>;
    assert.match(String(current['instructions']), /do not call the tool again[\s\S]*task_status/);
    assert.ok(current['capabilities']?.['tasks'], "2025-11-25 gets that revision's tasks");
    const earlier = (await initialize('2025-06-18'))?.result as Record<string, Record<string, unknown>>;
    assert.equal(earlier['protocolVersion'], '2025-06-18');
    assert.equal(earlier['capabilities']?.['tasks'], undefined, 'no tasks capability for a revision without them');
    assert.ok(earlier['capabilities']?.['tools']);
  });

  it('server/discover carries the instructions too', async () => {
    const reply = await rpc(inProcess(), 'server/discover', {}, { capabilities: {} });
    assert.match(String(resultOf(reply)['instructions']), /do not call the tool again[\s\S]*task_status/);
  });

  it('an oversized task_answer is a text the model can act on, not a protocol error', async () => {
    const answers = { approval: { comment: 'x'.repeat(MAX_ARGUMENTS_BYTES + 10) } };
    const reply = await rpc(inProcess(), 'tools/call', { name: 'task_answer', arguments: { taskId: 't', answers } }, { capabilities: {} });
    const result = resultOf(reply) as { isError?: boolean; content: Array<{ text: string }> };
    assert.equal(result?.isError, true);
    assert.match(result?.content[0]?.text ?? '', /Invalid arguments for task_answer: the arguments are \d+ bytes, more than the 131072/);
  });

  it('notifications/cancelled is logged and answered, and cancels nothing', async () => {
    const logs: LogEvent[] = [];
    await send({ method: 'notifications/cancelled', params: { requestId: 3, reason: 'timeout' } }, '2025-11-25', logs);
    assert.deepEqual(
      logs.filter((line) => line.event === 'client-cancelled'),
      [{ event: 'client-cancelled', requestId: '3' }],
    );
    assert.doesNotMatch(JSON.stringify(logs), /timeout/, "the reason is the client's text: not logged");
  });

  it("a body nested too deep is refused with the request's id (clients match replies by id)", async () => {
    const nested = `${'['.repeat(200)}${']'.repeat(200)}`;
    for (const [id, text] of [
      [42, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"x","arguments":{"a":${nested}}}}`],
      ['r-1', `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{"a":${nested}}},"id":"r-1"}`],
    ] as const) {
      const response = await endpoint().fetch(
        new Request('http://127.0.0.1:3000/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body: text,
        }),
        'alice',
      );
      assert.equal(response.status, 400);
      const reply = (await response.json()) as { id: unknown; error: { code: number; message: string } };
      assert.equal(reply.id, id);
      assert.equal(reply.error.code, -32600);
      assert.match(reply.error.message, /deeper than 64 levels/);
    }
  });
});
