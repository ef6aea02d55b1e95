/**
 * `npm start`: the MCP Tasks server on this machine, no AWS account needed.
 *
 *   PORT            HTTP port on 127.0.0.1 (default 3000; 0 picks a free one)
 *   LOCAL_DATA_DIR  where the task table is kept (default `.data`)
 *   LOCAL_SWEEP_INTERVAL_MS  how often the sweeper runs (default 30 s)
 *   LOCAL_VISIBILITY_TIMEOUT_SECONDS, LOCAL_MAX_RECEIVE_COUNT
 *                   the task queue's redelivery settings (default 30 s, 3)
 *   LOCAL_SETTINGS_FILE  tools' settings and secrets (default `settings.local.json`;
 *                   `<TOOL>_<KEY>` variables take precedence, see settings.ts)
 *   TASKS_*         the functions' own settings (see shared/config.ts);
 *                   TASKS_TOOLSET defaults to `all` here
 *   LOCAL_AUTH=1    require OAuth access tokens, issued by an authorization
 *                   server embedded in the stack (default: open endpoint)
 *   LOCAL_AUTH_PORT that server's port on 127.0.0.1 (default PORT + 1, or a
 *                   free one when PORT is 0)
 *   LOCAL_AUTH_OTHER_RESOURCES  further resource URLs (comma-separated) that
 *                   server issues tokens for: tokens this endpoint must refuse
 *
 * Prints one line `MCP endpoint ready at <url>` once requests are served,
 * after the start-up recovery has re-enqueued what a previous run left
 * unfinished. SIGINT/SIGTERM stop everything (tasks still running after a
 * short drain are handed back) and exit 0.
 */
import { jsonLog } from '../../shared/log.ts';
import { startLocalStack } from './stack.ts';

const SHUTDOWN_TIMEOUT_MS = 15_000;

const port = Number(process.env.PORT || 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, got "${process.env.PORT}"`);
  process.exit(1);
}

const authOn = ['1', 'true', 'on'].includes((process.env.LOCAL_AUTH ?? '').toLowerCase());
const authPort = process.env.LOCAL_AUTH_PORT ? Number(process.env.LOCAL_AUTH_PORT) : port === 0 ? 0 : port + 1;

let stack;
try {
  stack = await startLocalStack({
    port,
    dataDir: process.env.LOCAL_DATA_DIR || '.data',
    ...(process.env.LOCAL_SETTINGS_FILE ? { settingsFile: process.env.LOCAL_SETTINGS_FILE } : {}),
    ...(process.env.LOCAL_SWEEP_INTERVAL_MS ? { sweepIntervalMs: Number(process.env.LOCAL_SWEEP_INTERVAL_MS) } : {}),
    ...(process.env.LOCAL_VISIBILITY_TIMEOUT_SECONDS ? { visibilityTimeoutSeconds: Number(process.env.LOCAL_VISIBILITY_TIMEOUT_SECONDS) } : {}),
    ...(process.env.LOCAL_MAX_RECEIVE_COUNT ? { maxReceiveCount: Number(process.env.LOCAL_MAX_RECEIVE_COUNT) } : {}),
    ...(authOn ? { auth: { port: authPort, otherResources: (process.env.LOCAL_AUTH_OTHER_RESOURCES ?? '').split(',').filter(Boolean) } } : {}),
    log: jsonLog(),
  });
} catch (error) {
  console.error(`Local stack failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const { url, close, issuer } = stack;

let stopping = false;
function shutdown(signal: NodeJS.Signals): void {
  // npm forwards the terminal's SIGINT that the child also received: stop once.
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping the local stack`);
  setTimeout(() => {
    console.error('Local stack did not stop in time; exiting');
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS).unref();
  close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`Error while stopping: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

const discover = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    },
  },
});
console.log(`
Try it with the CLI (in this repository):
  npx mcp-tasks --url ${url} call slow_compute '{"seconds":2}'
  npx mcp-tasks --url ${url} call approval_gate '{"action":"deploy"}'

Or with the MCP Inspector's CLI (the pinned 2.x, run by the project's Node 22; it cannot answer questions):
  npm run inspector -- --cli ${url} --protocol-era modern --method tools/call --tool-name slow_compute --tool-args-json '{"seconds":2}'

Or with curl:
  curl -s ${url} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \\
    -d '${discover}'

Tasks are kept in ${process.env.LOCAL_DATA_DIR || '.data'}/dynamodb; queued messages are not (fauxqs is in memory),
so each start re-enqueues the work a previous run left unfinished (this one: ${stack.recovery.requeued} task(s)).
`);
if (issuer) {
  console.log(`Auth is ON: requests need an access token from the authorization server at ${issuer}
(any login and password on its login page; clients register themselves, RFC 7591). Sign the CLI in
first (the browser opens; the commands above then use the kept token):
  npx mcp-tasks --url ${url} login
The resource metadata clients start from:
  curl -s ${new URL('/.well-known/oauth-protected-resource/mcp', url).href}
`);
  console.log(`Authorization server ready at ${issuer}`);
}
console.log(`MCP endpoint ready at ${url} (started in ${Math.round(process.uptime() * 1000)} ms)`);
