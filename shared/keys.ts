/**
 * Keys derived from the stack's one secret (the SSM SecureString that also
 * seals `requestState`; a key file under `npm start`), one per purpose, so a
 * value sealed or derived for one use is refused for any other: a session
 * cookie cannot be replayed as a callback token, nor a callback token as an
 * id. HKDF-SHA256 (RFC 5869) with the purpose as its `info`; the secret itself
 * seals only `requestState`, which predates the derived keys.
 *
 * No AWS SDK in here: the functions pass the secret in.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Every purpose a key is derived for. A new use gets a new purpose, never a shared one. */
export const KEY_PURPOSES = [
  'console-session',
  'console-sign-in',
  'callback-token',
  'repeat-call-id',
  'workflow-task-token',
  'github-run-reference',
] as const;
export type KeyPurpose = (typeof KEY_PURPOSES)[number];

const SALT = 'mcp-tasks-serverless/keys/v1';

/**
 * The fewest bytes the stack's secret may have (the `requestState` codec's
 * own minimum, `REQUEST_STATE_KEY_BYTES`, which a test holds equal): kept
 * here so that a function reading the secret needs no protocol module.
 */
export const MIN_SECRET_BYTES = 32;

/** The 32-byte key for `purpose`, derived from the stack's secret. Deterministic: every function derives the same one. */
export function purposeKey(secret: Uint8Array, purpose: KeyPurpose): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, SALT, purpose, 32));
}

/** A memoised {@link purposeKey} over a secret read lazily (as each function reads it: once per execution environment). */
export function purposeKeys(secret: () => Promise<Uint8Array>): (purpose: KeyPurpose) => Promise<Uint8Array> {
  const keys = new Map<KeyPurpose, Promise<Uint8Array>>();
  return (purpose) => {
    let key = keys.get(purpose);
    if (!key) {
      key = secret().then((bytes) => purposeKey(bytes, purpose));
      // A failed read of the secret is tried again next time.
      key.catch(() => keys.delete(purpose));
      keys.set(purpose, key);
    }
    return key;
  };
}

/** HMAC-SHA256 of `parts` (each length-prefixed, so no two lists of parts collide) under `key`, base64url. */
export function mac(key: Uint8Array, parts: readonly string[]): string {
  const hmac = createHmac('sha256', key);
  for (const part of parts) {
    const bytes = Buffer.from(part, 'utf8');
    hmac.update(`${bytes.length}:`).update(bytes);
  }
  return hmac.digest('base64url');
}

/** Whether `given` is `expected`, compared in constant time. */
export function sameMac(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
