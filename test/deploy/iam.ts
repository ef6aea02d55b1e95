/**
 * IAM both ways, with `@cloud-copilot/iam-simulate` as the policy evaluator:
 * every recorded call must be allowed by the synthesized policies of the
 * role of the function that made it, and every statement those policies
 * grant must allow at least one recorded call — or carry a reason in
 * `unexercised-grants.json` (a tool's declared need, a path the run does not
 * reach). A reason for a statement that is exercised, or that no longer
 * exists, is stale and fails too.
 */
import { readFileSync } from 'node:fs';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { type Assembly, type FunctionRole, functionsOf, type Json, resourcesOf } from './assembly.ts';
import type { AwsCall } from './proxy.ts';
import { ACCOUNT } from './resolve.ts';

/** One statement of a function's role, resolved as deployed. */
export interface Grant {
  fn: FunctionRole;
  /** `<policy logical id>#<index>`. */
  id: string;
  actions: string[];
  resources: string[];
  statement: Json;
}

/** An entry of `unexercised-grants.json`: a statement (by function and actions) the run need not exercise, and why. */
export interface GrantReason {
  function: FunctionRole;
  actions: string[];
  reason: string;
}

export const GRANT_REASONS_FILE = new URL('./unexercised-grants.json', import.meta.url);

export function grantReasons(): GrantReason[] {
  return JSON.parse(readFileSync(GRANT_REASONS_FILE, 'utf8')) as GrantReason[];
}

const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

export const grantKey = (fn: string, actions: readonly string[]) => `${fn}: ${[...actions].sort().join(', ')}`;

/** The statements of each function's role: its attached `AWS::IAM::Policy` resources and inline policies, resolved. */
export function grantsOf(assembly: Assembly, resolve: (value: unknown) => unknown): Grant[] {
  const grants: Grant[] = [];
  const resources = assembly.template['Resources'] as Record<string, Json>;
  for (const fn of Object.values(functionsOf(assembly))) {
    const roleId = String(fn.properties['Role']?.['Fn::GetAtt']?.[0]);
    const role = resources[roleId];
    if (!role) throw new Error(`${fn.role}: its role ${roleId} is not in the template`);
    const managed = list(role['Properties']['ManagedPolicyArns']);
    if (managed.length) throw new Error(`${fn.role}: the lane cannot evaluate managed policies (${JSON.stringify(managed)})`);
    const documents: Array<[string, Json]> = [
      ...resourcesOf(assembly.template, 'AWS::IAM::Policy')
        .filter(([, policy]) => list(policy['Properties']['Roles'] as Json[]).some((ref) => ref['Ref'] === roleId))
        .map(([id, policy]): [string, Json] => [id, policy['Properties']['PolicyDocument'] as Json]),
      ...list(role['Properties']['Policies'] as Json[]).map((policy): [string, Json] => [
        `${roleId}/${policy['PolicyName']}`,
        policy['PolicyDocument'] as Json,
      ]),
    ];
    for (const [policyId, document] of documents) {
      list(document['Statement'] as Json[]).forEach((raw, index) => {
        const statement = resolve(raw) as Json;
        grants.push({
          fn: fn.role,
          id: `${policyId}#${index}`,
          actions: list(statement['Action'] as string | string[]),
          resources: list(statement['Resource'] as string | string[]),
          statement,
        });
      });
    }
  }
  return grants;
}

type Decision = { allowed: boolean; error?: string };

/**
 * Actions the simulator's data (AWS's Service Authorization Reference) lists
 * with no resource type, so it allows them on "*" only, while Step Functions
 * authorizes them on the state machine of the token's execution (its
 * AccessDenied names that ARN, and a statement on it allows them). The lane
 * evaluates these itself: an Allow statement naming the action and a
 * resource pattern that matches the machine (no Deny statements are granted).
 */
const ON_TOKEN_MACHINE = new Set(['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat']);

const matchesPattern = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);

