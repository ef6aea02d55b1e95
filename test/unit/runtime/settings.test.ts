import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import * as z from 'zod';
import { localSettingReader, settingVariable } from '../../../bin/local/settings.ts';
import { secretsManagerFetcher } from '../../../functions/lib/secrets-manager.ts';
import { ssmParameterFetcher } from '../../../functions/lib/ssm-parameters.ts';
import { runTool } from '../../../shared/runtime/run.ts';
import {
  bindSettings,
  cachedReader,
  isSecret,
  type SettingReader,
  settingStoresOf,
  storeReader,
} from '../../../shared/runtime/settings.ts';
import { defineTool, ToolProtocolError } from '../../../shared/runtime/tool.ts';

const configured = defineTool({
  name: 'configured',
  description: 'Reads a setting.',
  inputSchema: z.object({ key: z.string() }),
  execution: 'optional',
  needs: {
    settings: {
      token: { secretsManager: 'app/token' },
      region: { ssmParameter: '/app/region' },
      pin: { ssmParameter: '/app/pin', secret: true },
    },
  },
  handler: async ({ key }, ctx) => ctx.setting(key),
  prepare: async (_args, ctx) => void (await ctx.setting('region')),
});

const run = (tools: ReadonlyMap<string, typeof configured>, key: string) =>
  runTool(
    tools.get('configured')!,
    { key },
    { taskId: 't', clientCapabilities: {}, answers: {}, cancel: new AbortController().signal, progress: async () => {} },
  );

describe('settings', () => {
  it('bindSettings gives handler and prepare a ctx.setting reading the declared source', async () => {
    const reads: unknown[] = [];
    const reader: SettingReader = async (tool, key, source) => {
      reads.push([tool, key, source]);
      return `value of ${key}`;
    };
    const tools = bindSettings(new Map([['configured', configured]]), reader);
    assert.deepEqual(await run(tools, 'token'), { kind: 'result', result: { content: [{ type: 'text', text: 'value of token' }] } });
    await tools.get('configured')!.prepare!({}, { setting: async () => 'unbound' } as never);
    assert.deepEqual(reads, [
      ['configured', 'token', { secretsManager: 'app/token' }],
      ['configured', 'region', { ssmParameter: '/app/region' }],
    ]);
  });

  it('rejects an undeclared key, and a read without bound settings', async () => {
    const tools = bindSettings(new Map([['configured', configured]]), async () => 'x');
    await assert.rejects(run(tools, 'toString'), /does not declare in needs.settings/);
    await assert.rejects(run(new Map([['configured', configured]]), 'token'), /no settings are bound/);
  });

  it('cachedReader reads each source once, and again after a failure', async () => {
    let calls = 0;
    let fail = true;
    const read = cachedReader(async () => {
      calls++;
      if (fail) throw new Error('throttled');
      return 'v';
    });
    await assert.rejects(read('t', 'k', { ssmParameter: '/a' }), /throttled/);
    fail = false;
    assert.equal(await read('t', 'k', { ssmParameter: '/a' }), 'v');
    assert.equal(await read('u', 'other', { ssmParameter: '/a' }), 'v');
    assert.equal(calls, 2);
    await read('t', 'k', { ssmParameter: '/a', secret: true });
    await read('t', 'k', { secretsManager: '/a' });
    assert.equal(calls, 4, 'decrypted or not, and another store, are other sources');
  });

  it('storeReader sends each kind to its fetcher and fails clearly for a store the bundle lacks', async () => {
    const read = storeReader({ ssmParameter: async (name, decrypt) => `${name}:${decrypt}` });
    assert.equal(await read('t', 'k', { ssmParameter: '/p', secret: true }), '/p:true');
    assert.equal(await read('t', 'k', { ssmParameter: '/p' }), '/p:false');
    await assert.rejects(read('t', 'k', { secretsManager: 's' }), /bundled without a Secrets Manager client/);
    await assert.rejects(storeReader({})('t', 'k', { ssmParameter: '/p' }), /bundled without an SSM client/);
  });

  it('settingStoresOf and isSecret read the declarations', () => {
    assert.deepEqual(settingStoresOf([configured]), { ssmParameter: true, secretsManager: true });
    assert.deepEqual(settingStoresOf([]), { ssmParameter: false, secretsManager: false });
    assert.deepEqual(Object.values(configured.needs!.settings!).map(isSecret), [true, false, true]);
  });
});

describe('local settings', () => {
  it('names variables <TOOL>_<KEY> in upper snake case', () => {
    assert.equal(settingVariable('fetch_report', 'apiKey'), 'FETCH_REPORT_API_KEY');
    assert.equal(settingVariable('a-b', 'base.url'), 'A_B_BASE_URL');
  });

  it('reads the variable, else the file, and says where to set a missing one without any value', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-tasks-local-settings-'));
    try {
      const file = join(dir, 'settings.local.json');
      await writeFile(file, JSON.stringify({ t: { a: 'from-file', b: 'file-b' } }));
      const read = localSettingReader({ file, env: { T_B: 'from-env' } });
      assert.equal(await read('t', 'a', { secretsManager: 'x' }), 'from-file');
      assert.equal(await read('t', 'b', { secretsManager: 'x' }), 'from-env');
      const missing = await read('t', 'c', { secretsManager: 'x' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(missing instanceof ToolProtocolError);
      assert.match(missing.message, /set T_C or add it to .*settings\.local\.json/);
      assert.ok(!missing.message.includes('from-'));
      await assert.rejects(
        localSettingReader({ file: join(dir, 'absent.json'), env: {} })('t', 'a', { secretsManager: 'x' }),
        /not set locally/,
      );
      await writeFile(file, '[1]');
      await assert.rejects(localSettingReader({ file, env: {} })('t', 'a', { secretsManager: 'x' }), /must hold an object/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('setting store adapters', () => {
  it('read an SSM parameter, decrypting when asked', async () => {
    const sent: unknown[] = [];
    const client = {
      send: async (command: GetParameterCommand) => {
        sent.push(command.input);
        return { Parameter: { Value: 'v' } };
      },
    } as unknown as SSMClient;
    assert.equal(await ssmParameterFetcher(client)('/p', true), 'v');
    assert.deepEqual(sent, [{ Name: '/p', WithDecryption: true }]);
    const empty = { send: async () => ({}) } as unknown as SSMClient;
    await assert.rejects(ssmParameterFetcher(empty)('/p', false), /has no value/);
  });

  it('read a Secrets Manager secret string', async () => {
    const sent: unknown[] = [];
    const client = {
      send: async (command: GetSecretValueCommand) => {
        sent.push(command.input);
        return { SecretString: 's' };
      },
    } as unknown as SecretsManagerClient;
    assert.equal(await secretsManagerFetcher(client)('app/token'), 's');
    assert.deepEqual(sent, [{ SecretId: 'app/token' }]);
    await assert.rejects(
      secretsManagerFetcher({ send: async () => ({ SecretBinary: new Uint8Array() }) } as unknown as SecretsManagerClient)('b'),
      /no string value/,
    );
  });
});
