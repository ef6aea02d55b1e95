/**
 * Property: whatever nested value a client puts wherever in a request, no
 * method answers with an internal error. fast-check generates values of
 * random depth (0 to 300 levels, over and under the nesting limit) and shape
 * (arrays and objects mixed, any JSON leaf), places one in a random spot of a
 * random method's params (arguments, client capabilities, `inputResponses`,
 * an answer, `requestState`, `taskId`, a free field) on a 2026-07-28 or a
 * 2025-era request, and sends it through the MCP Lambda handler of the local
 * stack. Every reply must be a result or a JSON-RPC error other than the
 * bare `-32603 Internal error` of an unexpected exception; a body nested deeper than `MAX_JSON_DEPTH` must be `-32600`; and no
 * `request-error` (the mapper's unexpected-exception line) may be logged.
 * The JSON text is built as text, so depth is not bounded by the test's own
 * stack. `PROPERTY_SEED` / `PROPERTY_RUNS` replay or widen a run.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import fc from 'fast-check';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import type { LogEvent } from '../../shared/log.ts';
import { MAX_JSON_DEPTH } from '../../shared/tasks/limits.ts';
import { httpApiEvent } from '../support/factories.ts';
import { parseMessages, requestMeta, TASKS_CAPABILITIES } from '../support/wire.ts';

const METHODS = [
  'tools/call',
  'tools/list',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'tasks/result',
  'tasks/list',
  'server/discover',
  'subscriptions/listen',
  'ping',
  'prompts/list',
  'no/such/method',
] as const;

/**
 * Where the nested value goes, and at which depth its first bracket sits
 * (the body object is depth 1, `params` depth 2).
 */
const SPOTS = {
  arguments: 4, // params.arguments.x
  capabilities: 6, // params._meta[clientCapabilities].experimental.x (2026-07-28 only)
  inputResponses: 3, // params.inputResponses
  answer: 4, // params.inputResponses.confirm
  requestState: 3, // params.requestState
  taskId: 3, // params.taskId
  free: 3, // params.x
} as const;
type Spot = keyof typeof SPOTS;

/** A nested value: `openers[i]` is the i-th level from the outside, `leaf` the innermost value. */
interface Nested {
  openers: ('[' | '{')[];
  leaf: unknown;
}

/** The JSON text of `nested`, built without recursion. */
function nestedText({ openers, leaf }: Nested): string {
  const open = openers.map((o) => (o === '[' ? '[' : '{"k":')).join('');
  const close = openers
    .map((o) => (o === '[' ? ']' : '}'))
    .reverse()
    .join('');
  return `${open}${JSON.stringify(leaf) ?? 'null'}${close}`;
}

/** The deepest level of a (shallow) JSON leaf, counted like the nesting limit. */
function leafDepth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(leafDepth));
}

const PLACEHOLDER = '<nested value>';

function body(method: string, spot: Spot, modern: boolean, taskId: string, nested: string, id: number): string {
  const params: Record<string, unknown> = {};
  if (method === 'tools/call') params['name'] = 'greet';
  if (method.startsWith('tasks/')) params['taskId'] = taskId;
  if (spot === 'arguments') params['arguments'] = { x: PLACEHOLDER };
  if (spot === 'inputResponses') params['inputResponses'] = PLACEHOLDER;
  if (spot === 'answer') params['inputResponses'] = { confirm: PLACEHOLDER };
  if (spot === 'requestState') params['requestState'] = PLACEHOLDER;
  if (spot === 'taskId') params['taskId'] = PLACEHOLDER;
  if (spot === 'free') params['x'] = PLACEHOLDER;
  if (modern) {
    const capabilities = spot === 'capabilities' ? { ...TASKS_CAPABILITIES, experimental: { x: PLACEHOLDER } } : TASKS_CAPABILITIES;
    params['_meta'] = requestMeta(capabilities);
  }
  return JSON.stringify({ jsonrpc: '2.0', id, method, params }).replace(JSON.stringify(PLACEHOLDER), () => nested);
}

