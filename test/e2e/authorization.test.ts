/**
 * The endpoint as an OAuth 2.1 resource server, end to end against the local
 * stack with auth on (`LOCAL_AUTH=1`: the embedded `oidc-provider`
 * authorization server). Clients start from the MCP URL alone and discover
 * everything else (RFC 9728 metadata, then the authorization server's);
 * every token comes from the authorization server.
 *
 * - the SDK v2 client's own OAuth support, client credentials grant;
 * - the SDK v2 client, authorization code + PKCE + dynamic registration,
 *   with the login and consent pages scripted;
 * - a second principal, a token for another resource, a missing token and
 *   missing scopes are refused with the right challenges.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ClientCredentialsProvider, UnauthorizedError } from '@modelcontextprotocol/client';
import { connectSdkClient, type SdkConnection, SdkTasks } from '../support/clients.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import {
  authorizeInBrowser,
  BrowserClientProvider,
  clientCredentialsToken,
  type Discovered,
  discover,
  registerServiceClient,
} from '../support/oauth.ts';
import { PROTOCOL_VERSION, TASKS_EXTENSION } from '../support/wire.ts';

const OTHER_RESOURCE = 'https://other.example.com/mcp';
const ENDPOINT_SCOPE = 'tasks';
const TOOL_SCOPE = 'tasks:admin';
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

let stack: LocalStackProcess;
let found: Discovered;
const connections: SdkConnection[] = [];

before(async () => {
  stack = await startLocalStackProcess({
    env: {
      LOCAL_AUTH: '1',
      LOCAL_AUTH_PORT: '0',
      LOCAL_AUTH_OTHER_RESOURCES: OTHER_RESOURCE,
      TASKS_TOOLSET: 'test',
      TASKS_POLL_INTERVAL_MS: '250',
    },
  });
  found = await discover(stack.url);
});

after(async () => {
  for (const connection of connections) await connection.close().catch(() => {}); // already closed: nothing to do
  await stack?.stop();
});

/** A raw MCP `tools/call` (2026-07-28 framing), for status codes and headers the SDK hides. */
function callToolRaw(token: string | undefined, name: string, args: Record<string, unknown>): Promise<Response> {
  return fetch(stack.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
    }),
  });
}

async function serviceConnection(scope: string): Promise<{ connection: SdkConnection; provider: ClientCredentialsProvider }> {
  const client = await registerServiceClient(found.server.registration_endpoint, scope);
  const provider = new ClientCredentialsProvider({ ...client, scope, expectedIssuer: found.issuer });
  const connection = await connectSdkClient(stack.url, 'modern', 'e2e-service', { authProvider: provider });
  connections.push(connection);
  return { connection, provider };
}

async function runToResult(tasks: SdkTasks, name: string, args: Record<string, unknown>) {
  const outcome = await tasks.callTool(name, args);
  assert.equal(outcome.kind, 'task');
  const taskId = String((outcome as { created: Record<string, unknown> }).created['taskId']);
  const { task } = await tasks.pollUntil(taskId, (t) => TERMINAL.has(t.status), { timeoutMs: 15_000 });
  return { taskId, task };
}

describe('discovery', () => {
  it('serves the protected resource metadata unauthenticated, at the path-aware and the root location', async () => {
    const paths = ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'];
    for (const path of paths) {
      const response = await fetch(new URL(path, stack.url));
      assert.equal(response.status, 200, path);
      assert.deepEqual(await response.json(), {
        resource: stack.url,
        authorization_servers: [found.issuer],
        scopes_supported: [ENDPOINT_SCOPE, TOOL_SCOPE],
        bearer_methods_supported: ['header'],
        resource_name: 'MCP Tasks',
      });
    }
    assert.ok(found.server.registration_endpoint, 'the authorization server offers dynamic registration');
    assert.ok((found.server['code_challenge_methods_supported'] as string[]).includes('S256'));
  });

  it('answers a request without a token 401 with the resource metadata and the scope to ask for', async () => {
    const response = await callToolRaw(undefined, 'slow_compute', { seconds: 0 });
    assert.equal(response.status, 401);
    assert.equal(
      response.headers.get('www-authenticate'),
      `Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', stack.url).href}", scope="${ENDPOINT_SCOPE}"`,
    );
  });

  it('answers a malformed token 401 invalid_token', async () => {
    const response = await callToolRaw('not-a-token', 'slow_compute', { seconds: 0 });
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token".*resource_metadata="/);
  });
});

