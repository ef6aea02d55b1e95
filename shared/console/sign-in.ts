/**
 * Signing a person in to the console: OAuth 2.0 authorization code with PKCE
 * (and OpenID Connect's nonce) as a public client, or a confidential one for
 * issuers that require a secret, through `openid-client`. The issuer's
 * metadata is discovered once per execution environment. Who signed in is
 * the ID token's issuer + subject: the same principal the MCP endpoint binds
 * tasks to, provided the issuer gives the console and the MCP clients the
 * same subject (docs/console.md).
 */
import * as oidc from 'openid-client';
import { type ApproverClaims, approverClaims } from '../auth/approvers.ts';
import { principalFor, requesterOf } from '../auth/principal.ts';
import { CONSOLE_PATH } from '../links.ts';
import type { SignInState } from './session.ts';

/** The console's side of a sign-in. */
export interface SignIn {
  /** Where to send the person, and what to keep until they come back. */
  start(next: string): Promise<{ url: string; state: SignInState }>;
  /** Who came back to the callback with `search` (its query string), checked against `state`. */
  finish(search: string, state: SignInState): Promise<SignedIn>;
}

/** A person the issuer confirmed. */
export interface SignedIn {
  principal: string;
  /** What the pages call them (a name or email claim, else the subject). */
  name: string;
  /** What "who asks" calls them on their tasks: the ID token's `name`, else `email` (`requesterOf`); absent without either. */
  requester?: string;
  claims: ApproverClaims;
}

/** How the console signs people in. */
export interface SignInOptions {
  issuer: string;
  clientId: string;
  /** The client's secret, when the issuer requires one (read once, on first use). */
  clientSecret?: () => Promise<string>;
  /** The callback URL registered at the issuer (`<base>/console/callback`): built from the deployment's URL, never the `Host`. */
  redirectUri: string;
  /** Scopes asked for besides `openid`: the approvers' (`scope:<name>` of `TASKS_APPROVERS`), so a grant can show them. */
  scopes?: string[];
}

/** The scope the console always asks for: who the person is (it calls no API with the token). */
const SCOPE = 'openid';

/** A sign-in through `openid-client` against `options.issuer`. */
export function oidcSignIn(options: SignInOptions): SignIn {
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () =>
    (discovered ??= discover(options)).catch((error: unknown) => {
      discovered = undefined; // an issuer that could not be reached is tried again next time
      throw error;
    });
  return {
    async start(next) {
      const config = await configuration();
      const state: SignInState = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), next };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: options.redirectUri,
        scope: [SCOPE, ...(options.scopes ?? [])].join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(state.verifier),
        code_challenge_method: 'S256',
        state: state.state,
        nonce: state.nonce,
      });
      return { url: url.href, state };
    },
    async finish(search, state) {
      const config = await configuration();
      const current = new URL(options.redirectUri);
      current.search = search;
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: state.verifier,
        expectedState: state.state,
        expectedNonce: state.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims || typeof claims.sub !== 'string' || claims.sub === '') throw new Error('The ID token has no subject');
      const name = [claims['email'], claims['preferred_username'], claims['name']].find((c) => typeof c === 'string' && c !== '');
      const requester = requesterOf(claims);
      return {
        principal: principalFor(claims.iss, claims.sub),
        name: (name as string | undefined) ?? claims.sub,
        ...(requester === undefined ? {} : { requester }),
        claims: approverClaims(claims, typeof tokens.scope === 'string' ? tokens.scope : undefined),
      };
    },
  };
}

async function discover(options: SignInOptions): Promise<oidc.Configuration> {
  const secret = options.clientSecret ? await options.clientSecret() : undefined;
  const issuer = new URL(options.issuer);
  return oidc.discovery(issuer, options.clientId, undefined, secret === undefined ? oidc.None() : oidc.ClientSecretPost(secret), {
    // Plain HTTP only for an issuer on this machine (the local stack's authorization server).
    ...(issuer.protocol === 'http:' && isLoopback(issuer.hostname) ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
}

function isLoopback(hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}

/**
 * Where a person may be sent after signing in: a path under `/console` of
 * this origin (query kept), never another origin, a scheme-relative `//…`, a
 * backslash trick or the sign-in routes themselves; anything else is the
 * console's front page.
 */
export function safeNext(next: unknown): string {
  const fallback = CONSOLE_PATH;
  if (typeof next !== 'string' || !next.startsWith(CONSOLE_PATH) || next.includes('\\') || [...next].some((ch) => ch < ' '))
    return fallback;
  const probe = 'https://console.invalid';
  if (!URL.canParse(next, probe)) return fallback;
  const url = new URL(next, probe);
  if (url.origin !== probe || !(url.pathname === CONSOLE_PATH || url.pathname.startsWith(`${CONSOLE_PATH}/`))) return fallback;
  if (url.pathname === `${CONSOLE_PATH}/callback` || url.pathname === `${CONSOLE_PATH}/sign-in`) return fallback;
  return `${url.pathname}${url.search}`;
}
