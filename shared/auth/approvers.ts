/**
 * Approvers: who may decide the questions for a person (`answeredBy:
 * 'person'`) of tasks they do not own. A deployment names them by a group
 * claim (`group:<name>`: Cognito's `cognito:groups`, or a plain `groups`
 * claim) or a scope (`scope:<name>`, from the token's `scope`), in
 * `TASKS_APPROVERS` (`-c approvers=…`). Pure: the claims come from a verified
 * ID token or token response.
 */

/** The approver rule of a deployment: anyone holding one of these groups or scopes. */
export interface Approvers {
  groups: string[];
  scopes: string[];
}

/** The claims an approver is recognised by, as a sign-in read them. */
export interface ApproverClaims {
  groups: string[];
  scopes: string[];
}

const ENTRY = /^(group|scope):([^\s,:][^\s,]*)$/;

/** Parses `group:<name>,scope:<name>` (comma- or space-separated); throws naming `env` for anything else. */
export function parseApprovers(raw: string | undefined, env: string): Approvers {
  const approvers: Approvers = { groups: [], scopes: [] };
  for (const entry of (raw ?? '').split(/[\s,]+/).filter((item) => item !== '')) {
    const match = ENTRY.exec(entry);
    if (!match) throw new Error(`${env} must list group:<name> or scope:<name> entries, got "${entry}"`);
    (match[1] === 'group' ? approvers.groups : approvers.scopes).push(match[2]!);
  }
  return approvers;
}

/** Whether the deployment names any approver. */
export function hasApprovers(approvers: Approvers): boolean {
  return approvers.groups.length > 0 || approvers.scopes.length > 0;
}

/** The groups and scopes of a set of claims: `cognito:groups` or `groups` (an array or a space-separated string), `scope` or `scp`. */
export function approverClaims(claims: Record<string, unknown>, grantedScope?: string): ApproverClaims {
  const words = (value: unknown): string[] =>
    Array.isArray(value)
      ? value.filter((item): item is string => typeof item === 'string')
      : typeof value === 'string'
        ? value.split(/\s+/).filter(Boolean)
        : [];
  return {
    groups: [...words(claims['cognito:groups']), ...words(claims['groups'])],
    scopes: [...words(claims['scope']), ...words(claims['scp']), ...words(grantedScope)],
  };
}

/** Whether someone with `claims` is an approver under `approvers`. */
export function isApprover(approvers: Approvers, claims: ApproverClaims): boolean {
  return approvers.groups.some((group) => claims.groups.includes(group)) || approvers.scopes.some((scope) => claims.scopes.includes(scope));
}
