/**
 * `npm run test:package`: the package as a team gets it. Packs the
 * repository (`npm pack`, which builds `dist/` on `prepack`), runs the packed
 * `mcp-tasks init` into a temporary folder (depending on the tarball; its
 * `npm install` prefers the cache the repository's own install filled), then
 * runs `test/package/*.test.ts` against that project (`TEST_PACKAGE_PROJECT`)
 * and exits with their status. Each step's time is printed.
 *
 * The packed CLI runs from the unpacked tarball with this repository's
 * `node_modules` beside it (the same versions the lock file pins): `init`
 * needs nothing else, and the project then installs the tarball itself.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addToolKinds } from './kinds.ts';
import { PROJECT_VARIABLE, TARBALL_VARIABLE, UNPACKED_VARIABLE } from './project.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const started = Date.now();
const timed = <T>(what: string, step: () => T): T => {
  const t0 = Date.now();
  const result = step();
  console.log(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return result;
};

/** The test that runs before any project is made, against the unpacked tarball. */
const ENTRIES_TEST = 'entries.test.ts';
const work = mkdtempSync(join(tmpdir(), 'mcp-tasks-package-lane-'));
let status = 1;
try {
  const packed = timed('npm pack (build included)', () =>
    execFileSync('npm', ['pack', '--silent', '--pack-destination', work], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const tarball = join(work, packed.trim().split('\n').at(-1)!);
  const unpacked = join(work, 'unpacked');
  mkdirSync(unpacked);
  execFileSync('tar', ['xzf', tarball, '-C', unpacked]);
  symlinkSync(join(ROOT, 'node_modules'), join(unpacked, 'package', 'node_modules'), 'dir');
  const dir = join(ROOT, 'test/package');
  const tests = (files: string[], env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files.map((file) => join(dir, file))], {
      stdio: 'inherit',
      env: { ...process.env, ...env },
    }).status ?? 1;
  // Before any project: every function entry the construct can generate bundles from the tarball alone.
  status = timed('the entries, bundled from the tarball', () => tests([ENTRIES_TEST], { [UNPACKED_VARIABLE]: join(unpacked, 'package') }));
  if (status !== 0) throw new Error('a function entry does not bundle from the tarball: no project is made');
  const project = join(work, 'my-tools');
  timed('mcp-tasks init (npm install included)', () =>
    execFileSync(process.execPath, [join(unpacked, 'package/bin/mcp-tasks.js'), 'init', project, '--package', tarball], {
      cwd: work,
      stdio: 'inherit',
      env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
    }),
  );
  addToolKinds(project, 'MyTools');
  const files = readdirSync(dir).filter((file) => file.endsWith('.test.ts') && file !== ENTRIES_TEST);
  status = timed('the tests against the project', () => tests(files, { [PROJECT_VARIABLE]: project, [TARBALL_VARIABLE]: tarball }));
} finally {
  rmSync(work, { recursive: true, force: true });
  console.log(`Package lane: ${status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
process.exit(status);
