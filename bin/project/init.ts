/**
 * `mcp-tasks init <dir>`: a new project that uses the package, outside any
 * checkout: one sample tool and its test, a CDK app with the construct,
 * `cdk.json`, `tsconfig.json`, the local Step Functions handlers' module, a
 * lint config and a README with the same two commands as this repository's
 * (`npm ci && npm start`, `npm test`). Its files are the package's
 * `template/` folder; `package.json` is written here, with the versions this
 * package was built and tested with.
 *
 * A failed `init` leaves nothing behind: the project is written, and
 * installed, in a hidden sibling of the target folder, renamed into place
 * only once everything succeeded, and removed on any failure, so running the
 * same command again is always possible.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface InitOptions {
  /** What the project depends on for the package (default `^<this version>`): a version range, a tarball or a path. */
  package?: string;
  /** Run `npm install` in the new project (default `true`): it writes the lock file `npm ci` needs. */
  install?: boolean;
  /** Runs `npm install` in a folder (tests give their own); default: npm, its output on this terminal. */
  npmInstall?: (cwd: string) => NpmOutcome;
}

/** How `npm install` ended: its exit status (`null` when a signal stopped it) and what it wrote on stderr. */
export interface NpmOutcome {
  status: number | null;
  stderr: string;
}

/** The packages a new project depends on, with the versions this package pins (its own dependencies and devDependencies). */
const PROJECT_DEPENDENCIES = ['aws-cdk-lib', 'constructs', 'zod'] as const;
/**
 * What `npm start` and `npm test` need: the local stack's emulators (dynalite, fauxqs, the Step Functions
 * interpreter, the authorization server `LOCAL_AUTH=1` runs), TypeScript and tsx. No Node binary: a project
 * runs on the machine's Node (≥ 22, `engines`). The CDK CLI and Biome are fetched by `npx` when first used
 * (`npm run cdk`, `npm run lint`), pinned to the versions this package was tested with: 130 MB a project
 * needs only to deploy or lint.
 */
const PROJECT_DEV_DEPENDENCIES = [
  '@types/node',
  'aws-local-stepfunctions',
  'dynalite',
  'fauxqs',
  'oidc-provider',
  'tsx',
  'typescript',
] as const;
/** Packages whose install scripts a project allows (npm's `allowScripts`): the bundler and dynalite's LevelDB. */
const ALLOWED_SCRIPTS = { esbuild: true, 'classic-level': true };
/** Template files stored under another name: npm leaves `.gitignore` and `.npmrc` out of a package. */
const RENAMED = { gitignore: '.gitignore', npmrc: '.npmrc' } as const;

interface Manifest {
  name: string;
  version: string;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/** Writes the project into `dir` (which must not exist or be empty); returns what to run next. */
export function initProject(dir: string, options: InitOptions = {}): string {
  const target = resolve(dir);
  if (existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length > 0)) {
    throw new Error(`${target} exists and is not an empty folder: choose another, or empty it`);
  }
  const name = basename(target).toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name))
    throw new Error(`"${name}" is not a package name: use lowercase letters, digits, ".", "_" and "-"`);
  const { root, manifest } = ownPackage();
  // A sibling, so that relative paths npm records (a tarball's) stay right after the rename.
  const staging = join(dirname(target), `.${basename(target)}.init-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  try {
    writeProject(staging, root, name, projectManifest(name, manifest, packageSpec(options.package, manifest.version)));
    if (options.install !== false) install(staging, manifest, dir, options);
    if (existsSync(target)) rmdirSync(target);
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  return `cd ${dir}\n${options.install === false ? '  npm install\n' : ''}  npm start     # the local stack with your tools\n  npm test      # the tools' tests\n  npm run cdk -- deploy`;
}

/** The template, its placeholders filled, and the manifest and lint config written here. */
function writeProject(folder: string, root: string, name: string, manifest: ReturnType<typeof projectManifest>): void {
  cpSync(join(root, 'template'), folder, { recursive: true });
  for (const [stored, real] of Object.entries(RENAMED))
    if (existsSync(join(folder, stored))) renameSync(join(folder, stored), join(folder, real));
  const stackName = name.replace(/(^|[^a-z0-9])([a-z0-9])/g, (_, __, letter: string) => letter.toUpperCase());
  for (const file of ['README.md', 'infra/app.ts']) {
    const path = join(folder, file);
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll('__PROJECT__', name).replaceAll('__STACK__', stackName));
  }
  writeFileSync(join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(folder, 'biome.json'), `${JSON.stringify(biomeConfig(manifest.scripts.lint), null, 2)}\n`);
}

