/**
 * The stack as an OAuth resource server: the metadata routes, the challenge
 * path (the function, with the environment the stack gives it, answers 401
 * with the metadata URL) and the settings, for an existing issuer and for the
 * user pool the stack can create; cdk-nag stays clean. Bundling is skipped:
 * the functions are those of the default stack (see bundles.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createMcpHandler } from '../../functions/mcp/app.ts';
import { catalogue, productTools } from '../../functions/tools/index.ts';
import { createApp, STACK_ID } from '../../infra/app.ts';
import { METADATA_PATHS, OPEN_ENDPOINT_WARNING } from '../../infra/constructs/api.ts';
import { USER_POOL_SCOPE } from '../../infra/constructs/user-pool.ts';
import { ENV, loadConfig } from '../../shared/config.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory/index.ts';
import { CDK_CONTEXT, type Json, removeSynthesized, resourcesOf, synth } from './synth.ts';

/** Synthesized without esbuild, with the warnings the stack annotates (the open-endpoint one). */
function synthesize(context: Record<string, unknown>) {
  const synthesized = synth({ 'aws:cdk:bundling-stacks': [], ...context });
  const warnings = synthesized.app
    .synth()
    .getStackByName(STACK_ID)
    .messages.filter((m) => m.level === 'warning')
    .map((m) => String(m.entry.data));
  return { ...synthesized, warnings };
}

function mcpFunction(json: Json): Json {
  const [fn] = resourcesOf(json, 'AWS::Lambda::Function').filter(([, f]) =>
    String(f['Properties']['Description']).includes('MCP endpoint'),
  );
  return fn![1];
}

function nagFindings(report: Json): string[] {
  return (report['pluginReports'] as Json[])
    .filter((r) => r['pluginName'] === 'AwsSolutions')
    .flatMap((r) =>
      (r['violations'] as Json[]).map(
        (v) => `${v['ruleName']} at ${(v['violatingConstructs'] as Json[]).map((c) => c['constructPath']).join(', ')}`,
      ),
    );
}

/** The function's environment with the API's URL (a CloudFormation token) resolved to a plausible value. */
function resolvedEnvironment(fn: Json, apiUrl: string): Record<string, string> {
  const env = fn['Properties']['Environment']['Variables'] as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [
      name,
      typeof value === 'string'
        ? value
        : name === ENV.authResource
          ? apiUrl
          : name === ENV.publicUrl
            ? apiUrl.replace(/\/mcp$/, '')
            : 'resolved-at-deploy',
    ]),
  );
}

function event(method: string, path: string, headers: Record<string, string> = {}, body?: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    // A Host header naming another site: nothing in the answers may come from it.
    headers: { host: 'attacker.example', ...headers },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc',
      domainName: 'attacker.example',
      domainPrefix: 'abc',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'r1',
      routeKey: `${method} ${path}`,
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(body ? { body } : {}),
    isBase64Encoded: false,
  };
}

after(removeSynthesized);

describe('an existing issuer (authIssuer)', () => {
  let s: ReturnType<typeof synthesize>;
  before(() => {
    s = synthesize({ authIssuer: 'https://issuer.example.com/', authScopes: 'mcp:tasks', authAudiences: 'api://mcp-tasks' });
  });

  it('routes the metadata documents to the MCP function, unauthenticated, and leaves the challenge to the function', () => {
    // The console's routes go to a function of its own (test/infra/console.test.ts).
    const routes = resourcesOf(s.json, 'AWS::ApiGatewayV2::Route')
      .map(([, r]) => r['Properties'])
      .filter((r) => !String(r['RouteKey']).includes('/console') && !String(r['RouteKey']).includes('/callbacks'));
    const byKey = new Map(routes.map((r) => [r['RouteKey'], r]));
    assert.deepEqual([...byKey.keys()].sort(), [
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-protected-resource/mcp',
      'POST /mcp',
    ]);
    for (const route of byKey.values()) {
      assert.ok(
        route['AuthorizationType'] === undefined || route['AuthorizationType'] === 'NONE',
        `${route['RouteKey']} has no API Gateway authorizer`,
      );
      assert.deepEqual(route['Target'], byKey.get('POST /mcp')!['Target'], `${route['RouteKey']} reaches the MCP function`);
    }
    assert.equal(resourcesOf(s.json, 'AWS::ApiGatewayV2::Authorizer').length, 0);
    assert.ok(!s.warnings.some((w) => w.includes(OPEN_ENDPOINT_WARNING)));
  });

  it('gives the function the issuer, scopes, audiences and the API URL as the canonical resource', () => {
    const env = mcpFunction(s.json)['Properties']['Environment']['Variables'];
    assert.equal(env[ENV.authIssuers], 'https://issuer.example.com/');
    assert.equal(env[ENV.authScopes], 'mcp:tasks');
    assert.equal(env[ENV.authAudiences], 'api://mcp-tasks');
    // People sign in: the cap on unfinished tasks per principal is on by default, for every function (those that end tasks free slots).
    for (const [, fn] of resourcesOf(s.json, 'AWS::Lambda::Function').filter(([, f]) => f['Properties']['Environment'])) {
      const variables = fn['Properties']['Environment']['Variables'];
      if (variables[ENV.tableName] !== undefined)
        assert.equal(variables[ENV.maxUnfinishedTasks], '100', String(fn['Properties']['Description']));
    }
    assert.equal(env[ENV.maxUnfinishedTasks], '100');
    const resource = JSON.stringify(env[ENV.authResource]);
    // Never the Host header: the HTTP API's own endpoint, + /mcp.
    assert.match(resource, /"Fn::GetAtt":\["ApiHttpApi[0-9A-F]+","ApiEndpoint"\]\},"\/mcp"\]/);
  });

  it('composes a function that serves the metadata and challenges a request without a token', async () => {
    const apiUrl = 'https://abc.execute-api.us-east-1.amazonaws.com/mcp';
    const config = loadConfig({ ...resolvedEnvironment(mcpFunction(s.json), apiUrl), [ENV.queueUrl]: 'https://sqs.example/q' });
    const handler = createMcpHandler({
      config,
      store: new InMemoryTaskStore(config),
      queue: new InMemoryTaskQueue(),
      tools: catalogue(productTools),
      log: () => {},
      stackSecret: async () => new Uint8Array(32).fill(7),
    });

    for (const path of METADATA_PATHS) {
      const metadata = (await handler(event('GET', path))) as APIGatewayProxyStructuredResultV2;
      assert.equal(metadata.statusCode, 200, path);
      assert.deepEqual(JSON.parse(String(metadata.body)), {
        resource: apiUrl,
        authorization_servers: ['https://issuer.example.com/'],
        scopes_supported: ['mcp:tasks'],
        bearer_methods_supported: ['header'],
        resource_name: 'MCP Tasks',
      });
    }
    const refused = (await handler(
      event('POST', '/mcp', { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'),
    )) as APIGatewayProxyStructuredResultV2;
    assert.equal(refused.statusCode, 401);
    assert.equal(
      refused.headers?.['www-authenticate'],
      'Bearer resource_metadata="https://abc.execute-api.us-east-1.amazonaws.com/.well-known/oauth-protected-resource/mcp", ' +
        'scope="mcp:tasks"',
    );
  });

  it('keeps an API Gateway JWT authorizer as a pre-filter when asked', () => {
    const filtered = synthesize({
      authIssuer: 'https://issuer.example.com/',
      jwtIssuer: 'https://issuer.example.com/',
      jwtAudience: 'https://api.example.com/mcp',
    });
    const routes = resourcesOf(filtered.json, 'AWS::ApiGatewayV2::Route').map(([, r]) => r['Properties']);
    assert.equal(routes.find((r) => r['RouteKey'] === 'POST /mcp')!['AuthorizationType'], 'JWT');
    for (const r of routes.filter((route) => route['RouteKey'].startsWith('GET')))
      assert.ok(r['AuthorizationType'] === undefined || r['AuthorizationType'] === 'NONE');
    assert.deepEqual(nagFindings(filtered.report), []);
  });

  it('passes cdk-nag (the public routes acknowledged with reasons)', () => {
    assert.deepEqual(nagFindings(s.report), []);
  });
});

