import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { localStackEnvironment } from '../../bin/local/environment.ts';
import { CONFIGURATION_PAGE, withTables } from '../../bin/scripts/config-tables.ts';
import { DEFAULT_SETTINGS, ENV, loadConfig, SETTINGS } from '../../shared/config.ts';

const base = { [ENV.tableName]: 'tasks', [ENV.queueUrl]: 'https://sqs.example/q' };

describe('loadConfig', () => {
  it('reads required values and applies defaults', () => {
    const config = loadConfig(base);
    assert.equal(config.tableName, 'tasks');
    assert.equal(config.queueUrl, 'https://sqs.example/q');
    assert.equal(config.localPrincipal, 'local');
    assert.equal(config.toolset, 'product');
    assert.equal(config.taskTtlMs, DEFAULT_SETTINGS.taskTtlMs);
  });

  it('fails loudly at start when a required value is missing', () => {
    assert.throws(() => loadConfig({ [ENV.queueUrl]: 'q' }), /TASKS_TABLE_NAME/);
    assert.throws(() => loadConfig({ [ENV.tableName]: 't' }), /TASKS_QUEUE_URL/);
  });

  for (const value of ['0', '-5', '1.5', 'soon']) {
    it(`rejects ${JSON.stringify(value)} for a duration`, () => {
      assert.throws(() => loadConfig({ ...base, [ENV.leaseMs]: value }), /TASKS_LEASE_MS must be a positive integer/);
    });
  }

  it('rejects an unknown toolset', () => {
    assert.throws(() => loadConfig({ ...base, [ENV.toolset]: 'everything' }), /TASKS_TOOLSET/);
  });
  it('leaves the endpoint open without issuers, and reads the resource server settings with them', () => {
    assert.equal(loadConfig(base).auth, undefined);
    const config = loadConfig({
      ...base,
      [ENV.authIssuers]: 'https://a.example/, https://b.example',
      [ENV.authResource]: 'https://mcp.example.com/mcp',
      [ENV.authScopes]: 'tasks tasks:read',
      [ENV.authClientIds]: 'c1,c2',
    });
    assert.deepEqual(config.auth, {
      resource: 'https://mcp.example.com/mcp',
      issuers: ['https://a.example/', 'https://b.example'],
      authorizationServers: ['https://a.example/', 'https://b.example'],
      scopes: ['tasks', 'tasks:read'],
      audiences: [],
      clientIds: ['c1', 'c2'],
    });
  });

  for (const [what, env, message] of [
    ['issuers without a resource', { [ENV.authIssuers]: 'https://a.example' }, /TASKS_AUTH_RESOURCE/],
    [
      'a plain-http resource off loopback',
      { [ENV.authIssuers]: 'https://a.example', [ENV.authResource]: 'http://mcp.example.com/mcp' },
      /TASKS_AUTH_RESOURCE/,
    ],
    ['workflow bindings that are not JSON', { [ENV.workflows]: 'deploy_release=arn' }, /TASKS_WORKFLOWS must be a JSON object/],
    [
      'a workflow binding that is no state machine ARN',
      { [ENV.workflows]: '{"deploy_release":"arn:aws:lambda:us-east-1:123456789012:function:f"}' },
      /the binding of "deploy_release" must be a state machine ARN/,
    ],
    ['a client fallback that is neither on nor off', { [ENV.clientFallback]: 'yes' }, /TASKS_CLIENT_FALLBACK must be on or off/],
    [
      'a machine rule that is neither none nor <claim>=<value>',
      { [ENV.machineClaim]: 'gty' },
      /TASKS_MACHINE_CLAIM must be none or <claim>=<value>/,
    ],
    [
      'a plain-http issuer off loopback',
      { [ENV.authIssuers]: 'http://a.example', [ENV.authResource]: 'https://mcp.example.com/mcp' },
      /TASKS_AUTH_ISSUERS/,
    ],
  ] as const) {
    it(`rejects ${what}`, () => {
      assert.throws(() => loadConfig({ ...base, ...env }), message);
    });
  }

  it('reads every setting of the table from its variable', () => {
    const defaults: Record<string, unknown> = loadConfig(base);
    for (const [key, setting] of Object.entries(SETTINGS)) {
      if (key.startsWith('auth')) continue;
      const raw =
        key === 'toolset'
          ? 'all'
          : key === 'allowedOrigins'
            ? 'https://app.example.com'
            : key === 'clientFallback'
              ? 'off'
              : key === 'publicUrl'
                ? 'https://tasks.example.com'
                : key === 'console'
                  ? 'open'
                  : key === 'approvers'
                    ? 'group:approvers'
                    : key === 'personQuestions'
                      ? 'form'
                      : key === 'machineClaim'
                        ? 'gty=client-credentials'
                        : key === 'workflows'
                          ? '{"deploy_release":"arn:aws:states:us-east-1:123456789012:stateMachine:deploy-release"}'
                          : '7';
      const config: Record<string, unknown> = loadConfig({ ...base, [setting.env]: raw });
      assert.notDeepEqual(config[key], defaults[key], `${setting.env} is read into ${key}`);
    }
  });
});

