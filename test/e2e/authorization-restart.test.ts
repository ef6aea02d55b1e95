/**
 * A sign-in lasts across restarts of the local stack with auth on
 * (`LOCAL_AUTH=1`, the same `PORT` and `LOCAL_AUTH_PORT`, the same data
 * directory): the embedded authorization server keeps its keys, the CLI's
 * dynamically registered client, the grant, the session and the refresh
 * token under `<dataDir>/auth`. The real CLI logs in through the (scripted)
 * browser; after a restart its saved token is taken and a token refresh
 * succeeds. Deleting the folder signs everyone out.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { StoredLogin } from '../../bin/cli/login-store.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { authorizeInBrowser } from '../support/oauth.ts';

const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));

let dataDir: string;
let configDir: string;
let ports: { mcp: number; auth: number };
let stack: LocalStackProcess | undefined;
/** Everything the stack printed, over all its runs. */
let printed = '';

/** A free port on 127.0.0.1 (taken from the system, then let go), to start every run of the stack on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** (Re)starts the stack on the same ports and data directory, as `LOCAL_AUTH=1 npm start` restarted. */
async function start(): Promise<LocalStackProcess> {
  stack = await startLocalStackProcess({
    dataDir,
    env: { LOCAL_AUTH: '1', PORT: String(ports.mcp), LOCAL_AUTH_PORT: String(ports.auth), TASKS_TOOLSET: 'test' },
  });
  return stack;
}

async function stop(): Promise<void> {
  await stack?.stop();
  printed += stack?.output() ?? '';
  stack = undefined;
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, MCP_TASKS_URL: stack!.url, MCP_TASKS_CONFIG_DIR: configDir }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** `mcp-tasks login` in the browser (PKCE, dynamic registration, the loopback answer), as `login` on the login page. */
async function browserLogin(login: string): Promise<void> {
  const child = spawn(process.execPath, [BIN, 'login', '--no-browser', '--callback-port', '0'], {
    env: { ...process.env, MCP_TASKS_URL: stack!.url, MCP_TASKS_CONFIG_DIR: configDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const authorizationUrl = await new Promise<URL>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sign-in URL: ${stderr}`)), 30_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk;
        const match = /^(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)$/m.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(new URL(match[1]!));
        }
      });
    });
    const redirectUri = authorizationUrl.searchParams.get('redirect_uri')!;
    const answer = await authorizeInBrowser(authorizationUrl, redirectUri, login);
    assert.equal((await fetch(`${redirectUri}?${answer}`)).status, 200);
    assert.equal(await exited, 0, stderr);
  } finally {
    child.kill();
  }
}

async function savedLogin(): Promise<StoredLogin> {
  const all = JSON.parse(await readFile(join(configDir, 'logins.json'), 'utf8')) as Record<string, StoredLogin>;
  return all[stack!.url]!;
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-auth-restart-'));
  configDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-auth-restart-login-'));
  ports = { mcp: await freePort(), auth: await freePort() };
  await start();
});

after(async () => {
  await stop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(configDir, { recursive: true, force: true });
});

describe('LOCAL_AUTH=1 npm start, restarted', () => {
  it('takes the token saved before the restart, and refreshes it; deleting <dataDir>/auth signs out', { timeout: 300_000 }, async () => {
    await browserLogin('ada');
    const before = await savedLogin();
    assert.ok(before.refreshToken, 'the CLI has a refresh token');
    const first = await cli(['call', 'slow_compute', '{"seconds":0.1,"label":"before"}']);
    assert.equal(first.code, 0, first.stderr);

    await stop();
    await start();
    const saved = await cli(['call', 'slow_compute', '{"seconds":0.1,"label":"after"}']);
    assert.equal(saved.code, 0, `${saved.stderr}\n${stack!.output()}`);
    assert.equal(saved.stdout, 'Computed after after 0.1s\n');
    assert.equal((await savedLogin()).accessToken, before.accessToken, 'the saved token itself was taken');

    // The token is due: the CLI refreshes it at the restarted server, with the client it registered before.
    await writeFile(join(configDir, 'logins.json'), JSON.stringify({ [stack!.url]: { ...(await savedLogin()), expiresAt: 0 } }));
    const refreshed = await cli(['call', 'slow_compute', '{"seconds":0.1,"label":"refreshed"}']);
    assert.equal(refreshed.code, 0, `${refreshed.stderr}\n${stack!.output()}`);
    const renewed = await savedLogin();
    assert.notEqual(renewed.accessToken, before.accessToken, 'a new access token');
    assert.equal(renewed.clientId, before.clientId);
    assert.ok(renewed.expiresAt! > Date.now() / 1000);

    await stop();
    const auth = join(dataDir, 'auth');
    assert.equal((await stat(auth)).mode & 0o777, 0o700);
    const entries = await readdir(auth, { recursive: true });
    for (const model of ['Client', 'Grant', 'Session', 'RefreshToken'])
      assert.ok(entries.includes(model), `${model}: ${entries.join(', ')}`);
    for (const entry of entries) {
      const mode = (await stat(join(auth, entry))).mode & 0o777;
      assert.equal(mode, entry.includes('/') || entry === 'keys.json' ? 0o600 : 0o700, entry);
    }

    // The reset: without the folder, the saved login is refused.
    await rm(auth, { recursive: true });
    await start();
    const signedOut = await cli(['call', 'slow_compute', '{"seconds":0.1}']);
    assert.equal(signedOut.code, 1, signedOut.stderr);
    assert.match(signedOut.stderr, /HTTP 401.*mcp-tasks login/);

    await stop();
    for (const secret of [before.accessToken, before.refreshToken!, renewed.accessToken, renewed.refreshToken!])
      assert.ok(!printed.includes(secret), 'no token is printed by the stack');
  });
});
