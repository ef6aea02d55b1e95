/**
 * Hostile input at the protocol's edges: bodies nested deep enough to
 * overflow a recursive walk, and `inputResponses` of the wrong shape (which
 * the SDK would quietly reshape into "no answer"). Each case runs over HTTP
 * against the local stack and through the MCP Lambda handler in-process, on
 * 2026-07-28 and on 2025-era (2025-11-25, stateless) requests. Every task the
 * suite gets accepted must reach a terminal state before it ends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_JSON_DEPTH } from '../../shared/tasks/limits.ts';
import {
  errorOf,
  type RpcOptions,
  type RpcResponse,
  requestMeta,
  resultOf,
  TASKS_CAPABILITIES,
  type Wire,
  wires,
} from '../support/wire.ts';
import { hostileStack, PRINCIPAL } from './hostile-stack.ts';

/** The two request eras: headers and `_meta` as each sends them. */
const ERAS = [
  { era: '2026-07-28', options: {} as RpcOptions },
  {
    era: '2025-11-25',
    options: { protocolVersion: '2025-11-25', meta: null, headers: { 'mcp-protocol-version': '2025-11-25' } } as RpcOptions,
  },
] as const;

/** `depth` nested arrays, as JSON text (built as text: serialising the value would overflow). */
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/**
 * A raw `tools/call` body for `era` with `nested` (JSON text) in the client
 * capabilities (2026-07-28) or as the `label` argument (2025-era, which has no
 * per-request capabilities).
 */
function deepBody(era: string, nested: string, id: number): string {
  const modern = era === '2026-07-28';
  const params = {
    name: 'slow_compute',
    arguments: { seconds: 1, label: modern ? 'deep' : PLACEHOLDER },
    ...(modern ? { _meta: requestMeta({ ...TASKS_CAPABILITIES, experimental: { x: { deep: PLACEHOLDER } } }) } : {}),
  };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }).replace(JSON.stringify(PLACEHOLDER), () => nested);
}

const PLACEHOLDER = '<nested value>';

function assertRefused(reply: RpcResponse, code: number, message: RegExp): void {
  const error = errorOf(reply);
  assert.equal(error.code, code, reply.text.slice(0, 300));
  assert.match(error.message, message);
  assert.doesNotMatch(reply.text, /Internal error/);
}

describe('hostile input at the protocol edges', () => {
  const local = hostileStack();
  const { logs, accepted } = local;

  async function waitingTask(wire: Wire): Promise<string> {
    const taskId = String(resultOf(await wire.call('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } }))['taskId']);
    accepted.push({ taskId, owner: PRINCIPAL });
    const deadline = Date.now() + 10_000;
    while ((await local.stack.store.get(taskId, PRINCIPAL, Date.now()))?.status !== 'input_required') {
      assert.ok(Date.now() < deadline, 'the task never asked');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return taskId;
  }

  for (const wire of wires(() => local.stack)) {
    for (const { era, options } of ERAS) {
      describe(`over ${wire.name}, ${era} requests`, () => {
        it(`a body nested deeper than ${MAX_JSON_DEPTH} levels (100,000 arrays) is refused -32600 with a plain message`, async () => {
          const created = logs.filter((line) => line.event === 'task-created').length;
          const reply = await wire.call(
            'tools/call',
            { name: 'slow_compute' },
            { ...options, rawBody: deepBody(era, nestedArrays(100_000), 1) },
          );
          assertRefused(reply, -32600, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
          assert.equal(reply.status, 400);
          assert.equal(logs.filter((line) => line.event === 'task-created').length, created);
          assert.equal(
            logs.some((line) => line.event === 'request-error'),
            false,
            'no internal error was logged',
          );
        });

        it('nesting within the limit passes the door (brackets inside strings do not count)', async () => {
          const shallow = `["${'['.repeat(200)}",${nestedArrays(20)}]`;
          const reply = await wire.call('tools/call', { name: 'slow_compute' }, { ...options, rawBody: deepBody(era, shallow, 2) });
          if (era === '2026-07-28') {
            // Capabilities are free-form: the task is created.
            const result = resultOf(reply);
            assert.equal(result['resultType'], 'task');
            accepted.push({ taskId: String(result['taskId']), owner: PRINCIPAL });
          } else {
            // The label must be a string: a tool error naming the argument, not a door refusal.
            const result = resultOf(reply);
            assert.equal(result['isError'], true);
            assert.match(JSON.stringify(result['content']), /label/);
          }
        });
      });
    }

    describe(`over ${wire.name}: malformed inputResponses`, () => {
      for (const [label, bad] of [
        ['a string', 's'],
        ['an array', ['a']],
        ['a number', 5],
        ['null', null],
        ['an object with a non-object answer', { confirm: 'yes' }],
        ['an object with an array answer', { confirm: [{ action: 'accept' }] }],
      ] as const) {
        it(`tasks/update with inputResponses ${label} is refused -32602 and changes nothing`, async () => {
          const taskId = await waitingTask(wire);
          const reply = await wire.call('tasks/update', { taskId, inputResponses: bad });
          assertRefused(reply, -32602, /inputResponses/);
          const task = await local.stack.store.get(taskId, PRINCIPAL, Date.now());
          assert.equal(task?.status, 'input_required');
          assert.deepEqual(task?.inputResponses, {});
        });

        it(`a tools/call retry with inputResponses ${label} is refused -32602`, async () => {
          const first = resultOf(await wire.call('tools/call', { name: 'test_streaming_elicitation', arguments: {} }));
          assert.equal(first['resultType'], 'input_required');
          const reply = await wire.call('tools/call', {
            name: 'test_streaming_elicitation',
            arguments: {},
            inputResponses: bad,
            requestState: first['requestState'],
          });
          assertRefused(reply, -32602, /^tools\/call: inputResponses/);
        });
      }

      it('an object answer under a key never asked is acknowledged and ignored', async () => {
        const taskId = await waitingTask(wire);
        const reply = await wire.call('tasks/update', { taskId, inputResponses: { unknown: { action: 'accept', content: {} } } });
        assert.equal(resultOf(reply)['resultType'], 'complete');
        assert.equal((await local.stack.store.get(taskId, PRINCIPAL, Date.now()))?.status, 'input_required');
        // The right answer still completes the task.
        const answered = await wire.call('tasks/update', {
          taskId,
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        });
        assert.equal(resultOf(answered)['resultType'], 'complete');
      });
    });
  }
});