describe('settings table', () => {
  it('is what docs/configuration.md shows (npx tsx bin/scripts/config-tables.ts renders it)', () => {
    const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
    assert.match(page, /<!-- table: settings -->/);
    assert.match(page, /<!-- table: context -->/);
    assert.match(page, /<!-- table: local -->/);
    assert.equal(page, withTables(page), 'docs/configuration.md tables are stale: run npx tsx bin/scripts/config-tables.ts');
  });
});

describe('npm start environment', () => {
  it('reads its variables with their defaults, auth on the next port', () => {
    assert.deepEqual(localStackEnvironment({}), { port: 3000, dataDir: '.data' });
    assert.deepEqual(
      localStackEnvironment({
        PORT: '0',
        LOCAL_DATA_DIR: '/tmp/x',
        LOCAL_SWEEP_INTERVAL_MS: '300',
        LOCAL_VISIBILITY_TIMEOUT_SECONDS: '1',
        LOCAL_MAX_RECEIVE_COUNT: '2',
      }),
      {
        port: 0,
        dataDir: '/tmp/x',
        sweepIntervalMs: 300,
        visibilityTimeoutSeconds: 1,
        maxReceiveCount: 2,
      },
    );
    assert.deepEqual(
      localStackEnvironment({ PORT: '4000', LOCAL_AUTH: '1', LOCAL_AUTH_OTHER_RESOURCES: 'https://a.example/mcp, https://b.example/mcp' })
        .auth,
      {
        port: 4001,
        otherResources: ['https://a.example/mcp', 'https://b.example/mcp'],
      },
    );
  });

  it('pins the emulators’ ports it is given, and only those', () => {
    assert.deepEqual(localStackEnvironment({ LOCAL_DYNAMODB_PORT: '4566', LOCAL_STEPFUNCTIONS_PORT: '8083' }).emulatorPorts, {
      dynamodb: 4566,
      stepFunctions: 8083,
    });
    assert.deepEqual(localStackEnvironment({ LOCAL_SQS_PORT: '9324' }).emulatorPorts, { sqs: 9324 });
    assert.throws(() => localStackEnvironment({ LOCAL_SQS_PORT: '65536' }), /^Error: LOCAL_SQS_PORT must be an integer from 0 to 65535/);
  });

  for (const [name, value] of [
    ['PORT', '70000'],
    ['PORT', 'http'],
    ['LOCAL_SWEEP_INTERVAL_MS', '0'],
    ['LOCAL_MAX_RECEIVE_COUNT', '1.5'],
  ] as const) {
    it(`refuses ${name}=${value}, naming the variable`, () => {
      assert.throws(() => localStackEnvironment({ [name]: value }), new RegExp(`^Error: ${name} must be an integer`));
    });
  }
});
