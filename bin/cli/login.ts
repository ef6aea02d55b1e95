/**
 * `mcp-tasks login`: gets an access token for an MCP endpoint the way the MCP
 * authorization spec has clients do it, with nothing but `fetch`:
 *
 * 1. discovery: the endpoint's Protected Resource Metadata (RFC 9728), then
 *    its authorization server's metadata (RFC 8414, or OpenID discovery);
 * 2. a client: the given client id (pre-registered), or dynamic registration
 *    (RFC 7591) when the server offers it;
 * 3. a grant: authorization code with PKCE (S256) in the browser, the answer
 *    caught on a loopback port (RFC 8252), or client credentials for scripts;
 *    always with the endpoint as `resource` (RFC 8707);
 * 4. the token is kept between commands in a file only the user can read,
 *    per endpoint, and refreshed (refresh token, or client credentials again
 *    when the secret is in the environment) when it expires.
 *
 * Tokens and secrets are never printed.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoginError, type LoginStore, type StoredLogin } from './login-store.ts';

/** The loopback port of the browser login when none is given (the one the stack's Cognito client lists). */
export const DEFAULT_CALLBACK_PORT = 33418;
const LOGIN_TIMEOUT_MS = 5 * 60 * 1000;
/** A token this close to its expiry is renewed before use. */
const EXPIRY_MARGIN_S = 30;

export interface Discovery {
  resource: string;
  /** The scopes to ask for: the endpoint's challenge names them, else its metadata lists them. */
  scopes: string[];
  issuer: string;
  authorizationEndpoint?: string;
  tokenEndpoint: string;
  registrationEndpoint?: string;
}

/**
 * Reads the endpoint's metadata and its authorization server's. As an MCP
 * client does, it first asks without a token: the `401` challenge names the
 * metadata document and the scopes to request; without one, the well-known
 * locations are tried.
 */
async function discover(endpoint: string, fetcher: typeof fetch = fetch): Promise<Discovery> {
  const url = new URL(endpoint);
  const path = url.pathname.replace(/\/$/, '');
  const challenge = await challengeOf(endpoint, fetcher);
  const candidates = [`/.well-known/oauth-protected-resource${path}`, '/.well-known/oauth-protected-resource'].map(
    (p) => new URL(p, url.origin),
  );
  if (challenge.metadataUrl) candidates.unshift(new URL(challenge.metadataUrl));
  const metadata = await firstJson(fetcher, candidates);
  if (!metadata) throw new LoginError(`${endpoint} publishes no protected resource metadata: it does not take OAuth tokens (is auth on?)`);
  // RFC 9728 §3.3: the metadata must be about this very endpoint, or a token for another resource could be obtained for it.
  if (typeof metadata['resource'] !== 'string' || metadata['resource'].replace(/\/$/, '') !== endpoint.replace(/\/$/, '')) {
    throw new LoginError(`The resource metadata describes ${String(metadata['resource'])}, not ${endpoint}`);
  }
  const servers = metadata['authorization_servers'];
  if (!Array.isArray(servers) || typeof servers[0] !== 'string')
    throw new LoginError('The resource metadata names no authorization server');
  const issuer = servers[0];
  const base = new URL(issuer);
  const issuerPath = base.pathname.replace(/\/$/, '');
  const server = await firstJson(fetcher, [
    new URL(`/.well-known/oauth-authorization-server${issuerPath}`, base.origin),
    new URL(`/.well-known/openid-configuration${issuerPath}`, base.origin),
    new URL(`${issuerPath}/.well-known/openid-configuration`, base.origin),
  ]);
  if (!server) throw new LoginError(`No metadata found for the authorization server ${issuer}`);
  if (server['issuer'] !== issuer) throw new LoginError(`The authorization server metadata names another issuer than ${issuer}`);
  const text = (key: string) => (typeof server[key] === 'string' ? (server[key] as string) : undefined);
  const tokenEndpoint = text('token_endpoint');
  if (!tokenEndpoint) throw new LoginError('The authorization server has no token endpoint');
  const supported = Array.isArray(metadata['scopes_supported'])
    ? (metadata['scopes_supported'] as unknown[]).filter((s): s is string => typeof s === 'string')
    : [];
  const scopes = challenge.scope !== undefined ? challenge.scope.split(' ').filter(Boolean) : supported;
  const authorizationEndpoint = text('authorization_endpoint');
  const registrationEndpoint = text('registration_endpoint');
  return {
    resource: metadata['resource'],
    scopes,
    issuer,
    tokenEndpoint,
    ...(authorizationEndpoint ? { authorizationEndpoint } : {}),
    ...(registrationEndpoint ? { registrationEndpoint } : {}),
  };
}

