// MCP TypeScript SDK v1 (2025-11-25 tasks): run long_computation as a task to its result.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const client = new Client({ name: 'example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp')));
const stream = client.experimental.tasks.callToolStream({ name: 'long_computation', arguments: { seconds: 2 } }, CallToolResultSchema, {
  task: {},
});
for await (const message of stream) {
  if (message.type === 'taskStatus') console.log(message.task.status);
  if (message.type === 'result') console.log(message.result.content);
  if (message.type === 'error') throw message.error;
}
await client.close();
