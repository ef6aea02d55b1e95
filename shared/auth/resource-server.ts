/**
 * The MCP endpoint as an OAuth 2.1 resource server (MCP authorization spec;
 * RFC 9728, RFC 6750, RFC 8707):
 * - serves its Protected Resource Metadata, unauthenticated;
 * - answers a request without a valid token `401` with a
 *   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` challenge, so a
 *   client discovers the authorization server by itself;
 * - answers a token lacking a scope `403 insufficient_scope`, naming the
 *   scopes to step up to: the endpoint's, plus a called tool's own.
 *
 * Web-standard `Request`/`Response`, the same code behind API Gateway and the
 * local HTTP adapter. Tokens are never logged.
 */
import {
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import { nestsDeeperThan } from '../json-depth.ts';
import { errorName, type Log } from '../log.ts';
import type { AuthSettings } from './settings.ts';
import type { TokenVerifier, VerifiedToken } from './verifier.ts';

/** Where RFC 9728 puts the metadata document (followed by the resource's path). */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface ResourceServer {
  /** The metadata document if `request` asks for it, else `undefined`. */
  metadata(request: Request): Response | undefined;
  /** The caller's principal, or the challenge to answer with. */
  authorize(request: Request): Promise<{ principal: string; token: VerifiedToken } | Response>;
  /** The metadata URL advertised in challenges. */
  readonly metadataUrl: string;
  /** The metadata document itself. */
  readonly document: ProtectedResourceMetadata;
}

/** RFC 9728 §2, the fields this server fills. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ['header'];
  resource_name: string;
}

/**
 * What the resource server reads of a served tool: its name, and the scopes a
 * call of it needs on top of the endpoint's. Structural, so that the auth
 * layer does not depend on the runtime's tool definitions (every
 * `ToolDefinition` is one).
 */
export interface ScopedTool {
  readonly name: string;
  readonly scopes?: readonly string[];
}

/** What {@link createResourceServer} is built from. */
export interface ResourceServerDeps {
  settings: AuthSettings;
  verifier: TokenVerifier;
  /** The served tools: the metadata lists their scopes, and a call of one needs its own. */
  tools: ReadonlyMap<string, ScopedTool>;
  log: Log;
}

export function createResourceServer({ settings, verifier, tools, log }: ResourceServerDeps): ResourceServer {
  const resource = new URL(settings.resource);
  const metadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
  const toolScopes = new Map([...tools.values()].filter((tool) => tool.scopes?.length).map((tool) => [tool.name, tool.scopes!]));
  const document: ProtectedResourceMetadata = {
    resource: settings.resource,
    authorization_servers: settings.authorizationServers,
    scopes_supported: unique([...settings.scopes, ...[...toolScopes.values()].flat()]),
    bearer_methods_supported: ['header'],
    resource_name: 'MCP Tasks',
  };
  // The path-aware location first; the root one for clients that only try that.
  const metadataPaths = new Set([new URL(metadataUrl).pathname, METADATA_PATH]);
  const body = JSON.stringify(document);

  return {
    metadataUrl,
    document,
    metadata(request) {
      const path = new URL(request.url).pathname.replace(/\/$/, '') || '/';
      if (!metadataPaths.has(path)) return undefined;
      if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: PUBLIC_CORS });
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return new Response(null, { status: 405, headers: { allow: 'GET, HEAD, OPTIONS', ...PUBLIC_CORS } });
      }
      return new Response(request.method === 'HEAD' ? null : body, {
        status: 200,
        headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', ...PUBLIC_CORS },
      });
    },
    async authorize(request) {
      const header = request.headers.get('authorization');
      // RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
      if (!header) return challenge(401, { scopes: settings.scopes, metadataUrl });
      const required = unique([...settings.scopes, ...(await calledToolScopes(request, toolScopes))]);
      try {
        const token = (await verifyBearerToken(header, {
          verifier,
          requiredScopes: required,
          resourceMetadataUrl: metadataUrl,
        })) as VerifiedToken;
        return { principal: token.extra.principal, token };
      } catch (error) {
        if (!(error instanceof OAuthError)) log({ event: 'auth-error', error: errorName(error) });
        else log({ event: 'auth-refused', code: error.code });
        const scopes = error instanceof OAuthError && error.code === OAuthErrorCode.InsufficientScope ? required : settings.scopes;
        return bearerAuthChallengeResponse(error, { requiredScopes: scopes, resourceMetadataUrl: metadataUrl });
      }
    },
  };
}

/** Lets browser-based clients read the public metadata document (it holds nothing secret). */
const PUBLIC_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'mcp-protocol-version',
};

/** The header value of a credential-less challenge: where to find the metadata, and which scopes to ask for. */
function challengeHeader(options: { scopes: string[]; metadataUrl: string }): string {
  const parts = [`resource_metadata="${quote(options.metadataUrl)}"`];
  if (options.scopes.length > 0) parts.push(`scope="${quote(options.scopes.join(' '))}"`);
  return `Bearer ${parts.join(', ')}`;
}

function challenge(status: 401, options: { scopes: string[]; metadataUrl: string }): Response {
  return Response.json(
    // No OAuth error code: the request carried no credentials at all (RFC 6750 §3.1).
    { error_description: 'An access token is required' },
    { status, headers: { 'www-authenticate': challengeHeader(options), 'access-control-expose-headers': 'www-authenticate' } },
  );
}

/**
 * The scopes of the tools a `tools/call` (or a 2025-era batch) names. The body
 * is parsed only when some tool has scopes of its own; an unparsable body,
 * or one nested too deep, names no tool (the endpoint refuses it).
 */
async function calledToolScopes(request: Request, toolScopes: ReadonlyMap<string, readonly string[]>): Promise<string[]> {
  if (toolScopes.size === 0 || request.method !== 'POST') return [];
  const text = await request.clone().text();
  // Too deep to serve: the endpoint refuses it (-32600) without parsing; so does this.
  if (nestsDeeperThan(text)) return [];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return []; // not JSON: no tool is called
  }
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((message) => {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
    return method === 'tools/call' && typeof params?.name === 'string' ? (toolScopes.get(params.name) ?? []) : [];
  });
}

function quote(value: string): string {
  return value.replaceAll(/[\\"]/g, (c) => `\\${c}`).replaceAll(/[^\u0020-\u007E]/g, ' ');
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
