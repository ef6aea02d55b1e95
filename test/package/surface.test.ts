/**
 * The packed package and the project `init` made from it: the project imports
 * only the public surface, nothing else of the package is importable, the
 * tarball carries compiled code (no sources, no demo tool, no fixture), and
 * the project's own `npm test` (type check, then its tool's tests with the
 * kit) passes.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { importsOf } from '../support/import-graph.ts';
import { projectDir, projectEnv, run, TARBALL_VARIABLE } from './project.ts';

const SURFACE = ['mcp-tasks-serverless', 'mcp-tasks-serverless/testing', 'mcp-tasks-serverless/testing/stack', 'mcp-tasks-serverless/cdk'];

/** A `node` on PATH older than 22, outside any `node_modules` (the system's), if there is one. */
function olderNode(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(':').filter((entry) => entry && !entry.includes('node_modules'))) {
    const node = join(dir, 'node');
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' });
    if (version.status === 0 && Number(/^v(\d+)/.exec(version.stdout)?.[1]) < 22) return node;
  }
  return undefined;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('the project init made', () => {
  it('imports only the public surface of the package', () => {
    const files = ['src', 'test', 'infra'].flatMap((folder) => sources(join(projectDir(), folder)));
    assert.ok(files.length >= 4, files.join(', '));
    const fromPackage = files.flatMap((file) =>
      importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('mcp-tasks-serverless'))
        .map((specifier) => `${relative(projectDir(), file)} ${specifier}`),
    );
    assert.ok(fromPackage.length >= 3, fromPackage.join('\n'));
    for (const line of fromPackage) assert.ok(SURFACE.includes(line.split(' ')[1]!), `${line}: not an entry of the package`);
  });

  it('can import each entry of the surface, and nothing else of the package', () => {
    const probe = (specifier: string) =>
      spawnSync('node', ['--input-type=module', '-e', `await import(${JSON.stringify(specifier)});`], {
        cwd: projectDir(),
        env: projectEnv(),
        encoding: 'utf8',
      });
    for (const specifier of SURFACE) assert.equal(probe(specifier).status, 0, `${specifier}: ${probe(specifier).stderr}`);
    const inside = probe('mcp-tasks-serverless/dist/shared/config.js');
    assert.notEqual(inside.status, 0);
    assert.match(inside.stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it('installs in at most 350 MB of node_modules (du), the five largest packages printed', () => {
    const du = (args: string[]) => execFileSync('du', ['-sm', ...args], { cwd: join(projectDir(), 'node_modules'), encoding: 'utf8' });
    const total = Number(du(['.']).split('\t')[0]);
    const packages = readdirSync(join(projectDir(), 'node_modules')).flatMap((name) =>
      name.startsWith('@')
        ? readdirSync(join(projectDir(), 'node_modules', name)).map((inner) => `${name}/${inner}`)
        : name.startsWith('.')
          ? []
          : [name],
    );
    const largest = du(packages)
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .sort((a, b) => Number(b[0]) - Number(a[0]))
      .slice(0, 5);
    console.log(`node_modules: ${total} MB; largest: ${largest.map(([mb, name]) => `${name} ${mb} MB`).join(', ')}`);
    assert.ok(total <= 350, `${total} MB`);
  });

  it('on a Node older than 22, its commands exit non-zero naming Node ≥ 22', () => {
    const old = olderNode();
    assert.ok(old, `no Node older than 22 on PATH (${process.env['PATH']}): this lane's machines have one (Node 20 is the system's)`);
    for (const args of [['start'], ['exec', '--', 'mcp-tasks', 'tools']]) {
      const result = spawnSync('npm', args, {
        cwd: projectDir(),
        env: projectEnv({}, `${dirname(old)}:${process.env['PATH'] ?? ''}`),
        encoding: 'utf8',
      });
      assert.notEqual(result.status, 0, `npm ${args.join(' ')}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, /needs Node ≥ 22; this is Node 2[01]\./);
    }
  });

  it("passes its own npm test: the type check, then the sample tool's tests with the kit", () => {
    const output = run('npm', ['test'], { timeoutMs: 180_000 });
    assert.match(output, /# pass 3\n# fail 0/);
  });
});

describe('the tarball', () => {
  it('carries compiled code and declarations, the template, and no source, demo tool or fixture', () => {
    const tarball = process.env[TARBALL_VARIABLE];
    assert.ok(tarball, `${TARBALL_VARIABLE} is not set`);
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((path) => path.replace(/^package\//, ''));
    assert.ok(files.includes('dist/shared/runtime/tool.js') && files.includes('dist/shared/runtime/tool.d.ts'));
    assert.ok(files.includes('dist/infra/mcp-tasks.js') && files.includes('dist/kit/kit.js') && files.includes('bin/mcp-tasks.js'));
    for (const entry of ['functions/lib/sfn', 'functions/workflow-receiver/handler', 'functions/workflow-events/handler'])
      assert.ok(files.includes(`dist/${entry}.js`), entry);
    assert.deepEqual(
      files.filter((path) => path.endsWith('package.json')),
      ['package.json'],
      'no manifest compiled into dist/',
    );
    const sourcesOutsideTemplate = files.filter((path) => /\.tsx?$/.test(path) && !path.endsWith('.d.ts') && !path.startsWith('template/'));
    assert.deepEqual(sourcesOutsideTemplate, []);
    assert.deepEqual(
      files.filter((path) => /functions\/(tools|fixtures)\/|^test\//.test(path)),
      [],
    );
  });
});
