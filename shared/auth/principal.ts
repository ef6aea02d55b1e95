/**
 * Who owns a task: one string per (issuer, subject) pair.
 *
 * Both parts are length-prefixed, so the encoding is injective: no two pairs
 * give the same string, whatever characters an issuer or subject contains,
 * and a principal followed by any separator and more text (the idempotency
 * key scoping in the DynamoDB store) cannot be mistaken for another one.
 * The same subject at two issuers is two principals.
 *
 * Rows written before this encoding carry the bare `sub` as their owner; they
 * are not readable under the new principal (see docs/authorization.md).
 */

/** Prefix of every principal built from a token (a bare `sub` or `local` never starts like this). */
const PRINCIPAL_PREFIX = 'jwt|';

/** The principal of `subject` at `issuer`; a missing subject is refused, never mapped to a shared principal. */
export function principalFor(issuer: string, subject: string): string {
  if (subject === '') throw new Error('A principal needs a subject');
  return `${PRINCIPAL_PREFIX}${issuer.length}|${issuer}|${subject.length}|${subject}`;
}

/** The most characters of a caller's name kept on a task ({@link requesterOf}). */
const MAX_REQUESTER_CHARS = 128;

/**
 * Who a token's caller is, as a person reads it: its `name` claim, else its
 * `email`, trimmed and cut to 128 characters; `undefined` without either.
 * Personal data: kept on the tasks they start for their pages only.
 */
export function requesterOf(claims: Readonly<Record<string, unknown>>): string | undefined {
  const found = [claims['name'], claims['email']].find((claim) => typeof claim === 'string' && claim.trim() !== '') as string | undefined;
  return found?.trim().slice(0, MAX_REQUESTER_CHARS);
}

/** The (issuer, subject) pair of a principal built by {@link principalFor}; `undefined` for any other string. */
export function parsePrincipal(principal: string): { issuer: string; subject: string } | undefined {
  if (!principal.startsWith(PRINCIPAL_PREFIX)) return undefined;
  let rest = principal.slice(PRINCIPAL_PREFIX.length);
  const parts: string[] = [];
  for (let i = 0; i < 2; i++) {
    const bar = rest.indexOf('|');
    const length = Number(rest.slice(0, bar));
    if (bar < 1 || !Number.isSafeInteger(length) || length < 0) return undefined;
    parts.push(rest.slice(bar + 1, bar + 1 + length));
    rest = rest.slice(bar + 1 + length);
    if (parts[i]!.length !== length) return undefined;
    if (i === 0) {
      if (!rest.startsWith('|')) return undefined;
      rest = rest.slice(1);
    }
  }
  if (rest !== '' || parts[1] === '') return undefined;
  return { issuer: parts[0]!, subject: parts[1]! };
}
