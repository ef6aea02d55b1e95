/**
 * The console in the template: its routes (no authorizer, also where `/mcp`
 * has a JWT pre-filter), its function's least-privilege policy, the links'
 * base and the console client's callback from the HTTP API's own endpoint,
 * the user pool's console client, and the list index on the table. Bundling
 * is skipped: the functions are those of the default stack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_PATHS } from '../../infra/constructs/api.ts';
import { ENV } from '../../shared/config.ts';
import { LIST_INDEX } from '../../shared/tasks/dynamodb/index.ts';
import {
  asList,
  functions,
  type Json,
  only,
  removeSynthesized,
  resourcesOf,
  roleLogicalIdOf,
  type Synthesized,
  statementsOf,
  synth,
} from './synth.ts';

let open: Synthesized;
let cognito: Synthesized;

before(() => {
  open = synth({ 'aws:cdk:bundling-stacks': [], console: 'open' });
  // A user pool, and a JWT pre-filter on /mcp: the console's routes must still have no authorizer.
  cognito = synth({
    'aws:cdk:bundling-stacks': [],
    cognito: true,
    cognitoDomainPrefix: 'mcp-tasks-test',
    jwtIssuer: 'https://issuer.example.com/',
    jwtAudience: 'mcp-tasks',
  });
});
after(removeSynthesized);

const routes = (json: Json) => resourcesOf(json, 'AWS::ApiGatewayV2::Route').map(([, route]) => route['Properties'] as Json);
const apiEndpoint = (json: Json) => {
  const [apiId] = only(json, 'AWS::ApiGatewayV2::Api');
  return { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] };
};
const variables = (fn: Json): Json => fn['Properties']['Environment']['Variables'];

describe('console in the template', () => {
  it('is routed, every method, on /console and below, with no authorizer even where /mcp has a JWT pre-filter', () => {
    for (const { json } of [open, cognito]) {
      const console = routes(json).filter((route) => CONSOLE_PATHS.some((path) => route['RouteKey'] === `ANY ${path}`));
      assert.equal(console.length, 2);
      for (const route of console) assert.equal(route['AuthorizationType'] ?? 'NONE', 'NONE', String(route['RouteKey']));
    }
    const mcp = routes(cognito.json).find((route) => route['RouteKey'] === 'POST /mcp');
    assert.equal(mcp?.['AuthorizationType'], 'JWT', 'the pre-filter is on /mcp');
  });

  it('may read, answer and cancel tasks, and nothing else of the table', () => {
    const [, fn] = functions(open.json).console;
    const statements = statementsOf(open.json, roleLogicalIdOf(fn));
    const dynamodb = statements.filter((s) => asList(s['Action']).some((a: string) => a.startsWith('dynamodb:')));
    const actions = dynamodb.flatMap((s) => asList(s['Action'])).sort();
    assert.deepEqual(actions, ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    const resources = JSON.stringify(dynamodb.map((s) => s['Resource']));
    assert.ok(resources.includes(`/index/${LIST_INDEX.name}`), resources);
    assert.ok(!resources.includes('/index/*'), 'no index wildcard');
    const all = statements.flatMap((s) => asList(s['Action']));
    assert.ok(all.includes('sqs:SendMessage'), 'resumes a task');
    assert.ok(all.includes('ssm:GetParameter'), 'reads the state key its cookie keys derive from');
    assert.ok(!all.some((a: string) => /^(secretsmanager|dynamodb:(Put|Delete|Scan|BatchWrite))/.test(a)), all.join(', '));
  });

  it("builds every link from the HTTP API's endpoint and tells the task creators that tasks are listed", () => {
    const fns = functions(open.json);
    for (const name of ['mcp', 'worker', 'console'] as const) {
      assert.deepEqual(variables(fns[name][1])[ENV.publicUrl], apiEndpoint(open.json), name);
    }
    assert.equal(variables(fns.console[1])[ENV.console], 'open');
    assert.equal(variables(fns.mcp[1])[ENV.console], 'open', 'the MCP function lists the tasks it creates');
    const outputs = JSON.stringify(open.json['Outputs']);
    assert.ok(outputs.includes('/console/callback'), 'the callback URL to register is an output');
  });

  it("with cognito: the pool's console client (code + PKCE, no secret, openid) is sent back to the API's /console/callback", () => {
    const clients = resourcesOf(cognito.json, 'AWS::Cognito::UserPoolClient');
    const console = clients.filter(([, c]) => JSON.stringify(c['Properties']['CallbackURLs'] ?? []).includes('/console/callback'));
    assert.equal(console.length, 1);
    const [clientId, client] = console[0]!;
    assert.deepEqual(client['Properties']['AllowedOAuthFlows'], ['code']);
    assert.deepEqual(client['Properties']['AllowedOAuthScopes'], ['openid']);
    assert.equal(client['Properties']['GenerateSecret'], false);
    assert.deepEqual(client['Properties']['CallbackURLs'], [{ 'Fn::Join': ['', [apiEndpoint(cognito.json), '/console/callback']] }]);
    const fns = functions(cognito.json);
    assert.deepEqual(variables(fns.console[1])[ENV.consoleClientId], { Ref: clientId });
    assert.deepEqual(variables(fns.mcp[1])[ENV.consoleClientId], { Ref: clientId }, 'tasks are listed for the people who sign in');
    assert.match(JSON.stringify(variables(fns.console[1])[ENV.consoleIssuer]), /cognito-idp/);
    assert.equal(variables(fns.console[1])[ENV.console], undefined);
  });

  it('refuses console=open with an issuer, and a console client secret is granted by name', () => {
    assert.throws(
      () => synth({ 'aws:cdk:bundling-stacks': [], console: 'open', authIssuer: 'https://issuer.example.com/' }),
      /console=open/,
    );
    const secret = synth({
      'aws:cdk:bundling-stacks': [],
      authIssuer: 'https://issuer.example.com/',
      consoleClientId: 'console-client',
      consoleClientSecret: 'mcp-tasks/console-secret',
    });
    const [, fn] = functions(secret.json).console;
    assert.equal(variables(fn)[ENV.consoleClientId], 'console-client');
    assert.equal(variables(fn)[ENV.consoleIssuer], 'https://issuer.example.com/');
    const actions = statementsOf(secret.json, roleLogicalIdOf(fn)).flatMap((s) => asList(s['Action']));
    assert.ok(actions.includes('secretsmanager:GetSecretValue'), actions.join(', '));
  });

  it('the table has the list index, keys only, with generic string keys', () => {
    const [, table] = only(open.json, 'AWS::DynamoDB::Table');
    const indexes = table['Properties']['GlobalSecondaryIndexes'] as Json[];
    const list = indexes.find((index) => index['IndexName'] === LIST_INDEX.name);
    assert.ok(list);
    assert.deepEqual(list['KeySchema'], [
      { AttributeName: LIST_INDEX.partition, KeyType: 'HASH' },
      { AttributeName: LIST_INDEX.sort, KeyType: 'RANGE' },
    ]);
    assert.deepEqual(list['Projection'], { ProjectionType: 'KEYS_ONLY' });
  });
});