/** `npm install` in the staging folder; a failure throws with what to do next. */
function install(folder: string, ours: Manifest, dir: string, options: InitOptions): void {
  const outcome = (options.npmInstall ?? npmInstall)(folder);
  if (outcome.status === 0) return;
  const again = `Nothing was written; run \`mcp-tasks init ${dir}\` again`;
  if (/\bE404\b/.test(outcome.stderr) && outcome.stderr.includes(ours.name) && options.package === undefined) {
    throw new Error(
      `npm found no ${ours.name}@^${ours.version} on the registry (E404): no version of it is published yet. ` +
        `${again} with \`--package <tarball>\`: make the tarball with \`npm pack\` in a checkout of ${ours.name}, and give its path.`,
    );
  }
  throw new Error(
    `npm install failed (${outcome.status === null ? 'stopped by a signal' : `exit ${outcome.status}`}); its output is above. ` +
      `${again} once the cause is fixed (the network, the registry, the --package path), or with --no-install to install later.`,
  );
}

/** The real `npm install`: its output on this terminal as it runs, its stderr also kept (to recognise an E404). */
function npmInstall(cwd: string): NpmOutcome {
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd, stdio: ['inherit', 'inherit', 'pipe'], encoding: 'utf8' });
  process.stderr.write(result.stderr ?? '');
  if (result.error) return { status: null, stderr: `${result.error.message}\n${result.stderr ?? ''}` };
  return { status: result.status, stderr: result.stderr ?? '' };
}

/**
 * The dependency on this package: `^<version>` by default; a path given
 * (a tarball or a folder, with or without `file:`) made absolute, so the
 * project installs from anywhere.
 */
export function packageSpec(spec: string | undefined, version: string, cwd = process.cwd()): string {
  if (spec === undefined) return `^${version}`;
  const path = spec.startsWith('file:') ? spec.slice('file:'.length) : spec;
  const isPath = spec.startsWith('file:') || /^\.{1,2}([\\/]|$)/.test(path) || /\.(tgz|tar\.gz|tar)$/.test(path) || path.startsWith('/');
  return isPath ? `file:${resolve(cwd, path)}` : spec;
}

/** The package's folder and manifest: the nearest `package.json` up from this module (the repository's, or the installed package's). */
function ownPackage(): { root: string; manifest: Manifest } {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const path = join(dir, 'package.json');
    if (existsSync(path) && existsSync(join(dir, 'template')))
      return { root: dir, manifest: JSON.parse(readFileSync(path, 'utf8')) as Manifest };
  }
  throw new Error('The package has no template folder: reinstall it');
}

function projectManifest(name: string, ours: Manifest, spec: string) {
  const pinned = { ...ours.peerDependencies, ...ours.devDependencies, ...ours.dependencies };
  const versions = (names: readonly string[]) =>
    Object.fromEntries(names.map((dependency) => [dependency, pinned[dependency] ?? 'latest']));
  return {
    name,
    version: '0.0.0',
    private: true,
    type: 'module',
    // The package's own floor: `.npmrc` (engine-strict) makes an install on an older Node fail, naming it.
    engines: { node: ours.engines?.['node'] ?? '>=22' },
    scripts: {
      start: 'mcp-tasks start',
      dev: 'mcp-tasks dev',
      test: 'tsc --noEmit && node --import tsx --test test/*.test.ts',
      lint: `npx --yes @biomejs/biome@${pinned['@biomejs/biome'] ?? 'latest'} check --error-on-warnings .`,
      cdk: `npx --yes aws-cdk@${pinned['aws-cdk'] ?? 'latest'}`,
      synth: `npx --yes aws-cdk@${pinned['aws-cdk'] ?? 'latest'} synth --no-notices -q`,
    },
    dependencies: { [ours.name]: spec, ...versions(PROJECT_DEPENDENCIES) },
    devDependencies: versions(PROJECT_DEV_DEPENDENCIES),
    allowScripts: ALLOWED_SCRIPTS,
  };
}

/** A new project's lint and format settings: this repository's style, Biome's recommended rules; the schema of the version `lint` runs. */
const biomeConfig = (lint: string) => ({
  $schema: `https://biomejs.dev/schemas/${/@biomejs\/biome@([^\s]+)/.exec(lint)?.[1] ?? 'latest'}/schema.json`,
  vcs: { enabled: true, clientKind: 'git', useIgnoreFile: true },
  files: { includes: ['**/*.ts', '**/*.json', '!**/cdk.out', '!**/.data', '!package-lock.json'] },
  formatter: { enabled: true, indentStyle: 'space', indentWidth: 2, lineWidth: 120 },
  javascript: { formatter: { quoteStyle: 'single', trailingCommas: 'all', semicolons: 'always' } },
  linter: { enabled: true, rules: { preset: 'recommended', style: { noNonNullAssertion: 'off' } } },
});
