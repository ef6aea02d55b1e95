/**
 * `requestState` for inline multi-round-trip calls: the answers gathered in
 * earlier rounds, as base64url JSON. It carries only what the client itself
 * answered, so it needs no integrity protection: forging it can only claim
 * answers the client could have given in the first place.
 */
export function encodeAnswers(answers: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(answers)).toString('base64url');
}

/** Decodes {@link encodeAnswers}; anything malformed counts as no earlier answers. */
export function decodeAnswers(state: string | undefined): Record<string, unknown> {
  if (!state) return {};
  try {
    const value: unknown = JSON.parse(Buffer.from(state, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
