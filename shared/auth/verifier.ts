/**
 * Access-token verification: signed JWTs from the configured issuers, bound to
 * this resource. Keys come from each issuer's JWKS (found through its
 * discovery document) and are cached for the life of the verifier, i.e. per
 * execution environment: a warm function verifies a token without any call.
 */

import { type AuthInfo, OAuthError, OAuthErrorCode, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { createRemoteJWKSet, decodeJwt, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { errorName, type Log } from '../log.ts';
import { isMachine, type MachineRule } from './machine.ts';
import { principalFor, requesterOf } from './principal.ts';
import type { AuthSettings } from './settings.ts';

/** A verified token: what the SDK's bearer helpers need, plus the principal it maps to and whether it is a machine's. */
export interface VerifiedToken extends AuthInfo {
  /** `requester`: the caller's name or email claim ({@link requesterOf}), when the token has one. */
  extra: { principal: string; issuer: string; subject: string; machine: boolean; requester?: string };
}

export interface TokenVerifier extends OAuthTokenVerifier {
  verifyAccessToken(token: string): Promise<VerifiedToken>;
}

export interface VerifierOptions {
  log: Log;
  /** The HTTP client for discovery and keys (default: global `fetch`). */
  fetch?: typeof fetch;
  /** Which tokens are machines' (`TASKS_MACHINE_CLAIM`; default: `sub` equals the token's client id). */
  machine?: MachineRule;
}

/** Asymmetric algorithms only: a symmetric (`HS*`) or `none` token is refused whatever its keys. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const DISCOVERY_TIMEOUT_MS = 5000;

export function createJwtVerifier(settings: AuthSettings, options: VerifierOptions): TokenVerifier {
  const fetcher = options.fetch ?? fetch;
  const keySets = new Map<string, Promise<ReturnType<typeof createRemoteJWKSet>>>();
  const audiences = new Set([settings.resource, ...settings.audiences]);

  function keysOf(issuer: string) {
    let keys = keySets.get(issuer);
    if (!keys) {
      keys = discoverJwksUri(issuer, fetcher).then((uri) => createRemoteJWKSet(new URL(uri), { timeoutDuration: DISCOVERY_TIMEOUT_MS }));
      // A failed discovery is not cached: the next request tries again.
      keys.catch(() => keySets.delete(issuer));
      keySets.set(issuer, keys);
    }
    return keys;
  }

  return {
    async verifyAccessToken(token) {
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(token);
      } catch {
        throw invalid('The token is not a JWT');
      }
      const issuer = settings.issuers.find((candidate) => candidate === unverified.iss);
      if (!issuer) throw invalid('The token is not from an issuer this resource trusts');

      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, await keysOf(issuer), { issuer, algorithms: ALGORITHMS, clockTolerance: 5 }));
      } catch (error) {
        if (error instanceof joseErrors.JOSEError && !(error instanceof joseErrors.JWKSTimeout))
          throw invalid('The token is invalid or expired');
        // The issuer could not be reached: not the caller's fault.
        options.log({ event: 'auth-keys-unavailable', error: errorName(error) });
        throw new OAuthError(OAuthErrorCode.ServerError, 'The authorization server could not be reached');
      }

      checkAudience(payload, audiences, settings.clientIds);
      if (typeof payload.sub !== 'string' || payload.sub === '') throw invalid('The token has no subject');
      if (typeof payload.exp !== 'number') throw invalid('The token has no expiry');
      const clientId =
        typeof payload['client_id'] === 'string' ? payload['client_id'] : typeof payload['azp'] === 'string' ? payload['azp'] : payload.sub;
      return {
        token,
        clientId,
        scopes: scopesOf(payload),
        expiresAt: payload.exp,
        resource: new URL(settings.resource),
        extra: {
          principal: principalFor(issuer, payload.sub),
          issuer,
          subject: payload.sub,
          machine: isMachine(options.machine ?? { kind: 'client-id' }, payload),
          ...requesterExtra(payload),
        },
      };
    },
  };
}

/**
 * RFC 8707: the token must name this resource (or a configured alias) in
 * `aud`. A token without `aud` is accepted only from a configured client id
 * (IdPs that cannot bind access tokens to a resource; see docs/authorization.md).
 */
function checkAudience(payload: JWTPayload, audiences: Set<string>, clientIds: string[]): void {
  const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (aud.some((value) => audiences.has(value) || audiences.has(value.replace(/\/$/, '')))) return;
  if (aud.length === 0 && typeof payload['client_id'] === 'string' && clientIds.includes(payload['client_id'])) return;
  throw invalid('The token was not issued for this resource');
}

/** `scope` (RFC 9068, space-separated) or `scp` (Entra, Okta: a list or a string). */
function scopesOf(payload: JWTPayload): string[] {
  const raw = payload['scope'] ?? payload['scp'];
  if (typeof raw === 'string') return raw.split(' ').filter(Boolean);
  if (Array.isArray(raw)) return raw.filter((value): value is string => typeof value === 'string');
  return [];
}

function invalid(description: string): OAuthError {
  return new OAuthError(OAuthErrorCode.InvalidToken, description);
}

/**
 * The issuer's `jwks_uri`, from its OpenID Connect discovery document or,
 * failing that, its RFC 8414 metadata. The document must name the same issuer.
 */
async function discoverJwksUri(issuer: string, fetcher: typeof fetch = fetch): Promise<string> {
  const base = new URL(issuer);
  const path = base.pathname.replace(/\/$/, '');
  const candidates = [
    new URL(`${path}/.well-known/openid-configuration`, base.origin),
    new URL(`/.well-known/oauth-authorization-server${path}`, base.origin),
  ];
  for (const url of candidates) {
    const response = await fetcher(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
    if (!response.ok) {
      await response.body?.cancel();
      continue;
    }
    const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (document.issuer !== issuer) throw new Error(`The discovery document at ${url.href} names another issuer`);
    if (typeof document.jwks_uri !== 'string') throw new Error(`The discovery document at ${url.href} has no jwks_uri`);
    return document.jwks_uri;
  }
  throw new Error(`No discovery document found for issuer ${issuer}`);
}

function requesterExtra(payload: JWTPayload): { requester?: string } {
  const requester = requesterOf(payload);
  return requester === undefined ? {} : { requester };
}
