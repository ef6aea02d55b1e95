/**
 * OAuth helpers for the end-to-end tests, all against real servers:
 * discovery from the MCP endpoint's metadata, dynamic client registration,
 * an `OAuthClientProvider` for the authorization code grant that the SDK
 * client drives itself, and a scripted browser for the authorization
 * server's login and consent pages. No token is made by hand: every token
 * comes from the authorization server's token endpoint.
 */
import { createHash, randomBytes } from 'node:crypto';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@modelcontextprotocol/client';

export interface Discovered {
  metadata: { resource: string; authorization_servers: string[]; scopes_supported: string[]; bearer_methods_supported: string[] };
  issuer: string;
  server: { registration_endpoint: string; token_endpoint: string; authorization_endpoint: string; [key: string]: unknown };
}

/** RFC 9728 then OpenID discovery, starting from the MCP endpoint URL. */
export async function discover(mcpUrl: string): Promise<Discovered> {
  const url = new URL(mcpUrl);
  const metadata = (await (
    await fetch(new URL(`/.well-known/oauth-protected-resource${url.pathname}`, url))
  ).json()) as Discovered['metadata'];
  const issuer = metadata.authorization_servers[0]!;
  const server = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Discovered['server'];
  return { metadata, issuer, server };
}

/** Registers a confidential client for the client credentials grant (RFC 7591). */
export async function registerServiceClient(
  registrationEndpoint: string,
  scope: string,
): Promise<{ clientId: string; clientSecret: string }> {
  const response = await fetch(registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'e2e service',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope,
    }),
  });
  const body = (await response.json()) as { client_id?: string; client_secret?: string };
  if (response.status !== 201 || !body.client_id || !body.client_secret)
    throw new Error(`Registration failed: ${response.status} ${JSON.stringify(body)}`);
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

/** A client credentials token for `resource`, straight from the token endpoint (the way any OAuth client gets one). */
export async function clientCredentialsToken(
  tokenEndpoint: string,
  client: { clientId: string; clientSecret: string },
  resource: string,
  scope: string,
): Promise<string> {
  const response = await fetch(tokenEndpoint, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || !body.access_token) throw new Error(`Token request failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/**
 * A public client using the authorization code grant with PKCE, registering
 * itself (RFC 7591). The SDK calls `redirectToAuthorization`; the test then
 * drives the "browser" with {@link authorizeInBrowser}.
 */
export class BrowserClientProvider implements OAuthClientProvider {
  static readonly REDIRECT_URL = 'http://127.0.0.1:1/callback';
  authorizationUrl: URL | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  #discovery: OAuthDiscoveryState | undefined;

  get redirectUrl(): string {
    return BrowserClientProvider.REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'e2e browser client',
      redirect_uris: [BrowserClientProvider.REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as OAuthClientMetadata;
  }

  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  /** Kept with the verifier, so the code is redeemed only at the server that issued it. */
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#discovery = state;
  }
  discoveryState() {
    return this.#discovery;
  }
}

/**
 * Plays the user in a browser: opens the authorization URL, logs in as
 * `login` on the authorization server's login page, confirms its consent
 * page, and returns the parameters of the final redirect to the client.
 */
export async function authorizeInBrowser(authorizationUrl: URL, redirectUrl: string, login: string): Promise<URLSearchParams> {
  const cookies = new Map<string, string>();
  let next: { url: string; init?: RequestInit } = { url: authorizationUrl.href };
  for (let step = 0; step < 20; step++) {
    const response = await fetch(next.url, {
      ...next.init,
      redirect: 'manual',
      headers: {
        ...(next.init?.headers as Record<string, string> | undefined),
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = response.headers.get('location');
    if (location) {
      const target = new URL(location, next.url);
      if (target.href.startsWith(redirectUrl)) return target.searchParams;
      await response.body?.cancel();
      next = { url: target.href };
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!response.ok || !action || !prompt) throw new Error(`Unexpected page at ${next.url} (${response.status}): ${html.slice(0, 300)}`);
    const form = new URLSearchParams({ prompt });
    if (prompt === 'login') {
      form.set('login', login);
      form.set('password', 'any');
    }
    next = {
      url: new URL(action.replaceAll('&amp;', '&'), next.url).href,
      init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
    };
  }
  throw new Error('Too many redirects while authorizing');
}

/** `login`'s access token for the MCP endpoint `mcpUrl`, from the authorization code grant with PKCE (the login page scripted). */
export async function personToken(mcpUrl: string, login: string): Promise<string> {
  const { server, metadata } = await discover(mcpUrl);
  const redirect = 'http://127.0.0.1:1/callback';
  const registered = (await (
    await fetch(server.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: 'none', scope: metadata.scopes_supported.join(' ') }),
    })
  ).json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(server.authorization_endpoint);
  for (const [name, value] of Object.entries({
    client_id: registered.client_id,
    response_type: 'code',
    redirect_uri: redirect,
    scope: 'tasks',
    resource: metadata.resource,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })) {
    authorize.searchParams.set(name, value);
  }
  const code = (await authorizeInBrowser(authorize, redirect, login)).get('code');
  if (!code) throw new Error('No authorization code');
  const tokens = (await (
    await fetch(server.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirect,
        client_id: registered.client_id,
        code_verifier: verifier,
        resource: metadata.resource,
      }),
    })
  ).json()) as { access_token: string };
  return tokens.access_token;
}
