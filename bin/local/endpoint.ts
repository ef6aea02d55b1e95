/**
 * The local stack's MCP endpoint: the HTTP adapter in front of the MCP
 * function and, with auth on, the embedded authorization server and the
 * function's resource-server settings.
 */

import { join } from 'node:path';
import { createCallbacksHandler } from '../../functions/callbacks/app.ts';
import { type ConsoleHandler, createConsoleHandler } from '../../functions/console/app.ts';
import type { FunctionDeps } from '../../functions/lib/deps.ts';
import { createMcpHandler, type McpHandler } from '../../functions/mcp/app.ts';
import { METADATA_PATH } from '../../shared/auth/resource-server.ts';
import { list } from '../../shared/auth/settings.ts';
import { type Config, ENV, loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { CALLBACKS_PATH, CONSOLE_PATH, DeploymentLinks } from '../../shared/links.ts';
import type { Log } from '../../shared/log.ts';
import type { LocalAuthServer } from './auth-server.ts';
import type { Cleanup } from './cleanup.ts';
import { localStackSecret } from './data-dir.ts';
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
  /** The data directory (resolved), where the `requestState` key and the authorization server's state are kept. */
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
  /** The console function, served under `/console`. */
  console: ConsoleHandler;
  /** The embedded authorization server's issuer, when auth is on. */
  issuer?: string;
}

/** The folder of the data directory where the embedded authorization server keeps its keys, clients and grants. */
export const AUTH_STATE_DIR = 'auth';

/** The console's client at the embedded authorization server (a public client: code + PKCE). */
export const LOCAL_CONSOLE_CLIENT_ID = 'mcp-tasks-console';

/**
 * Starts the HTTP adapter, then (with auth on) the authorization server, and
 * composes the MCP and console functions. Both depend on the endpoint's own
 * URL, known once the adapter is listening (the port may be picked then):
 * the canonical resource, the links given to people, the console's callback
 * registered at the authorization server. The functions are composed right
 * after, before any request is read. The local server answers loopback pages
 * only (DNS rebinding), and seals `requestState` and the console's cookies
 * with keys from the secret kept in the data directory.
 */
export async function startEndpoint(options: EndpointOptions, cleanup: Cleanup): Promise<LocalEndpoint> {
  const { env, log } = options;
  const { auth } = options.stack;
  let mcp: McpHandler | undefined;
  let consoleFunction: ConsoleHandler | undefined;
  // No principal and no JWT on `/callbacks/*`: the token in the path is the capability.
  const callbacks = createCallbacksHandler({ ...options.deps, keys: options.deps.keys ?? purposeKeys(localStackSecret(options.dataDir)) });
  const http = await startHttpAdapter({
    handler: (event) => mcp!(event),
    port: options.stack.port,
    ...(auth ? { extraPaths: [METADATA_PATH, `${METADATA_PATH}/mcp`] } : {}),
    routes: [
      { path: CONSOLE_PATH, prefix: true, handler: (event) => consoleFunction!(event) },
      { path: CALLBACKS_PATH, prefix: true, handler: callbacks },
    ],
    log,
  });
  cleanup.push(http.close);
  // Links given to people and models name this endpoint (unless the environment names another, e.g. a tunnel's).
  const publicUrl = options.config.publicUrl ?? http.url.replace(/\/mcp$/, '');
  const links = new DeploymentLinks(publicUrl);
  const resource = env[ENV.authResource] || http.url;
  const scopes = auth?.scopes ?? (env[ENV.authScopes] ? list(env[ENV.authScopes]) : [LOCAL_AUTH_SCOPE]);
  const toolScopes = [...options.deps.tools.values()].flatMap((tool) => tool.scopes ?? []);
  const approverScopes = options.config.approvers.scopes;
  const authServer = auth
    ? await startAuthServer(
        auth,
        { resource, scopes: [...scopes, ...toolScopes], consoleCallback: links.consoleCallback!, approverScopes },
        options.dataDir,
        log,
      )
    : undefined;
  if (authServer) cleanup.push(authServer.close);
  const functionConfig = authServer ? resourceServerConfig(options, { issuer: authServer.issuer, resource, scopes }) : options.config;
  // The MCP function knows the console's sign-in, as deployed: where a task's page identifies the person.
  const signIn = authServer ? { consoleIssuer: authServer.issuer, consoleClientId: LOCAL_CONSOLE_CLIENT_ID } : {};
  const config: Config = { ...functionConfig, publicUrl, ...signIn };
  const keys = purposeKeys(localStackSecret(options.dataDir));
  mcp = createMcpHandler({
    ...options.deps,
    config,
    originPolicy: { kind: 'loopback' },
    stackSecret: localStackSecret(options.dataDir),
  });
  consoleFunction = createConsoleHandler({
    ...options.deps,
    config: { ...config, ...(authServer ? { consoleIssuer: authServer.issuer, consoleClientId: LOCAL_CONSOLE_CLIENT_ID } : {}) },
    links,
    keys,
  });
  return { url: http.url, mcp, console: consoleFunction, config, ...(authServer ? { issuer: authServer.issuer } : {}) };
}

/**
 * The embedded authorization server, issuing tokens for `resource` with the
 * endpoint's and the tools' scopes; it keeps its keys, clients and grants
 * under `<dataDir>/auth`.
 */
async function startAuthServer(
  auth: LocalAuthOptions,
  {
    resource,
    scopes,
    consoleCallback,
    approverScopes,
  }: { resource: string; scopes: string[]; consoleCallback: string; approverScopes: string[] },
  dataDir: string,
  log: Log,
): Promise<LocalAuthServer> {
  // Loaded only when asked for: oidc-provider warns about the Node version on import, which
  // `npm start` without LOCAL_AUTH would print for nothing.
  const { startLocalAuthServer } = await import('./auth-server.ts');
  return startLocalAuthServer({
    port: auth.port ?? 0,
    resource: () => resource,
    publicClients: [{ clientId: LOCAL_CONSOLE_CLIENT_ID, redirectUris: [consoleCallback] }],
    ...(auth.otherResources ? { otherResources: auth.otherResources } : {}),
    ...(auth.groups ? { groups: auth.groups } : {}),
    publicClientScopes: approverScopes,
    scopes: () => [...new Set(scopes)],
    stateDir: join(dataDir, AUTH_STATE_DIR),
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