/** The `resource_metadata` and `scope` of the endpoint's answer to a request without a token. */
async function challengeOf(endpoint: string, fetcher: typeof fetch): Promise<{ metadataUrl?: string; scope?: string }> {
  const response = await fetcher(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
  });
  await response.body?.cancel();
  const header = response.status === 401 ? (response.headers.get('www-authenticate') ?? '') : '';
  const param = (name: string) => new RegExp(`(?:^|[\\s,])${name}="([^"]*)"`).exec(header)?.[1];
  const metadataUrl = param('resource_metadata');
  const scope = param('scope');
  return { ...(metadataUrl ? { metadataUrl } : {}), ...(scope !== undefined ? { scope } : {}) };
}

async function firstJson(fetcher: typeof fetch, urls: URL[]): Promise<Record<string, unknown> | undefined> {
  for (const url of urls) {
    const response = await fetcher(url, { headers: { accept: 'application/json' } });
    if (response.ok) return (await response.json()) as Record<string, unknown>;
    await response.body?.cancel();
  }
  return undefined;
}

export interface ClientCredentialsOptions {
  clientId: string;
  clientSecret: string;
  scope?: string;
}

/** Client credentials: a token for the endpoint itself, for scripts. */
export async function loginWithClientCredentials(
  endpoint: string,
  options: ClientCredentialsOptions,
  fetcher: typeof fetch = fetch,
): Promise<StoredLogin> {
  const found = await discover(endpoint, fetcher);
  const scope = options.scope ?? (found.scopes.join(' ') || undefined);
  const tokens = await tokenRequest(
    found.tokenEndpoint,
    { grant_type: 'client_credentials', resource: found.resource, ...(scope ? { scope } : {}) },
    { id: options.clientId, secret: options.clientSecret },
    fetcher,
  );
  return stored(found, options.clientId, 'client_credentials', scope, tokens);
}

export interface BrowserLoginOptions {
  /** A pre-registered public client; without it the client registers itself. */
  clientId?: string;
  scope?: string;
  /** Loopback port for the answer (0: any free one; only with dynamic registration). */
  callbackPort?: number;
  /** Shows the authorization URL to the user (and opens the browser, if the caller wants). */
  open: (url: string) => void;
}

/** Authorization code with PKCE: the user signs in in a browser; the answer comes back to 127.0.0.1. */
export async function loginInBrowser(endpoint: string, options: BrowserLoginOptions, fetcher: typeof fetch = fetch): Promise<StoredLogin> {
  const found = await discover(endpoint, fetcher);
  if (!found.authorizationEndpoint) throw new LoginError('The authorization server has no authorization endpoint');
  const scope = options.scope ?? (found.scopes.join(' ') || undefined);
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');

  const callback = await listenForCallback(options.callbackPort ?? DEFAULT_CALLBACK_PORT, state);
  try {
    const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
    const clientId = options.clientId ?? (await register(found, redirectUri, scope, fetcher));
    const authorize = new URL(found.authorizationEndpoint);
    for (const [key, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state,
      resource: found.resource,
      ...(scope ? { scope } : {}),
    }))
      authorize.searchParams.set(key, value);
    options.open(authorize.href);

    const answer = await callback.answer;
    // RFC 9207: an authorization server that names itself must be the one we sent the user to.
    const iss = answer.get('iss');
    if (iss !== null && iss !== found.issuer) throw new LoginError('The answer came from another authorization server');
    const error = answer.get('error');
    if (error)
      throw new LoginError(
        `The authorization server refused: ${error}${answer.get('error_description') ? ` (${answer.get('error_description')})` : ''}`,
      );
    const code = answer.get('code');
    if (!code) throw new LoginError('The answer carried no authorization code');
    const tokens = await tokenRequest(
      found.tokenEndpoint,
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        client_id: clientId,
        resource: found.resource,
      },
      undefined,
      fetcher,
    );
    return stored(found, clientId, 'authorization_code', scope, tokens);
  } finally {
    await callback.close();
  }
}

/** Dynamic client registration of a public native client (RFC 7591, RFC 8252). */
async function register(found: Discovery, redirectUri: string, scope: string | undefined, fetcher: typeof fetch): Promise<string> {
  if (!found.registrationEndpoint) {
    throw new LoginError(
      `${found.issuer} offers no dynamic client registration: pass the client id registered for this CLI with --client-id`,
    );
  }
  const response = await fetcher(found.registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      client_name: 'mcp-tasks CLI',
      application_type: 'native',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(scope ? { scope } : {}),
    }),
  });
  const body = (await response.json().catch(() => ({}))) as { client_id?: unknown; error?: unknown; error_description?: unknown };
  if (!response.ok || typeof body.client_id !== 'string')
    throw new LoginError(
      `Client registration failed: HTTP ${response.status} ${String(body.error ?? '')} ${String(body.error_description ?? '')}`.trim(),
    );
  return body.client_id;
}

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
}

