/**
 * `npm start`: the MCP Tasks server on this machine, no AWS account needed.
 *
 * Its variables (`PORT`, `LOCAL_*`: port, data directory, queue and sweep
 * settings, `LOCAL_AUTH=1` for tokens) are in `environment.ts`, the
 * functions' own (`TASKS_*`; `TASKS_TOOLSET` defaults to `product`, as deployed) in
 * `shared/config.ts`; docs/configuration.md lists both.
 *
 * Prints one line `MCP endpoint ready at <url>` once requests are served,
 * after the start-up recovery has re-enqueued what a previous run left
 * unfinished. SIGINT/SIGTERM stop everything (tasks still running after a
 * short drain are handed back) and exit 0.
 */
import { jsonLog } from '../../shared/log.ts';
import { META_KEYS, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../shared/wire.ts';
import { localStackEnvironment } from './environment.ts';
import { PrintedEvents } from './events.ts';
import { startLocalStack } from './stack.ts';

const SHUTDOWN_TIMEOUT_MS = 15_000;

let environment: ReturnType<typeof localStackEnvironment>;
let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  environment = localStackEnvironment(process.env);
  // Each lifecycle event is printed as one line, unless LOCAL_EVENTS=off.
  stack = await startLocalStack({ ...environment, events: environment.events ?? new PrintedEvents(), log: jsonLog() });
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
      [META_KEYS.protocolVersion]: PROTOCOL_VERSION,
      [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } },
    },
  },
});
console.log(`
Try it with the CLI (in this repository):
  npx mcp-tasks --url ${url} call long_computation '{"seconds":2}'
  npx mcp-tasks --url ${url} call approval_gate '{"action":"deploy"}'
  npx mcp-tasks --url ${url} call deploy_release '{"release":"web@1.4.2","regions":["eu-west-1","us-east-1"]}'

Or with the MCP Inspector's CLI (the pinned 2.x, run by the project's Node 22; it cannot answer questions):
  npm run inspector -- --cli ${url} --protocol-era modern --method tools/call --tool-name long_computation --tool-args-json '{"seconds":2}'

Or with curl:
  curl -s ${url} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \\
    -d '${discover}'

Tasks are kept in ${environment.dataDir}/dynamodb; queued messages are not (fauxqs is in memory),
so each start re-enqueues the work a previous run left unfinished (this one: ${stack.recovery.requeued} task(s)).
`);
if (environment.events !== 'off') {
  console.log(`Task lifecycle events (a question for a person, every end) are printed as "event: …" lines, where a deployed
stack sends them to EventBridge; LOCAL_EVENTS=off turns them off.
`);
}
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
console.log(`Console (your tasks in a browser) at ${url.replace(/\/mcp$/, '/console')}`);
console.log(`MCP endpoint ready at ${url} (started in ${Math.round(process.uptime() * 1000)} ms)`);
