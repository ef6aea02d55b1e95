/**
 * Nothing stateful is replaced on upgrade: for each context set of the
 * snapshot (default, `cognito=true`, `authIssuer` + `approvers`), every table,
 * queue, event bus, user pool (client, domain), HTTP API (stage, routes) and
 * the state-key custom resource keeps the logical id and type recorded in
 * `logical-ids.json` (see `logical-ids.ts`), and a planted rename fails.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CfnResource } from 'aws-cdk-lib';
import { idChanges, type LogicalIds, SNAPSHOT_CONTEXTS, SNAPSHOT_FILE, type SnapshotName, synthesizeIds } from './logical-ids.ts';

const snapshot = JSON.parse(readFileSync(SNAPSHOT_FILE, 'utf8')) as Record<SnapshotName, LogicalIds>;

describe('logical ids of the stateful resources', () => {
  for (const name of Object.keys(SNAPSHOT_CONTEXTS) as SnapshotName[]) {
    it(`are the snapshot's with the ${name} context`, () => {
      const expected = snapshot[name];
      assert.ok(Object.keys(expected).length >= 10, `the snapshot lists the ${name} stack's resources`);
      assert.deepEqual(idChanges(expected, synthesizeIds(name)), []);
    });
  }

  it('cover the user pool, its clients and domain with cognito, and the table, queues, bus, API and state key everywhere', () => {
    const typesOf = (name: SnapshotName) => new Set(Object.values(snapshot[name]));
    for (const name of Object.keys(SNAPSHOT_CONTEXTS) as SnapshotName[]) {
      for (const type of ['AWS::DynamoDB::Table', 'AWS::SQS::Queue', 'AWS::Events::EventBus', 'AWS::ApiGatewayV2::Api'])
        assert.ok(typesOf(name).has(type), `${name} has a ${type}`);
      assert.ok(typesOf(name).has('Custom::RequestStateKey'), `${name} has the state key`);
    }
    for (const type of ['AWS::Cognito::UserPool', 'AWS::Cognito::UserPoolClient', 'AWS::Cognito::UserPoolDomain'])
      assert.ok(typesOf('cognito').has(type), `cognito has a ${type}`);
  });

  it('a planted rename of the state key is reported', () => {
    const renamed = synthesizeIds('default', (stack) => {
      const stateKey = stack.node
        .findAll()
        .find(
          (construct): construct is CfnResource =>
            construct instanceof CfnResource && construct.cfnResourceType === 'Custom::RequestStateKey',
        );
      assert.ok(stateKey, 'the stack has a state key');
      stateKey.overrideLogicalId('StateKeyRenamed');
    });
    const changes = idChanges(snapshot.default, renamed);
    assert.equal(changes.length, 2, changes.join('\n'));
    assert.match(changes[0]!, /^StateKey\w+ \(Custom::RequestStateKey\) is gone/);
    assert.match(changes[1]!, /^StateKeyRenamed \(Custom::RequestStateKey\) is new/);
  });
});
