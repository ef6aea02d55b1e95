/**
 * The cap on unfinished tasks per principal is on by default where people
 * sign in: one rule (`unfinishedTaskCap`), applied by the functions'
 * configuration (the local stack with `LOCAL_AUTH=1` sets the issuer) and
 * by the stack's context (`authIssuer`, `cognito`, `jwtIssuer`), and `0`
 * turns it off everywhere.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App } from 'aws-cdk-lib';
import { tasksStackPropsFromContext } from '../../../infra/context-props.ts';
import { DEFAULT_UNFINISHED_TASK_CAP, ENV, loadConfig, unfinishedTaskCap } from '../../../shared/config.ts';

describe('the cap on unfinished tasks', () => {
  it('is 100 where the endpoint has an issuer, none on an open endpoint, and as set otherwise (0: none)', () => {
    const rows: Array<[number | undefined, boolean, number | undefined]> = [
      [undefined, true, 100],
      [undefined, false, undefined],
      [0, true, undefined],
      [0, false, undefined],
      [5, true, 5],
      [5, false, 5],
    ];
    assert.equal(DEFAULT_UNFINISHED_TASK_CAP, 100);
    for (const [setting, hasIssuer, cap] of rows) assert.equal(unfinishedTaskCap(setting, hasIssuer), cap, `${setting} ${hasIssuer}`);
  });

  it("is the functions' default where tokens are required or the console signs people in", () => {
    const base = { [ENV.tableName]: 't', [ENV.queueUrl]: 'q' };
    const issuer = { [ENV.authIssuers]: 'https://issuer.example.com/', [ENV.authResource]: 'https://api.example.com/mcp' };
    assert.equal(loadConfig(base).maxUnfinishedTasks, undefined);
    assert.equal(loadConfig({ ...base, ...issuer }).maxUnfinishedTasks, 100);
    assert.equal(loadConfig({ ...base, [ENV.consoleIssuer]: 'https://issuer.example.com/' }).maxUnfinishedTasks, 100);
    assert.equal(loadConfig({ ...base, [ENV.consoleClientId]: 'console' }).maxUnfinishedTasks, 100, 'LOCAL_AUTH=1: every function');
    assert.equal(loadConfig({ ...base, ...issuer, [ENV.maxUnfinishedTasks]: '0' }).maxUnfinishedTasks, undefined);
    assert.equal(loadConfig({ ...base, ...issuer, [ENV.maxUnfinishedTasks]: '7' }).maxUnfinishedTasks, 7);
    assert.equal(loadConfig({ ...base, [ENV.maxUnfinishedTasks]: '7' }).maxUnfinishedTasks, 7);
    assert.throws(() => loadConfig({ ...base, [ENV.maxUnfinishedTasks]: '-1' }), /TASKS_MAX_UNFINISHED_TASKS must be a positive integer/);
  });

  it("is what the stack's context passes the functions: the derived cap, and 0 where an issuer's default is turned off", () => {
    const props = (context: Record<string, string>) => tasksStackPropsFromContext(new App({ context }).node).maxUnfinishedTasks;
    const jwt = { jwtIssuer: 'https://issuer.example.com/', jwtAudience: 'mcp' };
    assert.equal(props({}), undefined, 'an open endpoint: nothing set, no cap');
    assert.equal(props({ authIssuer: 'https://issuer.example.com/' }), 100);
    assert.equal(props({ cognito: 'true', cognitoDomainPrefix: 'mcp-tasks-test' }), 100);
    assert.equal(props(jwt), 100, 'a gateway authorizer: the functions see no issuer, so the stack says it');
    assert.equal(props({ authIssuer: 'https://issuer.example.com/', maxUnfinishedTasks: '0' }), 0);
    assert.equal(props({ maxUnfinishedTasks: '0' }), undefined);
    assert.equal(props({ maxUnfinishedTasks: '12' }), 12);
    assert.throws(() => props({ maxUnfinishedTasks: '-3' }), /Context "maxUnfinishedTasks" must be a positive integer/);
  });
});
