/**
 * The resource server's settings (read by `shared/config.ts` from `TASKS_AUTH_*`).
 * Pure: no I/O, nothing from a request (in particular never the Host header).
 */

export interface AuthSettings {
  /**
   * The canonical URL of the MCP endpoint (e.g. `https://mcp.example.com/mcp`):
   * the `resource` of the metadata document and the audience (RFC 8707) tokens
   * must carry.
   */
  resource: string;
  /** Issuers whose tokens are accepted (exact `iss` values). */
  issuers: string[];
  /** Advertised as `authorization_servers` (default: the issuers). */
  authorizationServers: string[];
  /** Scopes every request needs. */
  scopes: string[];
  /**
   * Further `aud` values accepted besides `resource`, for an IdP that cannot
   * put the resource URL in `aud` (e.g. an API identifier). Empty by default.
   */
  audiences: string[];
  /**
   * For IdPs whose access tokens carry no `aud` at all (Cognito without
   * resource binding): such a token is accepted only if its `client_id` is
   * one of these. Empty by default (a token without `aud` is refused).
   */
  clientIds: string[];
}

/** Splits a list setting on commas and whitespace. */
export function list(raw: string | undefined): string[] {
  return (raw ?? '').split(/[\s,]+/).filter((item) => item !== '');
}

/** Whether `url` is an https URL, or http on a loopback host (local development only). */
function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname));
}

/** Validates settings as a whole; throws with the offending setting's name. */
export function checkAuthSettings(settings: AuthSettings, names: { resource: string; issuers: string }): AuthSettings {
  let resource: URL;
  try {
    resource = new URL(settings.resource);
  } catch {
    throw new Error(`${names.resource} must be the endpoint's absolute URL when ${names.issuers} is set`);
  }
  if (!isSecureOrLoopback(resource) || resource.hash !== '') {
    throw new Error(`${names.resource} must be an https URL without a fragment (http only on 127.0.0.1/localhost)`);
  }
  for (const issuer of settings.issuers) {
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new Error(`${names.issuers} holds "${issuer}", which is not a URL`);
    }
    if (!isSecureOrLoopback(url))
      throw new Error(`${names.issuers} must hold https URLs (http only on 127.0.0.1/localhost), got "${issuer}"`);
  }
  return settings;
}
