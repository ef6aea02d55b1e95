/**
 * The conformance suite's reference fixture tools through this server's own
 * paths, over HTTP against the local stack and through the MCP Lambda
 * handler in-process: every content type inline and from a task (the same
 * content either way, also from a result kept in chunks), progress notifications on a `tools/call` that carries
 * a `progressToken` (an SSE answer, buffered whole, notifications before the
 * result), and MRTR rounds that ask for `roots/list`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseMessages, resultOf, TASKS_CAPABILITIES, wires } from '../support/wire.ts';
import { hostileStack, PRINCIPAL } from './hostile-stack.ts';

const CONTENT_TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_error_handling',
];

/** What a client without the tasks extension declares. */
const NO_TASKS = { elicitation: {}, sampling: {}, roots: {} };

describe('reference fixture tools', () => {
  const local = hostileStack();

  for (const wire of wires(() => local.stack)) {
    describe(`over ${wire.name}`, () => {
      it('every content type comes back the same inline and from a task', async () => {
        for (const name of CONTENT_TOOLS) {
          const inline = resultOf(await wire.call('tools/call', { name, arguments: {} }, { capabilities: NO_TASKS }));
          assert.ok(Array.isArray(inline['content']) && inline['content'].length > 0, name);
          const created = resultOf(await wire.call('tools/call', { name, arguments: {} }, { capabilities: TASKS_CAPABILITIES }));
          assert.equal(created['resultType'], 'task', name);
          const taskId = String(created['taskId']);
          local.accepted.push({ taskId, owner: PRINCIPAL });
          let task: Record<string, unknown> = {};
          const deadline = Date.now() + 15_000;
          do {
            if (Date.now() > deadline) assert.fail(`${name}: task still ${String(task['status'])}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
            task = resultOf(await wire.call('tasks/get', { taskId }));
          } while (task['status'] === 'working');
          assert.equal(task['status'], 'completed', name);
          const result = task['result'] as Record<string, unknown>;
          assert.deepEqual(result['content'], inline['content'], name);
          assert.equal(result['isError'], inline['isError'], name);
        }
      });

      it('a result of every content type too large for its row (kept in chunks) reads back whole on tasks/get', async () => {
        const { stack } = local;
        const taskId = crypto.randomUUID();
        await stack.store.create({
          taskId,
          owner: PRINCIPAL,
          tool: 'test_multiple_content_types',
          arguments: {},
          clientCapabilities: TASKS_CAPABILITIES,
          inputResponses: {},
          now: Date.now(),
          ttlMs: 3_600_000,
          pollIntervalMs: 1000,
        });
        local.accepted.push({ taskId, owner: PRINCIPAL });
        const claimed = await stack.store.claim(taskId, 'reference-test', Date.now());
        assert.ok(claimed);
        const image = randomBytes(600 * 1024).toString('base64'); // ~800 KB: three chunks
        const result = {
          content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: image, mimeType: 'image/png' },
            { type: 'audio', data: randomBytes(1024).toString('base64'), mimeType: 'audio/wav' },
            { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"value":123}' } },
          ],
        };
        await stack.store.finish(claimed, 'reference-test', { status: 'completed', result }, Date.now());
        const task = resultOf(await wire.call('tasks/get', { taskId }));
        assert.equal(task['status'], 'completed');
        assert.deepEqual((task['result'] as Record<string, unknown>)['content'], result.content);
      });

      it('a tools/call with a progressToken is answered as SSE: increasing progress notifications, then the result', async () => {
        const reply = await wire.call(
          'tools/call',
          { name: 'test_tool_with_progress', arguments: {} },
          {
            capabilities: NO_TASKS,
            meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'progress-test', version: '1.0.0' },
              'io.modelcontextprotocol/clientCapabilities': NO_TASKS,
              progressToken: 'p-1',
            },
          },
        );
        assert.match(reply.text, /^(event|data|id|:)/m, 'an SSE body');
        const messages = parseMessages(reply.text, 'text/event-stream');
        const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params ?? {});
        assert.deepEqual(
          progress.map((p) => [p['progressToken'], p['progress'], p['total']]),
          [
            ['p-1', 0, 100],
            ['p-1', 50, 100],
            ['p-1', 100, 100],
          ],
        );
        const last = messages.at(-1);
        assert.ok(last && 'result' in last, 'the result comes last');
        // Without a token: a plain JSON body and no notifications.
        const plain = await wire.call('tools/call', { name: 'test_tool_with_progress', arguments: {} }, { capabilities: NO_TASKS });
        assert.doesNotMatch(plain.text, /notifications\/progress/);
        assert.equal(JSON.parse(plain.text).result.content[0].type, 'text');
      });

      it('an MRTR round can ask for roots/list, and the answer completes the call', async () => {
        const missing = await wire.call('tools/call', { name: 'test_input_required_result_list_roots', arguments: {} });
        assert.equal(missing.body?.error?.code, -32021, 'roots not declared: the missing capability is named');
        const options = { capabilities: NO_TASKS };
        const first = resultOf(await wire.call('tools/call', { name: 'test_input_required_result_list_roots', arguments: {} }, options));
        assert.deepEqual(first['inputRequests'], { client_roots: { method: 'roots/list', params: {} } });
        const done = resultOf(
          await wire.call(
            'tools/call',
            {
              name: 'test_input_required_result_list_roots',
              arguments: {},
              inputResponses: { client_roots: { roots: [{ uri: 'file:///work', name: 'work' }] } },
              requestState: first['requestState'],
            },
            options,
          ),
        );
        assert.deepEqual(done['content'], [{ type: 'text', text: 'Roots: file:///work' }]);
      });
    });
  }
});
