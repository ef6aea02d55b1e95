import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approverClaims, hasApprovers, isApprover, parseApprovers } from '../../../shared/auth/approvers.ts';
import { loadConfig } from '../../../shared/config.ts';

const BASE = { TASKS_TABLE_NAME: 't', TASKS_QUEUE_URL: 'q' };

describe('approvers', () => {
  it('parses group and scope entries, comma- or space-separated', () => {
    assert.deepEqual(parseApprovers('group:release-managers, scope:tasks/approve group:ops', 'X'), {
      groups: ['release-managers', 'ops'],
      scopes: ['tasks/approve'],
    });
    assert.deepEqual(parseApprovers(undefined, 'X'), { groups: [], scopes: [] });
    assert.equal(hasApprovers(parseApprovers('', 'X')), false);
    assert.equal(hasApprovers(parseApprovers('scope:a', 'X')), true);
  });

  for (const bad of ['admins', 'role:admins', 'group:', 'group::x']) {
    it(`refuses "${bad}", naming the setting`, () => {
      assert.throws(() => parseApprovers(bad, 'TASKS_APPROVERS'), /TASKS_APPROVERS must list group:<name> or scope:<name>/);
    });
  }

  it('recognises an approver by a group claim (Cognito or plain) or a scope', () => {
    const approvers = parseApprovers('group:approvers,scope:tasks/approve', 'X');
    assert.equal(isApprover(approvers, approverClaims({ 'cognito:groups': ['staff', 'approvers'] })), true);
    assert.equal(isApprover(approvers, approverClaims({ groups: 'approvers other' })), true);
    assert.equal(isApprover(approvers, approverClaims({ scope: 'openid tasks/approve' })), true);
    assert.equal(isApprover(approvers, approverClaims({ sub: 'x' }, 'openid tasks/approve')), true);
    assert.equal(isApprover(approvers, approverClaims({ 'cognito:groups': ['staff'], scope: 'openid', groups: 7 })), false);
    assert.equal(isApprover(parseApprovers('', 'X'), approverClaims({ 'cognito:groups': ['approvers'] })), false);
  });

  it('reads TASKS_APPROVERS and TASKS_PERSON_QUESTIONS from the environment, url by default', () => {
    const config = loadConfig({ ...BASE, TASKS_APPROVERS: 'group:approvers' });
    assert.deepEqual(config.approvers, { groups: ['approvers'], scopes: [] });
    assert.equal(config.personQuestions, 'url');
    assert.equal(loadConfig({ ...BASE, TASKS_PERSON_QUESTIONS: 'form' }).personQuestions, 'form');
    assert.throws(() => loadConfig({ ...BASE, TASKS_PERSON_QUESTIONS: 'link' }), /TASKS_PERSON_QUESTIONS must be url or form/);
    assert.throws(() => loadConfig({ ...BASE, TASKS_APPROVERS: 'admins' }), /TASKS_APPROVERS/);
  });
});