describe('client credentials through the SDK client', () => {
  let first: { connection: SdkConnection; provider: ClientCredentialsProvider };
  let taskId: string;

  before(async () => {
    first = await serviceConnection(ENDPOINT_SCOPE);
  });

  it('goes from discovery to a task tool result', async () => {
    const run = await runToResult(new SdkTasks(first.connection, stack.output), 'slow_compute', { seconds: 0.2 });
    taskId = run.taskId;
    assert.equal(run.task.status, 'completed', JSON.stringify(run.task));
    assert.ok(first.provider.tokens()?.access_token, 'the SDK obtained a token itself');
  });

  it('refuses a second principal: its view of the task is that of an unknown task', async () => {
    const second = await serviceConnection(ENDPOINT_SCOPE);
    const foreign = await second.connection.client
      .request({ method: 'tasks/get', params: { taskId } }, (await import('zod')).looseObject({}))
      .then(
        () => 'read',
        (error: { code?: number }) => error.code,
      );
    const unknown = await second.connection.client
      .request({ method: 'tasks/get', params: { taskId: crypto.randomUUID() } }, (await import('zod')).looseObject({}))
      .then(
        () => 'read',
        (error: { code?: number }) => error.code,
      );
    assert.equal(foreign, -32602);
    assert.equal(foreign, unknown);
  });

  it('refuses a token the same authorization server issued for another resource', async () => {
    const client = await registerServiceClient(found.server.registration_endpoint, ENDPOINT_SCOPE);
    const token = await clientCredentialsToken(found.server.token_endpoint, client, OTHER_RESOURCE, ENDPOINT_SCOPE);
    const response = await callToolRaw(token, 'slow_compute', { seconds: 0 });
    assert.equal(response.status, 401);
    assert.match(
      response.headers.get('www-authenticate') ?? '',
      /error="invalid_token", error_description="The token was not issued for this resource"/,
    );
    // The same client's token for this resource is accepted.
    const right = await clientCredentialsToken(found.server.token_endpoint, client, stack.url, ENDPOINT_SCOPE);
    assert.equal((await callToolRaw(right, 'slow_compute', { seconds: 0 })).status, 200);
  });

  it("answers a token without a tool's own scope 403 insufficient_scope naming the scopes to step up to", async () => {
    const token = first.provider.tokens()!.access_token;
    const response = await callToolRaw(token, 'privileged_echo', { text: 'hi' });
    assert.equal(response.status, 403);
    const header = response.headers.get('www-authenticate') ?? '';
    assert.match(header, /^Bearer error="insufficient_scope"/);
    assert.match(header, new RegExp(`scope="${ENDPOINT_SCOPE} ${TOOL_SCOPE}"`));
    assert.match(header, /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/);
  });

  it('answers a token without the endpoint scope 403 insufficient_scope naming it', async () => {
    const client = await registerServiceClient(found.server.registration_endpoint, TOOL_SCOPE);
    const token = await clientCredentialsToken(found.server.token_endpoint, client, stack.url, TOOL_SCOPE);
    const response = await callToolRaw(token, 'slow_compute', { seconds: 0 });
    assert.equal(response.status, 403);
    assert.match(
      response.headers.get('www-authenticate') ?? '',
      new RegExp(`^Bearer error="insufficient_scope".*scope="${ENDPOINT_SCOPE}"`),
    );
  });

  it('runs a scoped tool for a client granted its scope', async () => {
    const admin = await serviceConnection(`${ENDPOINT_SCOPE} ${TOOL_SCOPE}`);
    const run = await runToResult(new SdkTasks(admin.connection, stack.output), 'privileged_echo', { text: 'granted' });
    assert.equal(run.task.status, 'completed');
    assert.deepEqual((run.task as { result?: { content?: unknown } }).result?.content, [{ type: 'text', text: 'granted' }]);
  });
});

describe('authorization code with PKCE and dynamic registration through the SDK client', () => {
  it('logs a user in through the authorization server and runs a task tool as that user', async () => {
    const provider = new BrowserClientProvider();
    // First attempt: the SDK discovers, registers and sends the user to the authorization server.
    await assert.rejects(
      connectSdkClient(stack.url, 'modern', 'e2e-browser', { authProvider: provider }),
      (error) => error instanceof UnauthorizedError,
    );
    const authorizationUrl = provider.authorizationUrl;
    assert.ok(authorizationUrl, 'the SDK asked to open the authorization page');
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorizationUrl.searchParams.get('resource'), stack.url);
    assert.ok(provider.clientInformation()?.client_id, 'the SDK registered the client');

    const callback = await authorizeInBrowser(authorizationUrl, BrowserClientProvider.REDIRECT_URL, 'alice');
    assert.ok(callback.get('code'), `authorization code in ${callback}`);
    // The SDK redeems the code (with the PKCE verifier) when given the callback, then connects.
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    await new StreamableHTTPClientTransport(new URL(stack.url), { authProvider: provider }).finishAuth(callback);
    assert.ok(provider.tokens()?.access_token);

    const connection = await connectSdkClient(stack.url, 'modern', 'e2e-browser', { authProvider: provider });
    connections.push(connection);
    const run = await runToResult(new SdkTasks(connection, stack.output), 'slow_compute', { seconds: 0.2 });
    assert.equal(run.task.status, 'completed', JSON.stringify(run.task));
  });
});

