/**
 * The local stack's MCP endpoint: the HTTP adapter in front of the MCP
 * function and, with auth on, the embedded authorization server and the
 * function's resource-server settings.
 */
import type { FunctionDeps } from '../../functions/lib/deps.ts';
import { createMcpHandler, type McpHandler } from '../../functions/mcp/app.ts';
import { METADATA_PATH } from '../../shared/auth/resource-server.ts';
import { list } from '../../shared/auth/settings.ts';
import { type Config, ENV, loadConfig } from '../../shared/config.ts';
import type { Log } from '../../shared/log.ts';
import type { LocalAuthServer } from './auth-server.ts';
import type { Cleanup } from './cleanup.ts';
import { localStateKey } from './data-dir.ts';
import { startHttpAdapter } from './http.ts';
import { LOCAL_AUTH_SCOPE, type LocalAuthOptions, type LocalStackOptions } from './options.ts';

/** What {@link startEndpoint} needs: the stack's port and auth options, and the functions' parts. */
export interface EndpointOptions {
  stack: Pick<LocalStackOptions, 'port' | 'auth'>;
  env: Record<string, string | undefined>;
  /** The functions' configuration; with auth on, the MCP function's adds the resource server's settings. */
  config: Config;
  tableName: string;
  queueUrl: string;
  deps: FunctionDeps;
  /** The data directory (resolved), where the `requestState` key is kept. */
  dataDir: string;
  log: Log;
}

/** The running endpoint. */
export interface LocalEndpoint {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  mcp: McpHandler;
  /** The MCP function's configuration. */
  config: Config;
  /** The embedded authorization server's issuer, when auth is on. */
  issuer?: string;
}

/**
 * Starts the authorization server (with auth on) and the HTTP adapter, then
 * composes the MCP function. With auth, the canonical resource is the
 * endpoint's own URL, known once the adapter is listening (the port may be
 * picked then): the MCP function is composed right after, before any request
 * is read. The local server answers loopback pages only (DNS rebinding), and
 * seals `requestState` with a key kept in the data directory.
 */
export async function startEndpoint(options: EndpointOptions, cleanup: Cleanup): Promise<LocalEndpoint> {
  const { env, log } = options;
  const { auth } = options.stack;
  let mcp: McpHandler | undefined;
  let resource = env[ENV.authResource] ?? '';
  const scopes = auth?.scopes ?? (env[ENV.authScopes] ? list(env[ENV.authScopes]) : [LOCAL_AUTH_SCOPE]);
  const toolScopes = [...options.deps.tools.values()].flatMap((tool) => tool.scopes ?? []);
  const authServer = auth ? await startAuthServer(auth, () => resource, [...scopes, ...toolScopes], log) : undefined;
  if (authServer) cleanup.push(authServer.close);
  const http = await startHttpAdapter({
    handler: (event) => mcp!(event),
    port: options.stack.port,
    ...(authServer ? { extraPaths: [METADATA_PATH, `${METADATA_PATH}/mcp`] } : {}),
    log,
  });
  cleanup.push(http.close);
  resource ||= http.url;
  const functionConfig = authServer ? resourceServerConfig(options, { issuer: authServer.issuer, resource, scopes }) : options.config;
  // Links given to people and models name this endpoint (unless the environment names another, e.g. a tunnel's).
  const config: Config = { ...functionConfig, publicUrl: functionConfig.publicUrl ?? http.url.replace(/\/mcp$/, '') };
  mcp = createMcpHandler({
    ...options.deps,
    config,
    originPolicy: { kind: 'loopback' },
    requestStateKey: localStateKey(options.dataDir),
  });
  return { url: http.url, mcp, config, ...(authServer ? { issuer: authServer.issuer } : {}) };
}

/** The embedded authorization server, issuing tokens for `resource` with the endpoint's and the tools' scopes. */
async function startAuthServer(auth: LocalAuthOptions, resource: () => string, scopes: string[], log: Log): Promise<LocalAuthServer> {
  // Loaded only when asked for: oidc-provider warns about the Node version on import, which
  // `npm start` without LOCAL_AUTH would print for nothing.
  const { startLocalAuthServer } = await import('./auth-server.ts');
  return startLocalAuthServer({
    port: auth.port ?? 0,
    resource,
    ...(auth.otherResources ? { otherResources: auth.otherResources } : {}),
    scopes: () => [...new Set(scopes)],
    log,
  });
}

/** The MCP function's configuration with auth on: the functions' own, plus the local authorization server as the one issuer. */
function resourceServerConfig(options: EndpointOptions, auth: { issuer: string; resource: string; scopes: string[] }): Config {
  return loadConfig({
    ...options.env,
    [ENV.tableName]: options.tableName,
    [ENV.queueUrl]: options.queueUrl,
    [ENV.toolset]: options.config.toolset,
    [ENV.redeliveryMs]: String(options.config.redeliveryMs),
    [ENV.authIssuers]: auth.issuer,
    [ENV.authResource]: auth.resource,
    [ENV.authScopes]: auth.scopes.join(' '),
  });
}