async function tokenRequest(
  tokenEndpoint: string,
  params: Record<string, string>,
  client: { id: string; secret: string } | undefined,
  fetcher: typeof fetch,
): Promise<TokenResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (client)
    headers['authorization'] =
      `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`;
  const response = await fetcher(tokenEndpoint, { method: 'POST', headers, body: new URLSearchParams(params) });
  const body = (await response.json().catch(() => ({}))) as Partial<TokenResponse> & { error?: unknown; error_description?: unknown };
  if (!response.ok || typeof body.access_token !== 'string') {
    throw new LoginError(
      `The token request was refused: HTTP ${response.status} ${String(body.error ?? '')} ${String(body.error_description ?? '')}`.trim(),
    );
  }
  return body as TokenResponse;
}

function stored(
  found: Discovery,
  clientId: string,
  grant: StoredLogin['grant'],
  scope: string | undefined,
  tokens: TokenResponse,
): StoredLogin {
  return {
    resource: found.resource,
    issuer: found.issuer,
    tokenEndpoint: found.tokenEndpoint,
    clientId,
    grant,
    ...(scope ? { scope } : {}),
    accessToken: tokens.access_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    ...(typeof tokens.expires_in === 'number' ? { expiresAt: Math.floor(Date.now() / 1000) + tokens.expires_in } : {}),
  };
}

/** A one-shot HTTP listener on 127.0.0.1 for the authorization answer. */
async function listenForCallback(
  port: number,
  state: string,
): Promise<{ port: number; answer: Promise<URLSearchParams>; close(): Promise<void> }> {
  let settle!: (value: URLSearchParams | Error) => void;
  const answer = new Promise<URLSearchParams>((resolve, reject) => {
    settle = (value) => (value instanceof Error ? reject(value) : resolve(value));
  });
  // Rejections are delivered to whoever awaits `answer`; this keeps an unawaited one quiet.
  answer.catch(() => undefined);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || url.searchParams.get('state') !== state) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in to mcp-tasks. You can close this window.');
    settle(url.searchParams);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE' ? new LoginError(`Port ${port} on 127.0.0.1 is in use: pass another with --callback-port`) : error,
      ),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const timer = setTimeout(() => settle(new LoginError('No answer from the browser within 5 minutes')), LOGIN_TIMEOUT_MS);
  return {
    port: (server.address() as AddressInfo).port,
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Opens `url` in the desktop's browser, if there is one; failing silently is fine (the URL is printed too). */
export function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  const child = spawn(command, args, { stdio: 'ignore', detached: true });
  child.on('error', () => undefined); // no browser here: the printed URL is the way
  child.unref();
}

/**
 * The access token to use for `endpoint`: the stored one, renewed first when
 * it is about to expire (with its refresh token, or with client credentials
 * again when `clientSecret` is given). `undefined` when there is no login.
 */
export async function currentToken(
  endpoint: string,
  store: LoginStore,
  options: { clientSecret?: string } = {},
  fetcher: typeof fetch = fetch,
): Promise<string | undefined> {
  const login = await store.get(endpoint);
  if (!login) return undefined;
  if (login.expiresAt === undefined || login.expiresAt - EXPIRY_MARGIN_S > Date.now() / 1000) return login.accessToken;
  let tokens: TokenResponse;
  if (login.refreshToken) {
    tokens = await tokenRequest(
      login.tokenEndpoint,
      { grant_type: 'refresh_token', refresh_token: login.refreshToken, client_id: login.clientId, resource: login.resource },
      undefined,
      fetcher,
    );
  } else if (login.grant === 'client_credentials' && options.clientSecret) {
    tokens = await tokenRequest(
      login.tokenEndpoint,
      { grant_type: 'client_credentials', resource: login.resource, ...(login.scope ? { scope: login.scope } : {}) },
      { id: login.clientId, secret: options.clientSecret },
      fetcher,
    );
  } else {
    throw new LoginError(`The login for ${endpoint} has expired: run mcp-tasks login again`);
  }
  const renewed: StoredLogin = {
    ...login,
    accessToken: tokens.access_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    ...(typeof tokens.expires_in === 'number' ? { expiresAt: Math.floor(Date.now() / 1000) + tokens.expires_in } : {}),
  };
  await store.put(endpoint, renewed);
  return renewed.accessToken;
}
