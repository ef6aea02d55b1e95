/**
 * The resource server and its token verifier against a real JWKS: an issuer
 * served over HTTP on 127.0.0.1 (discovery document + keys), tokens signed
 * with its key (and with others, to be refused).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type CryptoKey, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { principalFor } from '../../../shared/auth/principal.ts';
import { createResourceServer } from '../../../shared/auth/resource-server.ts';
import type { AuthSettings } from '../../../shared/auth/settings.ts';
import { createJwtVerifier } from '../../../shared/auth/verifier.ts';
import type { ToolDefinition } from '../../../shared/runtime/tool.ts';

const RESOURCE = 'https://mcp.example.com/mcp';
let server: Server;
let issuer: string;
let key: CryptoKey;
let strangerKey: CryptoKey;
let requests: string[] = [];

before(async () => {
  const pair = await generateKeyPair('ES256');
  key = pair.privateKey;
  strangerKey = (await generateKeyPair('ES256')).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') return void res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    if (req.url === '/jwks') return void res.end(JSON.stringify({ keys: [jwk] }));
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function settings(overrides: Partial<AuthSettings> = {}): AuthSettings {
  return {
    resource: RESOURCE,
    issuers: [issuer],
    authorizationServers: [issuer],
    scopes: ['tasks'],
    audiences: [],
    clientIds: [],
    ...overrides,
  };
}

function sign(claims: JWTPayload, options: { signer?: CryptoKey; alg?: string } = {}): Promise<string> {
  return new SignJWT({ scope: 'tasks', ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(typeof claims.iss === 'string' ? claims.iss : issuer)
    .setIssuedAt()
    .setExpirationTime(typeof claims.exp === 'number' ? claims.exp : '5m')
    .sign(options.signer ?? key);
}

const tools = new Map<string, ToolDefinition>([
  ['plain', { name: 'plain', description: '', execution: 'sync', inputSchema: undefined as never, handler: async () => '' }],
  [
    'admin',
    {
      name: 'admin',
      description: '',
      execution: 'sync',
      inputSchema: undefined as never,
      handler: async () => '',
      scopes: ['tasks:admin'],
    },
  ],
]);

function resourceServer(overrides: Partial<AuthSettings> = {}) {
  const s = settings(overrides);
  return createResourceServer({ settings: s, verifier: createJwtVerifier(s, { log: () => {} }), tools, log: () => {} });
}

function call(token: string | undefined, tool = 'plain'): Request {
  return new Request(RESOURCE, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }),
  });
}

async function refusal(rs: ReturnType<typeof resourceServer>, request: Request): Promise<{ status: number; challenge: string }> {
  const outcome = await rs.authorize(request);
  assert.ok(outcome instanceof Response, 'refused');
  return { status: outcome.status, challenge: outcome.headers.get('www-authenticate') ?? '' };
}

describe('resource server', () => {
  it('serves its metadata at the path-aware and root locations, from settings only', async () => {
    const rs = resourceServer();
    for (const url of [
      'https://evil.example/.well-known/oauth-protected-resource/mcp',
      'https://evil.example/.well-known/oauth-protected-resource',
    ]) {
      const response = rs.metadata(new Request(url));
      assert.equal(response?.status, 200);
      assert.deepEqual(await response!.json(), {
        resource: RESOURCE,
        authorization_servers: [issuer],
        scopes_supported: ['tasks', 'tasks:admin'],
        bearer_methods_supported: ['header'],
        resource_name: 'MCP Tasks',
      });
    }
    assert.equal(rs.metadata(new Request('https://mcp.example.com/mcp')), undefined);
    assert.equal(
      rs.metadata(new Request('https://mcp.example.com/.well-known/oauth-protected-resource/mcp', { method: 'POST' }))?.status,
      405,
    );
  });

  it('challenges a request without a token: 401, resource_metadata and scope, no error code (RFC 6750 §3.1)', async () => {
    const { status, challenge } = await refusal(resourceServer(), call(undefined));
    assert.equal(status, 401);
    assert.equal(challenge, 'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="tasks"');
  });

  it('accepts a token for this resource and maps it to issuer + subject', async () => {
    const outcome = await resourceServer().authorize(call(await sign({ sub: 'alice', aud: RESOURCE })));
    assert.ok(!(outcome instanceof Response));
    assert.equal(outcome.principal, principalFor(issuer, 'alice'));
    assert.deepEqual(outcome.token.scopes, ['tasks']);
    assert.equal(outcome.token.extra.requester, undefined, 'no name or email claim: nobody named');
  });

  it("keeps the caller's name (else email) claim for their tasks' pages, at most 128 characters", async () => {
    const named = await resourceServer().authorize(
      call(await sign({ sub: 'alice', aud: RESOURCE, name: ' Alice L. ', email: 'a@x.example' })),
    );
    assert.ok(!(named instanceof Response));
    assert.equal(named.token.extra.requester, 'Alice L.');
    const mailed = await resourceServer().authorize(call(await sign({ sub: 'alice', aud: RESOURCE, email: 'a@x.example' })));
    assert.equal(!(mailed instanceof Response) && mailed.token.extra.requester, 'a@x.example');
    const long = await resourceServer().authorize(call(await sign({ sub: 'alice', aud: RESOURCE, name: 'n'.repeat(300) })));
    assert.equal(!(long instanceof Response) && long.token.extra.requester, 'n'.repeat(128));
  });

  const refused: Array<[string, () => Promise<string>, Partial<AuthSettings>?]> = [
    ['another audience', () => sign({ sub: 'alice', aud: 'https://other.example.com/mcp' })],
    ['no audience', () => sign({ sub: 'alice' })],
    ['no subject', () => sign({ aud: RESOURCE })],
    ['an untrusted issuer', () => sign({ sub: 'alice', aud: RESOURCE, iss: 'https://elsewhere.example' })],
    ['a key the issuer does not publish', () => sign({ sub: 'alice', aud: RESOURCE }, { signer: strangerKey })],
    ['an expired token', () => sign({ sub: 'alice', aud: RESOURCE, exp: Math.floor(Date.now() / 1000) - 60 })],
    [
      'an unsigned token',
      async () =>
        `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: issuer, sub: 'a', aud: RESOURCE, exp: 9e9 })).toString('base64url')}.`,
    ],
    [
      'a symmetric token',
      () =>
        new SignJWT({ sub: 'a', aud: RESOURCE })
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuer(issuer)
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode('k'.repeat(32))),
    ],
    [
      'an aud-less token from a client not configured',
      () => sign({ sub: 'svc', client_id: 'other-client' }),
      { clientIds: ['known-client'] },
    ],
  ];
  for (const [what, token, overrides] of refused) {
    it(`refuses ${what} with 401 invalid_token`, async () => {
      const { status, challenge } = await refusal(resourceServer(overrides), call(await token()));
      assert.equal(status, 401);
      assert.match(
        challenge,
        /^Bearer error="invalid_token", error_description="[^"]+", scope="tasks", resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp"$/,
      );
    });
  }

  it('accepts a configured audience alias, and an aud-less token from a configured client (IdPs that cannot bind)', async () => {
    const alias = await resourceServer({ audiences: ['api://mcp'] }).authorize(
      call(await sign({ sub: 'alice', aud: ['api://mcp', 'other'] })),
    );
    assert.ok(!(alias instanceof Response));
    const client = await resourceServer({ clientIds: ['known-client'] }).authorize(
      call(await sign({ sub: 'svc', client_id: 'known-client' })),
    );
    assert.ok(!(client instanceof Response));
  });

  it('answers a missing endpoint scope 403 insufficient_scope naming it', async () => {
    const { status, challenge } = await refusal(resourceServer(), call(await sign({ sub: 'alice', aud: RESOURCE, scope: 'other' })));
    assert.equal(status, 403);
    assert.match(challenge, /^Bearer error="insufficient_scope", error_description="[^"]+", scope="tasks", resource_metadata="/);
  });

  it("answers a missing tool scope 403 naming the endpoint's and the tool's scopes; reads `scp` lists too", async () => {
    const rs = resourceServer();
    const { status, challenge } = await refusal(rs, call(await sign({ sub: 'alice', aud: RESOURCE }), 'admin'));
    assert.equal(status, 403);
    assert.match(challenge, /scope="tasks tasks:admin"/);
    const granted = await rs.authorize(
      call(await sign({ sub: 'alice', aud: RESOURCE, scope: undefined, scp: ['tasks', 'tasks:admin'] }), 'admin'),
    );
    assert.ok(!(granted instanceof Response));
  });

  it('names no tool scope for a body nested past the limit (the endpoint refuses it unparsed)', async () => {
    const token = await sign({ sub: 'alice', aud: RESOURCE });
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const request = new Request(RESOURCE, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin","arguments":{"x":${deep}}}}`,
    });
    assert.ok(!((await resourceServer().authorize(request)) instanceof Response), 'passed on to the endpoint');
    // The same call, shallow, still needs the tool's scope.
    assert.equal((await refusal(resourceServer(), call(token, 'admin'))).status, 403);
  });

  it('fetches discovery and keys once per verifier (cached for the execution environment)', async () => {
    const rs = resourceServer();
    requests = [];
    for (let i = 0; i < 3; i++) assert.ok(!((await rs.authorize(call(await sign({ sub: `u${i}`, aud: RESOURCE })))) instanceof Response));
    assert.deepEqual(requests, ['/.well-known/openid-configuration', '/jwks']);
  });

  it('answers 500 (not 401) when the issuer cannot be reached, and tries again on the next request', async () => {
    const s = settings({ issuers: ['http://127.0.0.1:9'] });
    const logged: unknown[] = [];
    const rs = createResourceServer({
      settings: s,
      verifier: createJwtVerifier(s, { log: (e) => logged.push(e) }),
      tools,
      log: (e) => logged.push(e),
    });
    const token = await sign({ sub: 'alice', aud: RESOURCE, iss: 'http://127.0.0.1:9' });
    for (let i = 0; i < 2; i++) assert.equal((await refusal(rs, call(token))).status, 500);
    assert.ok(!JSON.stringify(logged).includes(token), 'the token is never logged');
    assert.ok(logged.length >= 2);
  });
});
