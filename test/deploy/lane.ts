/**
 * `npm run test:deploy`: the deployment-fidelity lane. Synthesizes every
 * context combination of `assembly.ts` into a temporary root (unless
 * `TEST_DEPLOY_CDK_OUT` names an existing one, e.g. with a planted fault),
 * then runs `test/deploy/*.test.ts` against it and exits with their status.
 * `--synth <dir>` only synthesizes into `<dir>` (to plant a fault there and
 * run the lane with `TEST_DEPLOY_CDK_OUT=<dir>`).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CDK_OUT_VARIABLE, ROOT, synthesizeVariant, VARIANTS, type VariantName } from './assembly.ts';

function synthesizeAll(root: string): void {
  for (const name of Object.keys(VARIANTS) as VariantName[]) {
    const t0 = Date.now();
    const outdir = join(root, name);
    mkdirSync(outdir, { recursive: true });
    synthesizeVariant(name, outdir);
    console.log(`Synthesized ${name}${VARIANTS[name].bundled ? ' (bundled)' : ''} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}

const started = Date.now();
const synthOnly = process.argv[2] === '--synth' ? process.argv[3] : undefined;
if (process.argv[2] === '--synth') {
  if (!synthOnly) throw new Error('Usage: lane.ts --synth <dir>');
  synthesizeAll(synthOnly);
  process.exit(0);
}
const given = process.env[CDK_OUT_VARIABLE];
const root = given ?? mkdtempSync(join(tmpdir(), 'mcp-tasks-deploy-lane-'));
let status = 1;
try {
  if (given) console.log(`Using the cloud assemblies in ${given} (${CDK_OUT_VARIABLE})`);
  else synthesizeAll(root);
  const dir = join(ROOT, 'test/deploy');
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join(dir, file));
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
    stdio: 'inherit',
    env: { ...process.env, [CDK_OUT_VARIABLE]: root },
  });
  status = result.status ?? 1;
} finally {
  if (!given) rmSync(root, { recursive: true, force: true });
  console.log(`Deployment lane: ${status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
process.exit(status);