describe('nested values of any depth and shape, in any method (property)', () => {
  let stack: LocalStack;
  let dataDir: string;
  const logs: LogEvent[] = [];
  let taskId: string;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-nesting-'));
    stack = await startLocalStack({ port: 0, dataDir, log: (event) => void logs.push(event), env: { TASKS_TOOLSET: 'all' } });
    // A task waiting for input, so tasks/* methods reach their handlers.
    const created = await call(
      body('tools/call', 'free', true, '', '1', 0).replace('"greet"', '"confirm_delete"'),
      true,
      'tools/call',
      'confirm_delete',
    );
    taskId = String(created.message?.result?.['taskId']);
    assert.match(taskId, /^[0-9a-f-]{36}$/);
  });

  after(async () => {
    try {
      await stack?.store.cancel(taskId, 'local', Date.now());
    } finally {
      await stack?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  async function call(text: string, modern: boolean, method: string, name?: string) {
    const headers: Record<string, string> = {
      host: '127.0.0.1:3000',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': modern ? '2026-07-28' : '2025-11-25',
    };
    if (modern) headers['mcp-method'] = method;
    if (modern && name !== undefined) headers['mcp-name'] = name;
    const result = (await stack.handlers.mcp(httpApiEvent({ headers, body: text }))) as APIGatewayProxyStructuredResultV2;
    const messages = parseMessages(result.body ?? '', String(result.headers?.['content-type'] ?? ''));
    return { status: result.statusCode ?? 200, message: messages.find((m) => 'result' in m || 'error' in m), text: result.body ?? '' };
  }

  it('never answers -32603, and refuses a body nested past the limit with -32600', async () => {
    const nested = fc.record({
      openers: fc.oneof(
        fc.array(fc.constantFrom<'[' | '{'>('[', '{'), { maxLength: 80 }),
        fc.array(fc.constantFrom<'[' | '{'>('[', '{'), { minLength: 50, maxLength: 300 }),
      ),
      leaf: fc.jsonValue({ maxDepth: 2 }),
    });
    let id = 1;
    let deep = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...METHODS),
        fc.constantFrom(...(Object.keys(SPOTS) as Spot[])),
        fc.boolean(),
        nested,
        async (method, spot, modern, value) => {
          const before = logs.length;
          const text = body(method, spot, modern, taskId, nestedText(value), id++);
          // A 2025-era request has no `_meta` envelope: the capabilities spot places nothing.
          const placed = !(spot === 'capabilities' && !modern);
          const depth = placed ? SPOTS[spot] - 1 + value.openers.length + leafDepth(value.leaf) : 0;
          const name = method === 'tools/call' ? 'greet' : method.startsWith('tasks/') ? taskId : undefined;
          const reply = await call(text, modern, method, name);
          assert.ok(reply.status < 500, `HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
          const error = reply.message?.error;
          // The mapper's bare internal error (a designed -32603 with its own message, like a 2025-era
          // tasks/result on a task waiting for input, is an answer, not a failure).
          assert.ok(!(error?.code === -32603 && error.message === 'Internal error'), reply.text.slice(0, 300));
          if (depth > MAX_JSON_DEPTH) {
            deep++;
            assert.equal(error?.code, -32600, `depth ${depth}: ${reply.text.slice(0, 300)}`);
            assert.match(error.message, /deeper than/);
          }
          const unexpected = logs.slice(before).filter((line) => line.event === 'request-error');
          assert.deepEqual(unexpected, []);
        },
      ),
      {
        numRuns: Number(process.env['PROPERTY_RUNS'] ?? 200),
        ...(process.env['PROPERTY_SEED'] ? { seed: Number(process.env['PROPERTY_SEED']) } : {}),
      },
    );
    assert.ok(deep > 0, 'some generated bodies were past the limit');
  });
});