describe('a user pool the stack creates (cognito=true)', () => {
  let s: ReturnType<typeof synthesize>;
  before(() => {
    s = synthesize({ cognito: true, cognitoDomainPrefix: 'mcp-tasks-test' });
  });

  it('creates the pool, its resource server scope and two clients: code + PKCE without secret, client credentials with one', () => {
    const [, server] = resourcesOf(s.json, 'AWS::Cognito::UserPoolResourceServer')[0]!;
    assert.deepEqual(
      server['Properties']['Scopes'].map((scope: Json) => scope['ScopeName']),
      ['tasks'],
    );
    const clients = resourcesOf(s.json, 'AWS::Cognito::UserPoolClient').map(([, c]) => c['Properties']);
    const user = clients.find((c) => c['AllowedOAuthFlows']?.includes('code'))!;
    const service = clients.find((c) => c['AllowedOAuthFlows']?.includes('client_credentials'))!;
    assert.equal(user['GenerateSecret'], false);
    assert.ok(user['CallbackURLs'].includes('http://127.0.0.1:33418/callback'));
    assert.equal(service['GenerateSecret'], true);
  });

  it('trusts the pool as the issuer, requires its scope, and accepts its aud-less tokens only from its own clients', () => {
    const env = mcpFunction(s.json)['Properties']['Environment']['Variables'];
    assert.match(JSON.stringify(env[ENV.authIssuers]), /cognito-idp\..*amazonaws\.com/);
    assert.equal(env[ENV.authScopes], USER_POOL_SCOPE);
    const clientIds = JSON.stringify(env[ENV.authClientIds]);
    const clients = resourcesOf(s.json, 'AWS::Cognito::UserPoolClient').map(([id]) => id);
    // The console's client signs people in to the console only: its tokens are never the endpoint's to accept.
    const mcpClients = clients.filter((id) => !id.includes('ConsoleClient'));
    assert.equal(mcpClients.length, clients.length - 1);
    for (const id of mcpClients) assert.ok(clientIds.includes(id), `${id} is an accepted client`);
    assert.ok(!clientIds.includes(clients.find((id) => id.includes('ConsoleClient'))!), 'the console client is not');
  });

  it('passes cdk-nag (optional MFA and the Essentials plan acknowledged with reasons)', () => {
    assert.deepEqual(nagFindings(s.report), []);
  });
});

describe('auth context', () => {
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a non-https issuer', { authIssuer: 'http://issuer.example.com/' }, /authIssuer/],
    [
      'a resource that is not https://<host>/mcp',
      { authIssuer: 'https://issuer.example.com/', authResource: 'https://mcp.example.com/other' },
      /authResource/,
    ],
    ['auth settings without an issuer', { authScopes: 'x' }, /authIssuer/],
    ['a user pool without a domain prefix', { cognito: true }, /cognitoDomainPrefix/],
  ];
  for (const [what, context, message] of bad) {
    it(`rejects ${what}`, () => {
      assert.throws(() => createApp({ context: { ...CDK_CONTEXT, ...context, 'aws:cdk:bundling-stacks': [] } }), message);
    });
  }
});
