/**
 * Which callers are machines: a client acting for itself (OAuth client
 * credentials), not for a person. Nobody can sign in as one, so a question
 * meant for a person of a machine's task is decided by the deployment's
 * approvers, and fails at once where it names none. One rule per deployment
 * (`TASKS_MACHINE_CLAIM`, `-c machineClaim=…`), applied to the claims of the
 * caller's verified token. Pure.
 */

/**
 * How a token tells it is a machine's:
 * - `client-id` (the default): its `sub` equals its client id, as a token
 *   names it: `client_id` (Cognito), `azp`, or `cid` (Okta): what their
 *   client-credentials tokens carry;
 * - `claim`: a claim equals a value, or lists it (Auth0: `gty=client-credentials`;
 *   Entra ID: `idtyp=app`, an optional claim the API's registration must add);
 * - `none`: no caller counts as a machine.
 */
export type MachineRule = { kind: 'client-id' } | { kind: 'claim'; claim: string; value: string } | { kind: 'none' };

/** Parses `none` or `<claim>=<value>` (unset: the default rule); throws naming `env` for anything else. */
export function parseMachineRule(raw: string | undefined, env: string): MachineRule {
  const text = raw?.trim() ?? '';
  if (text === '') return { kind: 'client-id' };
  if (text === 'none') return { kind: 'none' };
  const match = /^([^\s=]+)=(\S+)$/.exec(text);
  if (!match) throw new Error(`${env} must be none or <claim>=<value> (e.g. gty=client-credentials), got "${raw}"`);
  return { kind: 'claim', claim: match[1]!, value: match[2]! };
}

/** Whether a token with `claims` is a machine's under `rule`. */
export function isMachine(rule: MachineRule, claims: Readonly<Record<string, unknown>>): boolean {
  switch (rule.kind) {
    case 'none':
      return false;
    case 'client-id': {
      const sub = claims['sub'];
      return typeof sub === 'string' && sub !== '' && [claims['client_id'], claims['azp'], claims['cid']].includes(sub);
    }
    case 'claim': {
      const value = claims[rule.claim];
      return value === rule.value || (Array.isArray(value) && value.includes(rule.value));
    }
  }
}
