/**
 * The logical ids of the stack's stateful resources, per context set: what
 * `test/infra/logical-ids.json` holds and `logical-ids.test.ts` compares. A
 * changed logical id makes CloudFormation replace the resource on the next
 * deploy: a new table loses every task, a new queue every message, a new
 * state-key custom resource deletes the sealing key's parameter (and with it
 * every callback token and console session), a new user pool every account,
 * a new state machine the executions its tasks follow (and, named, fails the deploy).
 *
 * `npx tsx test/infra/logical-ids.ts` prints the current snapshot;
 * `--write` rewrites the file (only for a change that is meant, and
 * announced in docs/upgrading.md).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Stack } from 'aws-cdk-lib';
import { createApp } from '../../infra/app.ts';
import { CDK_CONTEXT, type Json } from './synth.ts';

/** The resource types whose replacement loses state or breaks what clients and people hold. */
export const STATEFUL_TYPES = [
  'AWS::DynamoDB::Table',
  'AWS::SQS::Queue',
  'AWS::Events::EventBus',
  'AWS::Cognito::UserPool',
  'AWS::Cognito::UserPoolClient',
  'AWS::Cognito::UserPoolDomain',
  'AWS::ApiGatewayV2::Api',
  'AWS::ApiGatewayV2::Stage',
  'AWS::ApiGatewayV2::Route',
  'Custom::RequestStateKey',
  'AWS::StepFunctions::StateMachine',
] as const;

/** The three context sets of the snapshot, on top of `cdk.json`'s context. */
export const SNAPSHOT_CONTEXTS = {
  default: {},
  cognito: { cognito: true, cognitoDomainPrefix: 'mcp-tasks-ids' },
  authIssuerApprovers: { authIssuer: 'https://issuer.example.com', approvers: 'group:approvers' },
} as const satisfies Record<string, Record<string, unknown>>;

export type SnapshotName = keyof typeof SNAPSHOT_CONTEXTS;

/** Logical id → type, sorted by id: one context set's part of the snapshot. */
export type LogicalIds = Record<string, string>;

/** The stateful resources of a template, logical id → type, sorted by id. */
export function statefulIds(template: Json): LogicalIds {
  const resources = Object.entries(template['Resources'] as Record<string, Json>)
    .filter(([, resource]) => (STATEFUL_TYPES as readonly string[]).includes(resource['Type'] as string))
    .sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(resources.map(([id, resource]) => [id, resource['Type'] as string]));
}

/** What differs between a snapshot and a synthesized stack: one line per id gone, changed or new. */
export function idChanges(expected: LogicalIds, actual: LogicalIds): string[] {
  const changes: string[] = [];
  for (const [id, type] of Object.entries(expected)) {
    if (!(id in actual)) changes.push(`${id} (${type}) is gone: CloudFormation would replace it`);
    else if (actual[id] !== type) changes.push(`${id} changed type: ${type} → ${actual[id]}`);
  }
  for (const [id, type] of Object.entries(actual)) if (!(id in expected)) changes.push(`${id} (${type}) is new: not in the snapshot`);
  return changes;
}

/**
 * Synthesizes one context set without bundling (logical ids do not depend on
 * the bundles) and returns its stateful ids; `plant` may change the stack
 * before synthesis (a test's planted rename).
 */
export function synthesizeIds(name: SnapshotName, plant?: (stack: Stack) => void): LogicalIds {
  const outdir = mkdtempSync(join(tmpdir(), 'mcp-tasks-ids-'));
  try {
    const context = { ...CDK_CONTEXT, ...SNAPSHOT_CONTEXTS[name], 'aws:cdk:bundling-stacks': [] };
    const { app, stack } = createApp({ outdir, context });
    plant?.(stack);
    const template = app.synth().getStackByName(stack.stackName).template as Json;
    return statefulIds(template);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The snapshot file, next to this module. */
export const SNAPSHOT_FILE = new URL('./logical-ids.json', import.meta.url);

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const snapshot = Object.fromEntries(Object.keys(SNAPSHOT_CONTEXTS).map((name) => [name, synthesizeIds(name as SnapshotName)]));
  const text = `${JSON.stringify(snapshot, null, 2)}\n`;
  if (process.argv.includes('--write')) writeFileSync(SNAPSHOT_FILE, text);
  else process.stdout.write(text);
}