async function simulate(call: AwsCall, statements: Json[]): Promise<Decision> {
  if (ON_TOKEN_MACHINE.has(call.action)) {
    const allowed = statements.some(
      (statement) =>
        statement['Effect'] === 'Allow' &&
        list(statement['Action'] as string | string[]).some((action) => matchesPattern(action, call.action)) &&
        list(statement['Resource'] as string | string[]).some((resource) => matchesPattern(resource, call.resource)),
    );
    return { allowed };
  }
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:iam::${ACCOUNT}:role/${call.fn}`,
        action: call.action,
        resource: { resource: call.resource, accountId: ACCOUNT },
        contextVariables: {},
      },
      identityPolicies: [{ name: 'role', policy: { Version: '2012-10-17', Statement: statements } }],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error') return { allowed: false, error: JSON.stringify(result.errors) };
  return { allowed: result.overallResult === 'Allowed' };
}

export interface IamReport {
  /** Calls the function's role does not allow, each as a sentence naming function, action and resource. */
  denied: string[];
  /** Statements no call exercised and no reason covers. */
  unexercised: string[];
  /** Reasons that cover nothing (an exercised statement, or none at all). */
  stale: string[];
  /** Per function: the calls observed and the statements granted (with what exercised them). */
  summary: string;
}

/** Evaluates the calls of one or more runs against their templates' grants (statements of the same function and actions are one grant). */
export async function checkIam(runs: Array<{ calls: AwsCall[]; grants: Grant[] }>, reasons: GrantReason[]): Promise<IamReport> {
  const denied: string[] = [];
  const exercisedBy = new Map<string, Set<string>>();
  const allGrants = new Map<string, Grant>();
  const observed = new Map<string, Set<string>>();
  for (const { calls, grants } of runs) {
    for (const grant of grants) allGrants.set(grantKey(grant.fn, grant.actions), grant);
    for (const call of calls) {
      const own = grants.filter((grant) => grant.fn === call.fn);
      const decision = await simulate(
        call,
        own.map((grant) => grant.statement),
      );
      const resource = call.resource.replace(/:log-stream:.*$/, ':log-stream:<stream>');
      const line = `${call.action} ${resource}${call.by === 'lambda' ? ' (by the Lambda service)' : ''}`;
      const seen = observed.get(call.fn) ?? new Set();
      seen.add(`${line}${decision.allowed ? '' : '  DENIED'}`);
      observed.set(call.fn, seen);
      if (!decision.allowed) {
        denied.push(
          `${call.fn} called ${call.action} on ${call.resource}${call.by === 'lambda' ? ' (the Lambda service, with its role)' : ''}, ` +
            `which its role's policies do not allow${decision.error ? `: ${decision.error}` : ''}`,
        );
        continue;
      }
      for (const grant of own) {
        if (!(await simulate(call, [grant.statement])).allowed) continue;
        const key = grantKey(grant.fn, grant.actions);
        const by = exercisedBy.get(key) ?? new Set();
        by.add(call.action);
        exercisedBy.set(key, by);
      }
    }
  }
  const reasonByKey = new Map(reasons.map((reason) => [grantKey(reason.function, reason.actions), reason.reason]));
  const unexercised: string[] = [];
  const stale: string[] = [];
  const lines: string[] = [];
  const byFunction = new Map<string, Grant[]>();
  for (const grant of allGrants.values()) byFunction.set(grant.fn, [...(byFunction.get(grant.fn) ?? []), grant]);
  for (const [fn, grants] of byFunction) {
    lines.push(`${fn}`, '  calls observed:', ...[...(observed.get(fn) ?? [])].sort().map((call) => `    ${call}`), '  statements granted:');
    for (const grant of grants) {
      const key = grantKey(grant.fn, grant.actions);
      const by = exercisedBy.get(key);
      const reason = reasonByKey.get(key);
      const what = `${grant.actions.join(', ')} on ${grant.resources.join(', ')}`;
      if (by) {
        lines.push(`    ${what}: exercised (${[...by].sort().join(', ')})`);
        if (reason) stale.push(`${key}: the reason "${reason}" is stale, the run exercises it (${[...by].join(', ')})`);
      } else if (reason) {
        lines.push(`    ${what}: not exercised: ${reason}`);
      } else {
        lines.push(`    ${what}: NOT EXERCISED`);
        unexercised.push(`${fn}'s role grants ${what}, which no call of the run exercised and unexercised-grants.json gives no reason for`);
      }
    }
  }
  for (const key of reasonByKey.keys()) if (!allGrants.has(key)) stale.push(`${key}: a reason for a statement the template does not grant`);
  return { denied, unexercised, stale, summary: lines.join('\n') };
}
