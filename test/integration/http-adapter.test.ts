/** The local front (`bin/local/http.ts`) routes paths to functions as the HTTP API does: exact routes and prefixes. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { type HttpAdapter, startHttpAdapter } from '../../bin/local/http.ts';

const seen: Array<{ fn: string; routeKey: string; rawPath: string }> = [];
const fn = (name: string) => async (event: APIGatewayProxyEventV2) => {
  seen.push({ fn: name, routeKey: event.routeKey, rawPath: event.rawPath });
  return { statusCode: 200, body: name };
};

let adapter: HttpAdapter;
before(async () => {
  adapter = await startHttpAdapter({
    handler: fn('mcp'),
    port: 0,
    routes: [
      { path: '/console', prefix: true, handler: fn('console') },
      { path: '/callbacks', prefix: true, handler: fn('callbacks') },
    ],
    log: () => {},
  });
});
after(() => adapter.close());

describe('the local front', () => {
  it('sends each path to its function, with the route key the HTTP API would give', async () => {
    const base = adapter.url.replace(/\/mcp$/, '');
    for (const [path, expected, routeKey] of [
      ['/mcp', 'mcp', 'ANY /mcp'],
      ['/console', 'console', 'ANY /console'],
      ['/console/tasks/abc', 'console', 'ANY /console/{proxy+}'],
      ['/callbacks/t/c', 'callbacks', 'ANY /callbacks/{proxy+}'],
    ] as const) {
      const response = await fetch(`${base}${path}`, { method: 'POST', body: '{}' });
      assert.equal(await response.text(), expected, path);
      assert.deepEqual(seen.at(-1), { fn: expected, routeKey, rawPath: path });
    }
  });

  it('answers 404 for a path no route has, a look-alike prefix included', async () => {
    const base = adapter.url.replace(/\/mcp$/, '');
    const before = seen.length;
    for (const path of ['/consoles', '/mcp/x', '/', '/callback']) {
      assert.equal((await fetch(`${base}${path}`)).status, 404, path);
    }
    assert.equal(seen.length, before, 'no function ran');
  });
});
