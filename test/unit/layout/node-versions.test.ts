/**
 * Which Node installs the project, which runs its scripts and which runs the
 * functions: `package.json` (`engines`, the `node` devDependency), the stack's
 * Lambda runtime and the lockfile are the facts; the README, CONTRIBUTING and
 * docs/deploying.md must say the same. The rule reads every figure from those
 * facts, so a new `engines` floor is an edit of `package.json` and the docs only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { LAMBDA_RUNTIME } from '../../../infra/constructs/task-function.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const manifest = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } | string[] }> };

/** The major version `range` starts at (`>=20` → 20, `^22.23.3` → 22). */
function floorOf(range: string): number {
  const version = semver.minVersion(range);
  assert.ok(version, `not a version range: ${range}`);
  return version.major;
}

const install = floorOf(manifest.engines.node);
const scripts = floorOf(manifest.devDependencies['node']!);
const lambda = Number(/^nodejs(\d+)\.x$/.exec(LAMBDA_RUNTIME.name)?.[1]);

/** Packages of the lockfile whose `engines.node` admits no release of the install floor's major: `npm ci` warns EBADENGINE for each. */
function wantingNewerNode(): string[] {
  const names = new Set<string>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!path || range === undefined || !semver.validRange(range)) continue;
    if (!semver.intersects(range, `^${install}.0.0`)) names.add(path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  }
  return [...names].sort();
}

describe('Node versions', () => {
  it('the facts are what the docs were written for: scripts on a newer Node than the install floor, Lambda on one at least as new', () => {
    assert.ok(Number.isInteger(lambda), LAMBDA_RUNTIME.name);
    assert.ok(scripts >= install && lambda >= scripts, `install ${install}, scripts ${scripts}, Lambda ${lambda}`);
  });

  for (const doc of ['README.md', 'CONTRIBUTING.md', 'docs/deploying.md']) {
    it(`${doc} says to install with Node ≥ ${install} and that the scripts run the devDependency's Node ${scripts}`, () => {
      const text = read(doc).replace(/\s+/g, ' ');
      assert.ok(text.includes(`Node ≥ ${install}`), `${doc} names the install floor`);
      assert.ok(text.includes(`Node ${scripts} from the \`node\` devDependency`), `${doc} names the scripts' Node`);
      assert.doesNotMatch(text, /Node(\.js)? \d+ or newer/, `${doc}: one wording, "Node ≥ N"`);
    });
  }

  it(`README.md and CONTRIBUTING.md say Lambda runs Node.js ${lambda}`, () => {
    for (const doc of ['README.md', 'CONTRIBUTING.md']) assert.ok(read(doc).replace(/\s+/g, ' ').includes(`Node.js ${lambda}`), doc);
  });

  it('CONTRIBUTING.md names every package npm warns about on the install floor, and how many there are', () => {
    const text = read('CONTRIBUTING.md').replace(/\s+/g, ' ');
    const warned = wantingNewerNode();
    for (const name of warned) assert.ok(text.includes(`\`${name}\``), `CONTRIBUTING.md names ${name}`);
    if (warned.length > 0) {
      const words = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
      assert.ok(text.includes(`${5 * warned.length} \`EBADENGINE\` lines: ${words[warned.length]} warnings`), warned.join(', '));
    }
  });
});
