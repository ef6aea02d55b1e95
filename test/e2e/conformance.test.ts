/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12)
 * against the local stack: every `tasks-*` scenario the suite does not skip
 * itself, and `server-stateless`. The suite needs Node 22, which the project
 * takes from npm (the `node` package).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startLocalStackProcess } from '../support/local-stack.ts';

const SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
  'server-stateless',
  // Issue 9, item 3: a tampered requestState is refused (MRTR integrity MUST).
  'input-required-result-tampered-state',
];

/**
 * Scenarios run on both wires: the 2025-11-25 default and `--spec-version
 * 2026-07-28` (issue 9, item 4: the local server refuses DNS-rebinding
 * `Host`/`Origin` values and serves loopback ones).
 */
const BOTH_WIRES = ['dns-rebinding-protection'];

const require = createRequire(import.meta.url);
const suiteEntry = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
const node22 = path.join(path.dirname(require.resolve('node/package.json')), 'bin', 'node');

interface ScenarioRun {
  scenario: string;
  exitCode: number | null;
  passed: number;
  failed: number;
  warnings: number;
  output: string;
}

function runScenario(url: string, scenario: string, specVersion?: string): Promise<ScenarioRun> {
  return new Promise((resolve, reject) => {
    const args = [suiteEntry, 'server', '--url', url, '--scenario', scenario, ...(specVersion ? ['--spec-version', specVersion] : [])];
    const child = spawn(node22, args, {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      const match = /Passed: (\d+)\/\d+, (\d+) failed, (\d+) warnings/.exec(plain);
      resolve({
        scenario: specVersion ? `${scenario} (${specVersion})` : scenario,
        exitCode,
        passed: Number(match?.[1] ?? 0),
        failed: match ? Number(match[2]) : Number.NaN,
        warnings: Number(match?.[3] ?? 0),
        output: plain,
      });
    });
  });
}

describe('MCP conformance suite against the local stack', () => {
  let stack: Awaited<ReturnType<typeof startLocalStackProcess>>;
  const runs: ScenarioRun[] = [];

  before(async () => {
    // The settings `npm start` uses.
    stack = await startLocalStackProcess({ env: { TASKS_TOOLSET: 'all' } });
  });

  after(async () => {
    await stack?.stop();
    const width = Math.max(...runs.map((run) => run.scenario.length), 'total'.length);
    console.log('\nConformance summary (@modelcontextprotocol/conformance 0.2.0-alpha.12)');
    for (const run of runs)
      console.log(`  ${run.scenario.padEnd(width)}  ${run.passed} passed, ${run.failed} failed, ${run.warnings} warnings`);
    const total = runs.reduce((sum, run) => ({ passed: sum.passed + run.passed, failed: sum.failed + run.failed }), {
      passed: 0,
      failed: 0,
    });
    console.log(`  ${'total'.padEnd(width)}  ${total.passed} passed, ${total.failed} failed\n`);
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario}: zero failed checks`, async () => {
      const run = await runScenario(stack.url, scenario);
      runs.push(run);
      assert.equal(run.failed, 0, run.output);
      assert.ok(run.passed > 0, `no check passed:\n${run.output}`);
      assert.equal(run.exitCode, 0, run.output);
    });
  }

  for (const scenario of BOTH_WIRES) {
    for (const specVersion of [undefined, '2026-07-28']) {
      it(`${scenario} (${specVersion ?? 'default wire'}): zero failed checks`, async () => {
        const run = await runScenario(stack.url, scenario, specVersion);
        runs.push(run);
        assert.equal(run.failed, 0, run.output);
        assert.ok(run.passed > 0, `no check passed:\n${run.output}`);
        assert.equal(run.exitCode, 0, run.output);
      });
    }
  }
});
