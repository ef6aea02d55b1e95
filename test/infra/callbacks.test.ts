/**
 * Callbacks in the template: `POST /callbacks/{token}` to a function of its
 * own with no authorizer (also where `/mcp` has a JWT pre-filter), that
 * function's least-privilege policy, and the worker's read of the state key
 * (it seals the tokens). Bundling is skipped: the functions are those of the
 * default stack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ENV } from '../../shared/config.ts';
import {
  asList,
  functions,
  type Json,
  removeSynthesized,
  resourcesOf,
  roleLogicalIdOf,
  type Synthesized,
  statementsOf,
  synth,
} from './synth.ts';

let open: Synthesized;
let jwt: Synthesized;

before(() => {
  open = synth({ 'aws:cdk:bundling-stacks': [] });
  jwt = synth({ 'aws:cdk:bundling-stacks': [], jwtIssuer: 'https://issuer.example.com/', jwtAudience: 'mcp-tasks' });
});
after(removeSynthesized);

const routes = (json: Json) => resourcesOf(json, 'AWS::ApiGatewayV2::Route').map(([, route]) => route['Properties'] as Json);
const actionsOf = (json: Json, fn: Json) => statementsOf(json, roleLogicalIdOf(fn)).flatMap((s) => asList(s['Action']) as string[]);

describe('callbacks in the template', () => {
  it('routes POST (and any other method, answered 405) /callbacks/{token} to the callbacks function, with no authorizer even where /mcp has a JWT pre-filter', () => {
    for (const { json } of [open, jwt]) {
      const callback = routes(json).filter((route) => String(route['RouteKey']).endsWith(' /callbacks/{token}'));
      assert.deepEqual(callback.map((route) => route['RouteKey']).sort(), ['ANY /callbacks/{token}', 'POST /callbacks/{token}']);
      for (const route of callback) {
        assert.equal(route['AuthorizationType'] ?? 'NONE', 'NONE');
        const [integrationId] = JSON.stringify(route['Target']).match(/CallbacksIntegration\w*/) ?? [];
        assert.ok(integrationId, 'its own integration');
      }
    }
    assert.equal(routes(jwt.json).find((route) => route['RouteKey'] === 'POST /mcp')?.['AuthorizationType'], 'JWT');
  });

  it('may read and conditionally write task rows, enqueue and read the state key, and nothing else', () => {
    const [, fn] = functions(open.json).callbacks;
    const actions = actionsOf(open.json, fn);
    const dynamodb = actions.filter((a) => a.startsWith('dynamodb:')).sort();
    assert.deepEqual(dynamodb, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    assert.ok(actions.includes('sqs:SendMessage'), 'resumes a task');
    assert.ok(actions.includes('ssm:GetParameter'), 'reads the state key its token key derives from');
    assert.ok(!actions.some((a) => /^(secretsmanager|events|dynamodb:(Put|Delete|Scan|Query|BatchWrite))/.test(a)), actions.join(', '));
    assert.ok(fn['Properties']['Environment']['Variables'][ENV.stackSecretParameter]);
  });

  it('lets the worker read the state key, named in its environment, to seal the tokens it hands out', () => {
    const [, worker] = functions(open.json).worker;
    assert.ok(actionsOf(open.json, worker).includes('ssm:GetParameter'));
    assert.deepEqual(
      worker['Properties']['Environment']['Variables'][ENV.stackSecretParameter],
      functions(open.json).callbacks[1]['Properties']['Environment']['Variables'][ENV.stackSecretParameter],
    );
  });
});
