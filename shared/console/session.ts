/**
 * The console's cookies: the session (who the person is, and the token every
 * form of the session carries) and the state of a sign-in under way (PKCE
 * verifier, state, nonce, the page asked for). Both are sealed, encrypted
 * and authenticated, as JWTs (`dir`, A256GCM) under keys of their own
 * purpose (`console-session`, `console-sign-in`: `shared/keys.ts`), so a
 * value sealed for one is refused as the other, and nothing in a cookie can
 * be read or changed by the browser holding it.
 */
import { randomBytes } from 'node:crypto';
import { EncryptJWT, errors, jwtDecrypt } from 'jose';
import type { KeyPurpose } from '../keys.ts';

/** How long a session lasts from sign-in (or, on an open console, from the first page). */
export const SESSION_SECONDS = 8 * 60 * 60;

/** How long a sign-in may take from the redirect to the identity provider to the callback. */
export const SIGN_IN_SECONDS = 10 * 60;

/** A console session. */
export interface Session {
  /** `person`: signed in at the console's issuer; `open`: an open console's visitor (the endpoint's one principal). */
  kind: 'person' | 'open';
  principal: string;
  /** What the page calls the person (a name or email claim, else the subject). */
  name?: string;
  /**
   * What "who asks" calls the person on their own tasks: their ID token's
   * `name`, else `email`, as recorded at sign-in (`SignInNames`). Absent
   * when the token had neither, and in sessions sealed before it existed.
   */
  requester?: string;
  /** The token every form of this session posts (compared in constant time). */
  formToken: string;
  /** `true`: the deployment's approvers rule admitted them at sign-in (they decide questions for a person of any task). */
  approver?: true;
  /** The session's own id (random, base64url): which sign-in this is. Absent in sessions sealed before it existed. */
  sid?: string;
  /**
   * When the session started (epoch ms): a sign-out recorded at or after it
   * ends it. Sessions sealed before this field read their seal's `iat`.
   */
  startedAt?: number;
}

/** A sign-in under way, between the redirect to the identity provider and its callback. */
export interface SignInState {
  state: string;
  nonce: string;
  verifier: string;
  /** Where the person goes once signed in: a checked same-origin path under `/console`. */
  next: string;
}

/** The keys per purpose (derived from the stack's secret, see `purposeKeys`). */
export type Keys = (purpose: KeyPurpose) => Promise<Uint8Array>;

const AUDIENCE: Record<'console-session' | 'console-sign-in', string> = {
  'console-session': 'mcp-tasks/console-session',
  'console-sign-in': 'mcp-tasks/console-sign-in',
};

/** A fresh form token: 32 random bytes, base64url. */
export function newFormToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A fresh session id: 16 random bytes, base64url. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** `payload` sealed for `purpose`, valid for `seconds`. */
export async function seal(
  keys: Keys,
  purpose: 'console-session' | 'console-sign-in',
  payload: Session | SignInState,
  seconds: number,
): Promise<string> {
  return new EncryptJWT({ ...payload })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
    .setAudience(AUDIENCE[purpose])
    .setIssuedAt()
    .setExpirationTime(`${seconds}s`)
    .encrypt(await keys(purpose));
}

/**
 * What `sealed` holds, when it was sealed for `purpose` and has not expired;
 * `undefined` for anything else (tampered, foreign, expired, another
 * purpose's: a stale or forged cookie is no error, just no session).
 */
export async function unseal(keys: Keys, purpose: 'console-session', sealed: string | undefined): Promise<Session | undefined>;
export async function unseal(keys: Keys, purpose: 'console-sign-in', sealed: string | undefined): Promise<SignInState | undefined>;
export async function unseal(
  keys: Keys,
  purpose: 'console-session' | 'console-sign-in',
  sealed: string | undefined,
): Promise<Session | SignInState | undefined> {
  if (!sealed) return undefined;
  try {
    const { payload } = await jwtDecrypt(sealed, await keys(purpose), {
      audience: AUDIENCE[purpose],
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    return purpose === 'console-session' ? asSession(payload) : asSignIn(payload);
  } catch (error) {
    if (error instanceof errors.JOSEError) return undefined;
    throw error;
  }
}

function asSession(payload: Record<string, unknown>): Session | undefined {
  const { kind, principal, name, requester, formToken, approver, sid, startedAt, iat } = payload;
  if ((kind !== 'person' && kind !== 'open') || typeof principal !== 'string' || typeof formToken !== 'string') return undefined;
  // A session sealed before `startedAt` existed started at its seal's issue time (whole seconds).
  const started = typeof startedAt === 'number' ? startedAt : typeof iat === 'number' ? iat * 1000 : undefined;
  return {
    kind,
    principal,
    formToken,
    ...(typeof name === 'string' ? { name } : {}),
    ...(typeof requester === 'string' ? { requester } : {}),
    ...(approver === true ? { approver } : {}),
    ...(typeof sid === 'string' ? { sid } : {}),
    ...(started === undefined ? {} : { startedAt: started }),
  };
}

function asSignIn(payload: Record<string, unknown>): SignInState | undefined {
  const { state, nonce, verifier, next } = payload;
  if (typeof state !== 'string' || typeof nonce !== 'string' || typeof verifier !== 'string' || typeof next !== 'string') return undefined;
  return { state, nonce, verifier, next };
}
