/** Which failures the CLI's client retries, and how it gives up: a table of what `fetch` throws, and the retry loop. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from '../../../bin/cli/client.ts';
import { GatewayAnswer, transportFailure, Unreachable, withRetries } from '../../../bin/cli/transport.ts';

/** What undici's `fetch` rejects with when the socket fails: a TypeError whose cause is the socket's error. */
function fetchFailed(cause: Error & { code?: string; errors?: unknown[] }): TypeError {
  return new TypeError('fetch failed', { cause });
}
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('transport failures', () => {
  const cases: Array<[string, unknown, { reason: string; retryable: boolean } | undefined]> = [
    [
      'connection refused',
      fetchFailed(withCode('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED')),
      { reason: 'connect ECONNREFUSED 127.0.0.1:9', retryable: true },
    ],
    ['connection reset', fetchFailed(withCode('read ECONNRESET', 'ECONNRESET')), { reason: 'read ECONNRESET', retryable: true }],
    [
      'several addresses refused (AggregateError, empty message)',
      fetchFailed(
        Object.assign(new AggregateError([withCode('connect ECONNREFUSED ::1:9', 'ECONNREFUSED')], ''), { code: 'ECONNREFUSED' }),
      ),
      { reason: 'connect ECONNREFUSED ::1:9', retryable: true },
    ],
    [
      'a name that does not resolve: no retry',
      fetchFailed(withCode('getaddrinfo ENOTFOUND nowhere.invalid', 'ENOTFOUND')),
      { reason: 'getaddrinfo ENOTFOUND nowhere.invalid', retryable: false },
    ],
    [
      'no answer in time',
      new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      { reason: 'no answer in time', retryable: true },
    ],
    ["a gateway's try later", new GatewayAnswer(503), { reason: 'HTTP 503', retryable: true }],
    ['a JSON-RPC error: an answer, not a transport failure', new McpError(-32602, 'Task not found'), undefined],
    ['a TypeError of our own', new TypeError('x is not a function'), undefined],
  ];
  for (const [name, error, expected] of cases) {
    it(name, () => assert.deepEqual(transportFailure(error), expected));
  }

  it('nothing is a transport failure once the caller gave up through its signal', () => {
    const controller = new AbortController();
    controller.abort(new Error('Interrupted'));
    assert.equal(transportFailure(fetchFailed(withCode('read ECONNRESET', 'ECONNRESET')), controller.signal), undefined);
  });
});

describe('withRetries', () => {
  it('tries again after a transport failure, telling once, and returns what a later attempt gets', async () => {
    const told: string[] = [];
    let attempts = 0;
    const value = await withRetries(
      'http://127.0.0.1:9/mcp',
      async () => {
        attempts += 1;
        if (attempts < 3) throw fetchFailed(withCode('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED'));
        return 'answered';
      },
      { forMs: 60_000, onRetry: (reason) => told.push(reason) },
    );
    assert.equal(value, 'answered');
    assert.equal(attempts, 3);
    assert.deepEqual(told, ['connect ECONNREFUSED 127.0.0.1:9']);
  });

  it('gives up with Unreachable, naming the URL and the cause, when no time is left or a retry cannot help', async () => {
    for (const [forMs, code] of [
      [0, 'ECONNREFUSED'],
      [60_000, 'ENOTFOUND'],
    ] as const) {
      let attempts = 0;
      await assert.rejects(
        withRetries(
          'http://127.0.0.1:9/mcp',
          async () => {
            attempts += 1;
            throw fetchFailed(withCode(`failed ${code}`, code));
          },
          { forMs },
        ),
        (error: unknown) => error instanceof Unreachable && error.message === `could not reach http://127.0.0.1:9/mcp: failed ${code}`,
      );
      assert.equal(attempts, 1, code);
    }
  });

  it('lets any other error through at once', async () => {
    await assert.rejects(
      withRetries(
        'http://127.0.0.1:9/mcp',
        async () => {
          throw new McpError(-32602, 'Task not found');
        },
        { forMs: 60_000 },
      ),
      McpError,
    );
  });
});
