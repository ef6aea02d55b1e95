/** Which callers are machines (`shared/auth/machine.ts`): the rule of `TASKS_MACHINE_CLAIM` on a token's claims, as IdPs issue them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMachine, parseMachineRule } from '../../../shared/auth/machine.ts';

/** Client-credentials and person tokens, with the claims each IdP puts in them that the rule reads. */
const TOKENS = {
  cognitoMachine: { sub: '4f1k3cl13nt', client_id: '4f1k3cl13nt', token_use: 'access' },
  cognitoPerson: { sub: '9a8b-person', client_id: '4f1k3cl13nt', username: 'ada' },
  oktaMachine: { sub: '0oa1service', cid: '0oa1service' },
  oktaPerson: { sub: 'ada@example.com', cid: '0oa1app', uid: '00u1ada' },
  auth0Machine: { sub: 'AbC123@clients', azp: 'AbC123', gty: 'client-credentials' },
  auth0Person: { sub: 'auth0|64ada', azp: 'AbC123' },
  entraApp: { sub: '7c1f-service-principal', azp: 'e4a2-client-app', oid: '7c1f-service-principal', idtyp: 'app', roles: ['Tasks.Run'] },
  entraPerson: { sub: 'XyZ-pairwise', azp: 'e4a2-client-app', oid: '1b2c-ada', idtyp: 'user', scp: 'tasks' },
  localMachine: { sub: 'client-7', client_id: 'client-7' },
  noClient: { sub: 'ada' },
};

const machinesUnder = (raw?: string) =>
  Object.entries(TOKENS)
    .filter(([, claims]) => isMachine(parseMachineRule(raw, 'TASKS_MACHINE_CLAIM'), claims))
    .map(([name]) => name);

describe('the machine rule', () => {
  it("by default: the token's sub equals its client id, client_id, azp or cid (Cognito, Okta, the local server)", () => {
    assert.deepEqual(machinesUnder(undefined), ['cognitoMachine', 'oktaMachine', 'localMachine']);
    assert.deepEqual(machinesUnder(''), machinesUnder(undefined));
  });

  it('<claim>=<value>: Auth0 marks client credentials with gty, Entra ID app-only tokens with idtyp (a string or in a list)', () => {
    assert.deepEqual(machinesUnder('gty=client-credentials'), ['auth0Machine']);
    assert.deepEqual(machinesUnder('idtyp=app'), ['entraApp']);
    assert.deepEqual(machinesUnder('roles=Tasks.Run'), ['entraApp']);
  });

  it('none: no caller is a machine', () => {
    assert.deepEqual(machinesUnder('none'), []);
  });

  it('anything else is refused, naming the setting', () => {
    for (const raw of ['gty', '=x', 'a=b c', 'gty=']) {
      assert.throws(() => parseMachineRule(raw, 'TASKS_MACHINE_CLAIM'), /TASKS_MACHINE_CLAIM must be none or <claim>=<value>/, raw);
    }
  });
});
