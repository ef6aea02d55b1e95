/**
 * `mcp-tasks init <dir>`: a new project that uses the package, outside any
 * checkout: one sample tool and its test, a CDK app with the construct,
 * `cdk.json`, `tsconfig.json`, a lint config and a README with the same two
 * commands as this repository's (`npm ci && npm start`, `npm test`). Its
 * files are the package's `template/` folder; `package.json` is written here,
 * with the versions this package was built and tested with.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface InitOptions {
  /** What the project depends on for the package (default `^<this version>`): a version range, a tarball or a path. */
  package?: string;
  /** Run `npm install` in the new project (default `true`): it writes the lock file `npm ci` needs. */
  install?: boolean;
}

/** The packages a new project depends on, with the versions this package pins (its own dependencies and devDependencies). */
const PROJECT_DEPENDENCIES = ['aws-cdk-lib', 'constructs', 'zod'] as const;
// The local stack's emulators: dynalite, fauxqs, and the Step Functions interpreter its emulator runs workflows with.
const PROJECT_DEV_DEPENDENCIES = [
  '@biomejs/biome',
  '@types/node',
  'aws-cdk',
  'aws-local-stepfunctions',
  'dynalite',
  'fauxqs',
  'node',
  'tsx',
  'typescript',
] as const;
/** Packages whose install scripts a project allows (npm's `allowScripts`): the bundler, Node 22 and dynalite's LevelDB. */
const ALLOWED_SCRIPTS = { esbuild: true, node: true, 'classic-level': true };

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/** Writes the project into `dir` (which must not exist or be empty); returns what to run next. */
export function initProject(dir: string, options: InitOptions = {}): string {
  const target = resolve(dir);
  if (existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length > 0)) {
    throw new Error(`${target} exists and is not an empty folder`);
  }
  const name = basename(target).toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name))
    throw new Error(`"${name}" is not a package name: use lowercase letters, digits, ".", "_" and "-"`);
  const { root, manifest } = ownPackage();
  cpSync(join(root, 'template'), target, { recursive: true });
  renameSync(join(target, 'gitignore'), join(target, '.gitignore'));
  const stackName = name.replace(/(^|[^a-z0-9])([a-z0-9])/g, (_, __, letter: string) => letter.toUpperCase());
  for (const file of ['README.md', 'infra/app.ts']) {
    const path = join(target, file);
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll('__PROJECT__', name).replaceAll('__STACK__', stackName));
  }
  writeFileSync(join(target, 'package.json'), `${JSON.stringify(projectManifest(name, manifest, options.package), null, 2)}\n`);
  writeFileSync(join(target, 'biome.json'), `${JSON.stringify(BIOME_CONFIG, null, 2)}\n`);
  if (options.install !== false) {
    const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: target, stdio: 'inherit' });
    if (npm.status !== 0) throw new Error(`npm install failed in ${target} (exit ${npm.status ?? npm.signal})`);
  }
  return `cd ${dir}\n${options.install === false ? '  npm install\n' : ''}  npm start     # the local stack with your tools\n  npm test      # the tools' tests\n  npx cdk deploy`;
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

function projectManifest(name: string, ours: Manifest, spec: string | undefined) {
  const pinned = { ...ours.peerDependencies, ...ours.devDependencies, ...ours.dependencies };
  const versions = (names: readonly string[]) =>
    Object.fromEntries(names.map((dependency) => [dependency, pinned[dependency] ?? 'latest']));
  return {
    name,
    version: '0.0.0',
    private: true,
    type: 'module',
    scripts: {
      start: 'mcp-tasks start',
      dev: 'mcp-tasks dev',
      test: 'tsc --noEmit && node --import tsx --test test/*.test.ts',
      lint: 'biome check --error-on-warnings .',
      synth: 'cdk synth --no-notices -q',
    },
    dependencies: { [ours.name]: spec ?? `^${ours.version}`, ...versions(PROJECT_DEPENDENCIES) },
    devDependencies: versions(PROJECT_DEV_DEPENDENCIES),
    allowScripts: ALLOWED_SCRIPTS,
  };
}

/** A new project's lint and format settings: this repository's style, Biome's recommended rules. */
const BIOME_CONFIG = {
  $schema: './node_modules/@biomejs/biome/configuration_schema.json',
  vcs: { enabled: true, clientKind: 'git', useIgnoreFile: true },
  files: { includes: ['**/*.ts', '**/*.json', '!**/cdk.out', '!**/.data', '!package-lock.json'] },
  formatter: { enabled: true, indentStyle: 'space', indentWidth: 2, lineWidth: 120 },
  javascript: { formatter: { quoteStyle: 'single', trailingCommas: 'all', semicolons: 'always' } },
  linter: { enabled: true, rules: { preset: 'recommended', style: { noNonNullAssertion: 'off' } } },
};