describe('mcp-tasks login', () => {
  const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function configDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-tasks-login-'));
    dirs.push(dir);
    return dir;
  }

  function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, ...args],
        { env: { ...process.env, MCP_TASKS_URL: stack.url, ...env }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });
  }

  let serviceTask: string;

  it('without a login, a call is refused and says how to sign in', async () => {
    const run = await cli(['call', 'slow_compute', '{"seconds":0}'], { MCP_TASKS_CONFIG_DIR: await configDir() });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /HTTP 401.*mcp-tasks login/);
  });

  it('logs in with client credentials and keeps the token between commands', async () => {
    const dir = await configDir();
    const client = await registerServiceClient(found.server.registration_endpoint, ENDPOINT_SCOPE);
    const env = { MCP_TASKS_CONFIG_DIR: dir, MCP_TASKS_CLIENT_SECRET: client.clientSecret };
    const login = await cli(['login', '--client-credentials', '--client-id', client.clientId, '--json'], env);
    assert.equal(login.code, 0, login.stderr);
    assert.deepEqual(
      { ...JSON.parse(login.stdout), expiresAt: 0 },
      {
        endpoint: stack.url,
        issuer: found.issuer,
        clientId: client.clientId,
        grant: 'client_credentials',
        scope: ENDPOINT_SCOPE,
        expiresAt: 0,
      },
    );
    assert.ok(!login.stdout.includes(client.clientSecret) && !login.stderr.includes(client.clientSecret), 'the secret is never printed');
    assert.equal((await stat(join(dir, 'logins.json'))).mode & 0o777, 0o600);

    const call = await cli(['call', 'slow_compute', '{"seconds":0.2,"label":"service"}', '--json'], { MCP_TASKS_CONFIG_DIR: dir });
    assert.equal(call.code, 0, call.stderr);
    const detached = await cli(['call', 'slow_compute', '{"seconds":0.2}', '--detach', '--json'], { MCP_TASKS_CONFIG_DIR: dir });
    assert.equal(detached.code, 0, detached.stderr);
    serviceTask = String(JSON.parse(detached.stdout)['taskId']);
    assert.ok(serviceTask);
  });

  it("logs a user in through the browser (PKCE, dynamic registration, loopback answer), whose view excludes the service's tasks", async () => {
    const dir = await configDir();
    const child = spawn(process.execPath, [BIN, 'login', '--no-browser', '--callback-port', '0'], {
      env: { ...process.env, MCP_TASKS_URL: stack.url, MCP_TASKS_CONFIG_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const authorizationUrl = await new Promise<URL>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sign-in URL: ${stderr}`)), 20_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk;
        const match = /^(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)$/m.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(new URL(match[1]!));
        }
      });
    });
    try {
      assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(authorizationUrl.searchParams.get('resource'), stack.url);
      const redirectUri = authorizationUrl.searchParams.get('redirect_uri')!;
      assert.match(redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const answer = await authorizeInBrowser(authorizationUrl, redirectUri, 'bob');
      // The browser follows the last redirect to the CLI's loopback listener.
      assert.equal((await fetch(`${redirectUri}?${answer}`)).status, 200);
      assert.equal(await exited, 0, stderr);
    } finally {
      child.kill();
    }
    assert.match(stderr, /Logged in to .* through http:\/\/127\.0\.0\.1:\d+/);

    const call = await cli(['call', 'slow_compute', '{"seconds":0.2,"label":"bob"}'], { MCP_TASKS_CONFIG_DIR: dir });
    assert.equal(call.code, 0, call.stderr);
    assert.equal(call.stdout, 'Computed bob after 0.2s\n');
    const foreign = await cli(['get', serviceTask], { MCP_TASKS_CONFIG_DIR: dir });
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, /-32602/);

    const logout = await cli(['logout'], { MCP_TASKS_CONFIG_DIR: dir });
    assert.equal(logout.code, 0);
    assert.equal((await cli(['tools'], { MCP_TASKS_CONFIG_DIR: dir })).code, 1);
  });
});
