/** `mcp-tasks login`: a token for the endpoint, from a browser sign-in or client credentials, kept for later commands. */
import { CommanderError } from 'commander';
import type { GlobalOptions } from './command.ts';
import { DEFAULT_CALLBACK_PORT, loginInBrowser, loginWithClientCredentials, openBrowser } from './login.ts';
import { LoginStore, type StoredLogin } from './login-store.ts';

export interface LoginOptions {
  clientCredentials?: boolean;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  callbackPort?: string;
  browser: boolean;
}

export async function login(globals: GlobalOptions, options: LoginOptions): Promise<void> {
  let result: StoredLogin;
  if (options.clientCredentials) {
    if (!options.clientId || !options.clientSecret) {
      throw new CommanderError(
        2,
        'mcp-tasks.login',
        'Client credentials need --client-id (or MCP_TASKS_CLIENT_ID) and MCP_TASKS_CLIENT_SECRET',
      );
    }
    result = await loginWithClientCredentials(globals.url, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      ...(options.scope ? { scope: options.scope } : {}),
    });
  } else {
    const port = options.callbackPort === undefined ? DEFAULT_CALLBACK_PORT : Number(options.callbackPort);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CommanderError(2, 'mcp-tasks.login', '--callback-port must be a port number');
    result = await loginInBrowser(globals.url, {
      ...(options.clientId ? { clientId: options.clientId } : {}),
      ...(options.scope ? { scope: options.scope } : {}),
      callbackPort: port,
      open: (url) => {
        process.stderr.write(`Sign in in your browser; if it does not open, visit:\n${url}\n`);
        if (options.browser) openBrowser(url);
      },
    });
  }
  const store = new LoginStore();
  await store.put(globals.url, result);
  const summary = {
    endpoint: globals.url,
    issuer: result.issuer,
    clientId: result.clientId,
    grant: result.grant,
    scope: result.scope ?? null,
    expiresAt: result.expiresAt ?? null,
  };
  if (globals.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else process.stderr.write(`Logged in to ${globals.url} through ${result.issuer} (token kept in ${store.file})\n`);
}
