/**
 * `npm run dev` in the project `init` made: the local stack under watch mode
 * restarts when a tools module is edited and serves the new code. The test
 * brings a tools module of its own (`--tools`), so it edits nothing the
 * other tests of the lane read.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { projectDir, projectEnv, run } from './project.ts';

const READY = /MCP endpoint ready at (http:\/\/\S+)/g;
const dataDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-package-dev-'));
const folder = join(projectDir(), 'src', 'dev-check');
const module = join(folder, 'tools.ts');
let child: ChildProcess | undefined;
let output = '';

/** Writes the module whole (aside, then renamed): watch mode never reads half a file. */
function writeTools(answer: string): void {
  const text = `import { defineTool } from 'mcp-tasks-serverless';
import * as z from 'zod';

export const tools = [
  defineTool({ name: 'answer', description: 'Answers.', inputSchema: z.object({}), execution: 'sync', handler: async () => '${answer}' }),
];
`;
  writeFileSync(`${module}.tmp`, text);
  renameSync(`${module}.tmp`, module);
}

/** The URL of the `count`-th ready line, once printed. */
async function ready(count: number): Promise<string> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const urls = [...output.matchAll(READY)].map((match) => match[1]!);
    if (urls.length >= count) return urls[count - 1]!;
    if (child?.exitCode !== null || Date.now() > deadline) assert.fail(`no ready line #${count}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const answerAt = (url: string) =>
  (JSON.parse(run('mcp-tasks', ['--url', url, 'call', 'answer', '{}', '--json'])) as { content: Array<{ text: string }> }).content[0]?.text;

after(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  }
  rmSync(folder, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run dev in the project', () => {
  it('restarts on an edit of the tools and serves the new code', async () => {
    mkdirSync(folder, { recursive: true });
    writeTools('first');
    child = spawn('npm', ['run', 'dev', '--', '--tools', 'src/dev-check/tools.ts'], {
      cwd: projectDir(),
      env: projectEnv({ PORT: '0', LOCAL_DATA_DIR: dataDir, LOCAL_EVENTS: 'off' }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    assert.equal(answerAt(await ready(1)), 'first');
    writeTools('second');
    assert.equal(answerAt(await ready(2)), 'second');
  });
});
