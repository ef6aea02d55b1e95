/**
 * What the package lane's tests share: the project `mcp-tasks init` made
 * (`lane.ts` names it in {@link PROJECT_VARIABLE}), how to run its npm
 * scripts and the commands it installed, and its local stack.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, signInOnAuthPages } from '../browser/browser.ts';

export const PROJECT_VARIABLE = 'TEST_PACKAGE_PROJECT';
export const TARBALL_VARIABLE = 'TEST_PACKAGE_TARBALL';
/** The unpacked tarball's package folder (`package/`), with the packages it depends on beside it. */
export const UNPACKED_VARIABLE = 'TEST_PACKAGE_UNPACKED';

/** This repository's `node_modules/.bin`: its Node 22 (the `node` devDependency), which the project runs on. */
const REPOSITORY_BIN = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url));

/** The project's folder; the lane sets it. */
export function projectDir(): string {
  const dir = process.env[PROJECT_VARIABLE];
  assert.ok(dir, `${PROJECT_VARIABLE} is not set: run the lane with \`npm run test:package\``);
  return dir;
}

/**
 * The project's environment as its npm scripts see it: its `node_modules/.bin`
 * first (the package's `mcp-tasks`), then this repository's Node 22 (a
 * project carries no Node of its own), and nothing of this test process's own
 * test runner. `path` replaces what follows the project's bin folder.
 */
export function projectEnv(extra: Record<string, string> = {}, path = `${REPOSITORY_BIN}:${process.env['PATH'] ?? ''}`): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('NODE_TEST') || name === 'NODE_OPTIONS') delete env[name];
  return { ...env, PATH: `${join(projectDir(), 'node_modules/.bin')}:${path}`, ...extra };
}

/** Runs a command in the project; fails the test with its output if it exits non-zero. */
export function run(command: string, args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): string {
  const result = spawnSync(command, args, {
    cwd: projectDir(),
    env: projectEnv(options.env),
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 120_000,
  });
  assert.equal(
    result.status,
    0,
    `${command} ${args.join(' ')} exited ${result.status ?? result.signal}:\n${result.stdout}\n${result.stderr}`,
  );
  return result.stdout;
}

/** Sign-in required (`LOCAL_AUTH`), and `ada` an approver: the local authorization server gives her the approvers' group. */
export const APPROVERS = { LOCAL_AUTH: '1', LOCAL_AUTH_PORT: '0', LOCAL_AUTH_GROUPS: 'ada=approvers', TASKS_APPROVERS: 'group:approvers' };

const READY = /MCP endpoint ready at (http:\/\/\S+)/;

/** The project's local stack, started with `npm start -- <args>` on free ports and a data folder of its own. */
export interface ProjectStack {
  url: string;
  /** Everything it printed so far. */
  output(): string;
  stop(): Promise<void>;
}

export async function startProjectStack(args: string[], env: Record<string, string>): Promise<ProjectStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-package-stack-'));
  const child: ChildProcess = spawn('npm', ['start', ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd: projectDir(),
    env: projectEnv({ PORT: '0', LOCAL_DATA_DIR: dataDir, LOCAL_EVENTS: 'off', ...env }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // npm and the stack it runs are one process group.
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000;
  while (!READY.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      assert.fail(`npm start did not get ready:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url: READY.exec(output)![1]!, output: () => output, stop };
}

/** Runs a command in the project without blocking this process (a server of the test may have to answer it meanwhile). */
export async function runAsync(command: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const child = spawn(command, args, { cwd: projectDir(), env: projectEnv(), stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  assert.equal(code, 0, `${command} ${args.join(' ')} exited ${code ?? signal}:\n${stdout}\n${stderr}`);
  return stdout;
}

/** A task as `mcp-tasks get --json` and `watch --json` print it. */
export interface PrintedTask {
  taskId: string;
  status: string;
  inputRequests?: Record<string, unknown>;
  result?: { content?: Array<{ text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };
}

/** The caller's CLI on `url`, signed in with `token`: each call a process of the project's `mcp-tasks`. */
export function callerCli(url: string, token: string) {
  const cli = async (...args: string[]) => runAsync('mcp-tasks', ['--url', url, '--token', token, ...args]);
  const task = async (...args: string[]) => JSON.parse(await cli(...args, '--json')) as PrintedTask;
  /** The task, read with `get` until `done` holds (generous: the machine may be busy). */
  const until = async (taskId: string, done: (task: PrintedTask) => boolean): Promise<PrintedTask> => {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const read = await task('get', taskId);
      if (done(read)) return read;
      if (Date.now() > deadline) assert.fail(`task ${taskId}: ${JSON.stringify(read)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  return { cli, task, until };
}

/** `login` signs in to the console at the local authorization server, opens the task's page and approves question `key` there. */
export async function approveOnPage(mcpUrl: string, login: string, taskId: string, key: string): Promise<void> {
  const base = mcpUrl.replace(/\/mcp$/, '');
  const browser = await launchBrowser();
  try {
    const page = await browser.page();
    await page.goto(`${base}/console`);
    await signInOnAuthPages(page, login);
    await page.waitForURL(`${base}/console`);
    await page.goto(`${base}/console/tasks/${taskId}`);
    await page.locator(`section[data-question="${key}"] button[value="true"]`).click();
    await page.waitForURL(`${base}/console?decided=approved`);
  } finally {
    await browser.close();
  }
}
