/**
 * Templates CloudFormation accepts: `cfn-lint` (AWS's CloudFormation linter,
 * a Python tool; its absence fails the lane) over the template of every
 * context combination of `assembly.ts`. An error fails; a warning must match
 * an entry of `cfn-lint-warnings.json`, which gives its reason, and an entry
 * no warning matches is stale. cdk-nag's AwsSolutions pack runs at every
 * synthesis (`infra/app.ts`: an unacknowledged finding fails it); its report
 * in each assembly must hold no AwsSolutions finding.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { STACK_ID } from '../../infra/app.ts';
import { assemblyRoot, VARIANTS, type VariantName } from './assembly.ts';
import { type CfnLintMatch, cfnLint } from './checks.ts';

interface KnownWarning {
  rule: string;
  path: string;
  message: string;
  reason: string;
}

const KNOWN: KnownWarning[] = JSON.parse(readFileSync(new URL('./cfn-lint-warnings.json', import.meta.url), 'utf8')) as KnownWarning[];
const variants = Object.keys(VARIANTS) as VariantName[];
const templateOf = (variant: VariantName) => join(assemblyRoot(), variant, `${STACK_ID}.template.json`);

/** cfn-lint once over every template (its absence fails the lane). */
function lint(): CfnLintMatch[] {
  return cfnLint(variants.map(templateOf));
}

const where = (match: CfnLintMatch) => `${match.Filename.split('/').slice(-2, -1)[0]}: ${match.Location.Path.join('/')}`;
const matches = (known: KnownWarning, match: CfnLintMatch) =>
  known.rule === match.Rule.Id &&
  new RegExp(known.path).test(match.Location.Path.join('/')) &&
  new RegExp(known.message).test(match.Message);

describe('cfn-lint', () => {
  // Run once, on first use: each test fails on its own when cfn-lint is missing.
  let cached: CfnLintMatch[] | undefined;
  const linted = () => (cached ??= lint());

  it(`reports no error on any template (${variants.join(', ')})`, () => {
    const errors = linted()
      .filter((match) => match.Level === 'Error')
      .map((match) => `${match.Rule.Id} ${where(match)}: ${match.Message}`);
    assert.deepEqual(errors, []);
  });

  it('reports only warnings cfn-lint-warnings.json explains, each with a reason', () => {
    const unexplained = linted()
      .filter((match) => match.Level === 'Warning' && !KNOWN.some((known) => matches(known, match)))
      .map((match) => `${match.Rule.Id} ${where(match)}: ${match.Message}`);
    assert.deepEqual(unexplained, []);
    for (const known of KNOWN) assert.ok(known.reason.length > 40, `${known.rule} needs a written reason`);
  });

  it('keeps no stale entry in cfn-lint-warnings.json', () => {
    const stale = KNOWN.filter((known) => !linted().some((match) => matches(known, match))).map((known) => known.rule);
    assert.deepEqual(stale, []);
  });
});

describe('cdk-nag (AwsSolutions)', () => {
  for (const variant of variants) {
    it(`reports no finding on the ${variant} stack`, () => {
      const path = join(assemblyRoot(), variant, 'validation-report.json');
      assert.ok(
        existsSync(path),
        `No validation report in the ${variant} assembly: synthesize it with infra/app.ts's createApp (cdk-nag on)`,
      );
      const report = JSON.parse(readFileSync(path, 'utf8')) as {
        pluginReports: Array<{ pluginName: string; violations: Array<{ ruleName: string; severity: string }> }>;
      };
      const findings = report.pluginReports
        .filter((plugin) => plugin.pluginName === 'AwsSolutions')
        .flatMap((plugin) => plugin.violations.map((violation) => `${violation.severity} ${violation.ruleName}`));
      assert.deepEqual(findings, []);
    });
  }
});
