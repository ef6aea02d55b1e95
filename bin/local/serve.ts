/**
 * The local stack as a terminal runs it (`npm start` here, `mcp-tasks start`
 * in a project): started from the variables, stopped by SIGINT/SIGTERM (tasks
 * still running after a short drain are handed back, exit 0), with a few
 * lines on how to try it. The last line is `MCP endpoint ready at <url>`, once
 * requests are served and the start-up recovery has re-enqueued what a
 * previous run left unfinished.
 */
import { join } from 'node:path';
import { jsonLog } from '../../shared/log.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { META_KEYS, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../shared/wire.ts';
import { AUTH_STATE_DIR } from './endpoint.ts';
import { localStackEnvironment } from './environment.ts';
import { PrintedEvents } from './events.ts';
import { startLocalStack } from './stack.ts';

const SHUTDOWN_TIMEOUT_MS = 15_000;

export interface ServeOptions {
  /** The tools to serve (a project's); default: the catalogue `TASKS_TOOLSET` names (this repository's). */
  tools?: readonly ToolDefinition[];
  /** How to try the endpoint at `url`: printed before the ready line. */
  tryIt(url: string): string;
}

/** Starts the stack from `process.env` and serves until a signal stops it; exits the process with 1 if it cannot start. */
export async function serveLocally(options: ServeOptions): Promise<void> {
  let environment: ReturnType<typeof localStackEnvironment>;
  let stack: Awaited<ReturnType<typeof startLocalStack>>;
  try {
    environment = localStackEnvironment(process.env);
    // Each lifecycle event is printed as one line, unless LOCAL_EVENTS=off.
    stack = await startLocalStack({
      ...environment,
      ...(options.tools ? { tools: options.tools } : {}),
      events: environment.events ?? new PrintedEvents(),
      log: jsonLog(),
    });
  } catch (error) {
    console.error(`Local stack failed to start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  stopOnSignals(stack.close);
  console.log(`\n${options.tryIt(stack.url)}`);
  console.log(`Or with curl:
  curl -s ${stack.url} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \\
    -d '${discoverRequest()}'

Tasks are kept in ${environment.dataDir}/dynamodb; queued messages are not (fauxqs is in memory),
so each start re-enqueues the work a previous run left unfinished (this one: ${stack.recovery.requeued} task(s)).
`);
  if (environment.events !== 'off') {
    console.log(`Task lifecycle events (a question for a person, every end) are printed as "event: …" lines, where a deployed
stack sends them to EventBridge; LOCAL_EVENTS=off turns them off.
`);
  }
  if (stack.issuer) {
    console.log(`Auth is ON: requests need an access token from the authorization server at ${stack.issuer}
(any login and password on its login page; clients register themselves, RFC 7591). Sign the CLI in
first (the browser opens; the commands above then use the kept token):
  npx mcp-tasks --url ${stack.url} login
The resource metadata clients start from:
  curl -s ${new URL('/.well-known/oauth-protected-resource/mcp', stack.url).href}
Its keys, registered clients and sign-ins are kept in ${join(environment.dataDir, AUTH_STATE_DIR)}, so a login lasts across
restarts on the same ports; delete that folder (with the stack stopped) to sign everyone out.
`);
    console.log(`Authorization server ready at ${stack.issuer}`);
  }
  console.log(`Console (your tasks in a browser) at ${stack.url.replace(/\/mcp$/, '/console')}`);
  console.log(`MCP endpoint ready at ${stack.url} (started in ${Math.round(process.uptime() * 1000)} ms)`);
}

function stopOnSignals(close: () => Promise<void>): void {
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
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
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

function discoverRequest(): string {
  return JSON.stringify({
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
}
