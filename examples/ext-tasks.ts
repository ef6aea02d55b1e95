// ext-tasks on its own (no SDK client): a session over a small fetch-based port.
import { createApplicationInputHandler, createTaskSessionEndpointId, withTasks } from '@modelcontextprotocol/ext-tasks/client';

const url = process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'example', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

let id = 0;
const session = withTasks(
  {
    endpointId: await createTaskSessionEndpointId('example', { url }),
    taskCapabilities: { generation: 'v2', capabilities: {} },
    invalidated: false,
    async dispatch(request, options) {
      const { method, params = {} } = request as { method: string; params?: { name?: string; _meta?: object } };
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
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: { ...params._meta, ...envelope } } }),
        ...(options?.signal ? { signal: options.signal } : {}),
      });
      const reply = await response.json();
      return reply.error ? { kind: 'error', error: reply.error } : { kind: 'result', result: reply.result };
    },
    onServerRequest: () => () => {},
    onNotification: () => () => {},
    onInvalidated: () => () => {},
  },
  {
    onInputRequest: createApplicationInputHandler({
      elicitation: () => ({ action: 'accept', content: { approve: true } }),
      sampling: () => {
        throw new Error('no sampling here');
      },
      roots: () => ({ roots: [] }),
    }),
  },
);

const execution = await session.callTool('approval_gate', { action: 'deploy web@1.4.2' }, { task: { preference: 'require' } });
const { outcome } = await execution.settle();
console.log(outcome.status, outcome.status === 'completed' ? outcome.result.content : outcome);
await session.close();
