// SDK v2 client + ext-tasks: run approval_gate as a task and answer its question.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionEndpointId,
  createTaskSessionFromClient,
  type RawClientDispatch,
} from '@modelcontextprotocol/ext-tasks/client';

const url = process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp';
const client = new Client({ name: 'example', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

// The SDK's codec rejects task results, so ext-tasks sends tools/call and tasks/* itself, through this.
let id = 0;
const rawDispatch: RawClientDispatch = async (request, options) => {
  const { method, params } = request as { method: string; params: { name?: string } };
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(params.name ? { 'Mcp-Name': params.name } : {}),
      ...options?.context?.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++id, ...(request as object) }),
    ...(options?.signal ? { signal: options.signal } : {}),
  });
  const reply = await response.json();
  return reply.error ? { kind: 'error', error: reply.error } : { kind: 'result', result: reply.result };
};

const session = createTaskSessionFromClient(client, {
  endpointId: await createTaskSessionEndpointId('example', { url }),
  rawDispatch,
  v2RequestFraming: {
    protocolVersion: '2026-07-28',
    clientInfo: { name: 'example', version: '1.0.0' },
    clientCapabilities: { elicitation: {} },
  },
  onInputRequest: createApplicationInputHandler({
    elicitation: (request) => {
      console.log('asked:', request.params.message);
      return { action: 'accept', content: { approve: true } };
    },
    sampling: () => {
      throw new Error('no sampling here');
    },
    roots: () => ({ roots: [] }),
  }),
});

const execution = await session.callTool('approval_gate', { action: 'deploy web@1.4.2' }, { task: { preference: 'require' } });
const { outcome } = await execution.settle();
console.log(outcome.status, outcome.status === 'completed' ? outcome.result.content : outcome);
await session.close();
await client.close();
