/**
 * The lifecycle events in the template: a bus of the stack's own, named in
 * the outputs; `events:PutEvents` on that bus only, for exactly the
 * functions that publish, which are given its name; and with
 * `-c events=off`, none of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { App } from 'aws-cdk-lib';
import { tasksStackPropsFromContext } from '../../infra/context-props.ts';
import { EVENT_OUTPUTS } from '../../infra/outputs.ts';
import { ENV } from '../../shared/config.ts';
import {
  arnOf,
  asList,
  defaultStack,
  functions,
  type Json,
  only,
  refTo,
  removeSynthesized,
  resourcesOf,
  roleLogicalIdOf,
  type Synthesized,
  statementsOf,
  synth,
} from './synth.ts';

let on: Synthesized;
let off: Synthesized;

before(() => {
  on = defaultStack();
  off = synth({ events: 'off', 'aws:cdk:bundling-stacks': [] });
});
after(removeSynthesized);

/** Every statement of every policy that names an EventBridge action, by the role it is attached to. */
function eventStatements(json: Json): Array<{ role: string; statement: Json }> {
  return resourcesOf(json, 'AWS::IAM::Policy').flatMap(([, policy]) =>
    (policy['Properties']['PolicyDocument']['Statement'] as Json[])
      .filter((statement) => asList<string>(statement['Action']).some((action) => action.startsWith('events:')))
      .flatMap((statement) => (policy['Properties']['Roles'] as Json[]).map((role) => ({ role: String(role['Ref']), statement }))),
  );
}

describe('lifecycle events (default: on)', () => {
  it('publish to a bus of the stack, named in the outputs', () => {
    const [busId] = only(on.json, 'AWS::Events::EventBus');
    assert.deepEqual(on.json['Outputs'][EVENT_OUTPUTS.busName]['Value'], refTo(busId));
    assert.deepEqual(on.json['Outputs'][EVENT_OUTPUTS.busArn]['Value'], arnOf(busId));
  });

  it('grant events:PutEvents on that bus only, to exactly the worker, the MCP function, the console, the sweeper and the dead-letter handler', () => {
    const [busId] = only(on.json, 'AWS::Events::EventBus');
    const fns = functions(on.json);
    const publishers = [fns.mcp, fns.worker, fns.console, fns.sweeper, fns.deadLetter].map(([, fn]) => roleLogicalIdOf(fn)).sort();
    const grants = eventStatements(on.json);
    assert.deepEqual(grants.map((grant) => grant.role).sort(), publishers, 'one statement per publishing role, none for any other');
    for (const { statement } of grants) {
      assert.deepEqual(asList(statement['Action']), ['events:PutEvents']);
      assert.deepEqual(statement['Resource'], arnOf(busId));
      assert.equal(statement['Effect'], 'Allow');
    }
  });

  it("name the bus to the functions that publish, and give the worker the API's URL for the task page's link", () => {
    const [busId] = only(on.json, 'AWS::Events::EventBus');
    const [apiId] = only(on.json, 'AWS::ApiGatewayV2::Api');
    for (const [name, [id, fn]] of Object.entries(functions(on.json))) {
      assert.deepEqual(fn['Properties']['Environment']['Variables'][ENV.eventBusName], refTo(busId), `${name} (${id})`);
    }
    const [, worker] = functions(on.json).worker;
    assert.deepEqual(worker['Properties']['Environment']['Variables'][ENV.publicUrl], { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
    // The function that creates the stack's secret publishes nothing.
    const secretCreator = only(on.json, 'AWS::Lambda::Function', (fn) =>
      String(fn['Properties']['Description']).includes("the stack's secret"),
    );
    assert.equal(secretCreator[1]['Properties']['Environment']?.['Variables']?.[ENV.eventBusName], undefined);
    const secretCreatorRole = roleLogicalIdOf(secretCreator[1]);
    assert.ok(!statementsOf(on.json, secretCreatorRole).some((s) => asList<string>(s['Action']).some((a) => a.startsWith('events:'))));
  });
});

describe('lifecycle events with -c events=off', () => {
  it('have no bus, no grant, no variable and no output', () => {
    assert.deepEqual(resourcesOf(off.json, 'AWS::Events::EventBus'), []);
    assert.deepEqual(eventStatements(off.json), []);
    for (const [name, [, fn]] of Object.entries(functions(off.json))) {
      const variables = fn['Properties']['Environment']['Variables'] as Json;
      assert.equal(variables[ENV.eventBusName], undefined, name);
    }
    assert.equal(off.json['Outputs'][EVENT_OUTPUTS.busName], undefined);
    assert.equal(off.json['Outputs'][EVENT_OUTPUTS.busArn], undefined);
  });

  it('is the only other value the key takes', () => {
    const read = (events: string) => tasksStackPropsFromContext(new App({ context: { events } }).node);
    assert.equal(read('on').events, undefined);
    assert.equal(read('off').events, false);
    assert.throws(() => read('maybe'), /Context "events" must be on or off/);
  });
});
