/** Tool settings on the local stack: a declared secret read from the environment or `settings.local.json`. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { textOf } from '../../kit/kit.ts';
import { callTool, startTestStack } from '../../kit/local.ts';
import type { LogEvent } from '../../shared/log.ts';

const fingerprint = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 12);

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcp-tasks-settings-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('tool settings on the local stack', () => {
  it('reads a declared secret from the environment (REPORT_DIGEST_API_KEY), and never logs it', async () => {
    const lines: LogEvent[] = [];
    const stack = await startTestStack({
      env: { TASKS_TOOLSET: 'test', REPORT_DIGEST_API_KEY: 'env-secret-value' },
      log: (line) => void lines.push(line),
    });
    try {
      const task = await callTool(stack.url, 'report_digest', {});
      assert.equal(task.status, 'completed', JSON.stringify(task));
      assert.equal(textOf(task.result!), `API key fingerprint ${fingerprint('env-secret-value')}`);
      assert.ok(lines.length > 0);
      assert.ok(!JSON.stringify(lines).includes('env-secret-value'));
    } finally {
      await stack.close();
    }
  });

  it('reads it from the settings file, the environment taking precedence', async () => {
    const file = join(dir, 'settings.local.json');
    await writeFile(file, JSON.stringify({ report_digest: { apiKey: 'file-secret-value' } }));
    const fromFile = await startTestStack({ env: { TASKS_TOOLSET: 'test' }, settingsFile: file });
    try {
      const task = await callTool(fromFile.url, 'report_digest', {});
      assert.equal(textOf(task.result!), `API key fingerprint ${fingerprint('file-secret-value')}`);
    } finally {
      await fromFile.close();
    }
    const both = await startTestStack({ env: { TASKS_TOOLSET: 'test', REPORT_DIGEST_API_KEY: 'env-wins' }, settingsFile: file });
    try {
      assert.equal(textOf((await callTool(both.url, 'report_digest', {})).result!), `API key fingerprint ${fingerprint('env-wins')}`);
    } finally {
      await both.close();
    }
  });

  it('fails the task at once, saying where to set it, when the secret is set nowhere', async () => {
    const stack = await startTestStack({ env: { TASKS_TOOLSET: 'test' } });
    try {
      const task = await callTool(stack.url, 'report_digest', {});
      assert.equal(task.status, 'failed');
      assert.match(
        task.error!.message,
        /Setting "apiKey" of tool "report_digest" is not set locally: set REPORT_DIGEST_API_KEY or add it to .*no-settings\.json/,
      );
    } finally {
      await stack.close();
    }
  });
});
