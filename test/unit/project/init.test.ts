/**
 * `mcp-tasks init` (`bin/project/init.ts`) without npm: the project is
 * written into a hidden sibling and renamed into place only when everything
 * succeeded; a failed install leaves nothing behind and says what to do next
 * (the `--package <tarball>` way when the registry has no version); a
 * relative `--package` is written as an absolute path; the project carries no
 * Node binary and needs Node ≥ 22. The package lane runs the real `npm install`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { initProject, type NpmOutcome, packageSpec } from '../../../bin/project/init.ts';

const parent = mkdtempSync(join(tmpdir(), 'mcp-tasks-init-'));
after(() => rmSync(parent, { recursive: true, force: true }));

const manifestOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    engines: { node: string };
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
    scripts: Record<string, string>;
  };

/** A stand-in for `npm install` that records where it ran and ends as told. */
function fakeNpm(outcome: NpmOutcome) {
  const ran: string[] = [];
  return {
    ran,
    npmInstall: (cwd: string) => {
      ran.push(cwd);
      // What npm would have written before failing: the rollback must remove it too.
      writeFileSync(join(cwd, 'package-lock.json'), '{}');
      return outcome;
    },
  };
}

describe('mcp-tasks init', () => {
  it('writes the project with no Node binary, needing Node ≥ 22, with the local authorization server among its emulators', () => {
    const dir = join(parent, 'plain');
    initProject(dir, { install: false });
    const manifest = manifestOf(dir);
    assert.equal(manifest.devDependencies['node'], undefined);
    assert.equal(manifest.engines.node, '>=22');
    for (const name of ['oidc-provider', 'dynalite', 'fauxqs', 'aws-local-stepfunctions', 'typescript', 'tsx'])
      assert.ok(manifest.devDependencies[name], name);
    // The CDK CLI and Biome are fetched on first use, at the versions the package pins.
    assert.deepEqual(
      Object.keys(manifest.devDependencies).filter((name) => /aws-cdk$|biome/.test(name)),
      [],
    );
    assert.match(manifest.scripts['cdk']!, /^npx --yes aws-cdk@2\.\d+/);
    assert.match(manifest.scripts['lint']!, /^npx --yes @biomejs\/biome@2\.\d+\.\d+ check/);
    assert.match(readFileSync(join(dir, '.npmrc'), 'utf8'), /^engine-strict=true$/m);
    assert.ok(existsSync(join(dir, '.gitignore')) && !existsSync(join(dir, 'gitignore')));
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /oidc-provider/);
  });

  it('installs in a hidden sibling and renames it into place when the install succeeded', () => {
    const dir = join(parent, 'installed');
    const npm = fakeNpm({ status: 0, stderr: '' });
    initProject(dir, { npmInstall: npm.npmInstall });
    assert.equal(npm.ran.length, 1);
    assert.equal(dirname(npm.ran[0]!), parent);
    assert.match(basename(npm.ran[0]!), /^\.installed\./);
    assert.ok(existsSync(join(dir, 'package-lock.json')));
    assert.ok(!existsSync(npm.ran[0]!));
  });

  it('leaves nothing behind when npm answers E404, names the --package <tarball> way, and can be run again', () => {
    const dir = join(parent, 'unpublished');
    const stderr = 'npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/mcp-tasks-serverless - Not found\n';
    const failing = fakeNpm({ status: 1, stderr });
    assert.throws(
      () => initProject(dir, { npmInstall: failing.npmInstall }),
      (error: Error) =>
        /no version of it is published yet/.test(error.message) &&
        /--package <tarball>/.test(error.message) &&
        /npm pack/.test(error.message) &&
        /run `mcp-tasks init .*unpublished` again/.test(error.message),
    );
    assert.ok(!existsSync(dir));
    assert.deepEqual(
      readdirSync(parent).filter((name) => name.startsWith('.')),
      [],
    );
    initProject(dir, { npmInstall: fakeNpm({ status: 0, stderr: '' }).npmInstall });
    assert.ok(existsSync(join(dir, 'package.json')));
  });

  it('says how to go on after any other failure of npm, and leaves an empty target folder as it was', () => {
    const dir = join(parent, 'offline');
    mkdirSync(dir);
    assert.throws(
      () =>
        initProject(dir, { package: './nowhere.tgz', npmInstall: fakeNpm({ status: 1, stderr: 'npm error code ENOENT\n' }).npmInstall }),
      (error: Error) => /npm install failed \(exit 1\)/.test(error.message) && /Nothing was written/.test(error.message),
    );
    assert.deepEqual(readdirSync(dir), []);
    assert.deepEqual(
      readdirSync(parent).filter((name) => name.startsWith('.')),
      [],
    );
  });

  it('refuses a folder that is not empty, touching nothing in it', () => {
    const dir = join(parent, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'mine.txt'), 'keep');
    assert.throws(() => initProject(dir, { install: false }), /exists and is not an empty folder/);
    assert.deepEqual(readdirSync(dir), ['mine.txt']);
  });

  it('writes a relative --package as an absolute path', () => {
    const dir = join(parent, 'relative');
    const cwd = process.cwd();
    process.chdir(parent);
    try {
      initProject(dir, { install: false, package: './mcp-tasks-serverless-0.1.0.tgz' });
    } finally {
      process.chdir(cwd);
    }
    assert.equal(manifestOf(dir).dependencies['mcp-tasks-serverless'], `file:${join(parent, 'mcp-tasks-serverless-0.1.0.tgz')}`);
  });
});

describe('the package spec', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, '^0.1.0'],
    ['^0.2.0', '^0.2.0'],
    ['latest', 'latest'],
    ['./x.tgz', 'file:/work/here/x.tgz'],
    ['x.tgz', 'file:/work/here/x.tgz'],
    ['../pkg', 'file:/work/pkg'],
    ['file:../x.tar.gz', 'file:/work/x.tar.gz'],
    ['/abs/x.tgz', 'file:/abs/x.tgz'],
  ];
  for (const [given, written] of cases)
    it(`${given ?? '(none)'} → ${written}`, () => assert.equal(packageSpec(given, '0.1.0', '/work/here'), written));
});
