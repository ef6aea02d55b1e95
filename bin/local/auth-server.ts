/**
 * A real OAuth 2.1 / OpenID Connect authorization server for the local stack
 * (`oidc-provider`, certified OpenID implementation), on 127.0.0.1:
 * authorization code with PKCE (required), client credentials, dynamic client
 * registration (open, as MCP clients expect) and resource indicators (RFC
 * 8707): access tokens are JWTs whose `aud` is the MCP endpoint.
 *
 * Local development only: accounts are whoever logs in (any login name and
 * password, the library's development login and consent pages). Its keys,
 * clients, grants, sessions and tokens are kept in `stateDir`
 * (`auth-state.ts`), so a sign-in lasts across restarts on the same port;
 * without one, in memory. Never part of a Lambda bundle: only `bin/local`
 * imports it.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { errors } from 'oidc-provider';
import { errorName, type Log } from '../../shared/log.ts';
import { type AuthKeys, type AuthState, newAuthKeys, openAuthState } from './auth-state.ts';
import { closeServer } from './http.ts';

export interface LocalAuthServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** The protected resource (the MCP endpoint URL); read when a token is requested, so it may be set after start. */
  resource: () => string;
  /** Further resources the server issues tokens for (tokens a client could mistakenly present to this one). */
  otherResources?: string[];
  /** Scopes the resource knows: what clients may ask for. */
  scopes: () => string[];
  /** Confidential clients registered at start (client credentials). */
  clients?: { clientId: string; clientSecret: string; scope?: string }[];
  /** Public clients registered at start (authorization code + PKCE, e.g. the console): their callbacks. */
  publicClients?: { clientId: string; redirectUris: string[] }[];
  /** Groups by login name: the `groups` claim of those accounts' ID tokens (an approver's group, see `TASKS_APPROVERS`). */
  groups?: Record<string, string[]>;
  /** Scopes the public clients may ask for besides `openid` (the approvers' scopes, for the console). */
  publicClientScopes?: string[];
  /**
   * Where keys, registered clients, grants, sessions and tokens are kept
   * (`<dataDir>/auth`), so tokens issued before a restart still work after
   * it. Without it they are in memory, and new keys are made at every start.
   */
  stateDir?: string;
  /** Access token lifetime (default 10 minutes). */
  accessTokenTtlSeconds?: number;
  log: Log;
}

export interface LocalAuthServer {
  /** The issuer, `http://127.0.0.1:<port>`. */
  issuer: string;
  close(): Promise<void>;
}

const CLOSE_GRACE_MS = 2000;

/**
 * Starts the authorization server: listens first (the issuer is its own URL,
 * known once the port is picked), then builds the provider for that issuer
 * and hands it the requests (a request before that is answered 503).
 */
export async function startLocalAuthServer(options: LocalAuthServerOptions): Promise<LocalAuthServer> {
  const listening = await listenOnLoopback(options.port);
  const { issuer } = listening;
  const state: AuthState | { keys: AuthKeys } = options.stateDir ? await openAuthState(options.stateDir) : { keys: await newAuthKeys() };
  const provider = new Provider(issuer, providerConfiguration(options, state));
  // Errors the library answers itself (bad client, bad grant…): names only, never request details.
  for (const event of ['server_error', 'grant.error', 'registration_create.error'] as const) {
    provider.on(event, (_ctx: unknown, error: unknown) =>
      options.log({ event: 'local-auth-server-error', kind: event, error: errorName(error) }),
    );
  }
  listening.serve(provider.callback());
  options.log({ event: 'local-auth-server-started', issuer });

  return {
    issuer,
    close: () => closeServer(listening.server, CLOSE_GRACE_MS),
  };
}

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A server listening on 127.0.0.1 (`port` 0 picks one) that answers 503 until it is given its handler. */
async function listenOnLoopback(port: number): Promise<{ server: Server; issuer: string; serve(handler: RequestHandler): void }> {
  let handle: RequestHandler | undefined;
  const server = createServer((req, res) => {
    if (handle) return handle(req, res);
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, issuer, serve: (handler) => void (handle = handler) };
}

/** The provider's configuration: its clients, accounts, scopes, the features MCP clients use, and the lifetimes. */
function providerConfiguration(options: LocalAuthServerOptions, state: AuthState | { keys: AuthKeys }): Record<string, unknown> {
  const ttl = options.accessTokenTtlSeconds ?? 600;
  return {
    jwks: state.keys.jwks,
    cookies: { keys: state.keys.cookieKeys },
    // Kept on disk (`auth-state.ts`); without a state folder, the library's in-memory store.
    ...('adapter' in state ? { adapter: state.adapter } : {}),
    clients: registeredClients(options),
    // Whoever logs in on the development login page is that account.
    // Accounts named in `groups` carry them as a `groups` claim, in the ID token too.
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, ...(options.groups?.[id] ? { groups: options.groups[id] } : {}) }),
    }),
    claims: { openid: ['sub', 'groups'] },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', ...new Set([...options.scopes(), ...(options.publicClientScopes ?? [])])],
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    // Browser-based MCP clients call the token and registration endpoints cross-origin.
    clientBasedCORS: () => true,
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: resourceIndicators(options, ttl),
    },
    ttl: {
      AccessToken: ttl,
      ClientCredentials: ttl,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      RefreshToken: 86_400,
    },
    // Refresh tokens for public clients too (a CLI keeps its login between commands).
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
  };
}

/** The clients registered at start: confidential ones (client credentials), public ones (code + PKCE). */
function registeredClients(options: LocalAuthServerOptions): Record<string, unknown>[] {
  return [
    ...(options.clients ?? []).map((client) => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      ...(client.scope ? { scope: client.scope } : {}),
    })),
    ...(options.publicClients ?? []).map((client) => ({
      client_id: client.clientId,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: client.redirectUris,
      token_endpoint_auth_method: 'none',
      scope: ['openid', ...(options.publicClientScopes ?? [])].join(' '),
    })),
  ];
}

/**
 * Resource indicators (RFC 8707): tokens for the MCP endpoint (or one of the
 * other known resources) only, as JWTs whose `aud` is that resource.
 */
function resourceIndicators(options: LocalAuthServerOptions, ttl: number): Record<string, unknown> {
  return {
    enabled: true,
    defaultResource: () => options.resource(),
    useGrantedResource: () => true,
    getResourceServerInfo: (_ctx: unknown, indicator: string) => {
      if (indicator !== options.resource() && !options.otherResources?.includes(indicator))
        throw new errors.InvalidTarget('Unknown resource');
      return {
        scope: options.scopes().join(' '),
        audience: indicator,
        accessTokenTTL: ttl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      };
    },
  };
}
