/**
 * What the package lane's tests share: the project `mcp-tasks init` made
 * (`lane.ts` names it in {@link PROJECT_VARIABLE}), and how to run its npm
 * scripts and the commands it installed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const PROJECT_VARIABLE = 'TEST_PACKAGE_PROJECT';
export const TARBALL_VARIABLE = 'TEST_PACKAGE_TARBALL';
/** The unpacked tarball's package folder (`package/`), with the packages it depends on beside it. */
export const UNPACKED_VARIABLE = 'TEST_PACKAGE_UNPACKED';

/** The project's folder; the lane sets it. */
export function projectDir(): string {
  const dir = process.env[PROJECT_VARIABLE];
  assert.ok(dir, `${PROJECT_VARIABLE} is not set: run the lane with \`npm run test:package\``);
  return dir;
}

/**
 * The project's environment as its npm scripts see it: its `node_modules/.bin`
 * first (Node 22 from its `node` devDependency, the package's `mcp-tasks`),
 * and nothing of this test process's own test runner.
 */
export function projectEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('NODE_TEST') || name === 'NODE_OPTIONS') delete env[name];
  return { ...env, PATH: `${join(projectDir(), 'node_modules/.bin')}:${process.env['PATH'] ?? ''}`, ...extra };
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
