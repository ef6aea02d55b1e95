/**
 * The CLI's client and a tool with an `x-mcp-header` parameter: refused
 * `-32020` for want of its `Mcp-Param-*` header, it reads the tool's schema
 * once and sends the call again with the header, as the protocol advises a
 * client that had not listed the tools. Against the endpoint in process.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { defineTool, type ToolDefinition } from '#tool';
import { McpError, TasksClient } from '../../../bin/cli/client.ts';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { createEndpoint } from '../../../shared/protocol/endpoint.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { HEADER_MISMATCH } from '../../../shared/wire.ts';
import { storePolicy } from '../../support/factories.ts';

const regional = defineTool({
  name: 'regional',
  description: 'Runs in a region.',
  inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
  execution: 'sync',
  handler: async ({ region }) => `Ran in ${region}`,
});

/** A client of an in-process endpoint serving `tools`, and every request it sent (method, and its Mcp-Param-Region header). */
function clientOf(tools: ToolDefinition[]) {
  const key = randomBytes(32);
  const endpoint = createEndpoint({
    store: new InMemoryTaskStore(storePolicy()),
    queue: new InMemoryTaskQueue(),
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    config: DEFAULT_SETTINGS,
    log: () => {},
    stackSecret: async () => key,
    originPolicy: { kind: 'loopback' },
  });
  const sent: string[] = [];
  const client = new TasksClient({
    url: 'http://127.0.0.1:3000/mcp',
    fetch: async (url, init) => {
      const request = new Request(url, init);
      sent.push(`${request.headers.get('mcp-method')} ${request.headers.get('mcp-param-region') ?? '-'}`);
      return endpoint.fetch(request, 'alice');
    },
  });
  return { client, sent };
}

describe('the CLI client and Mcp-Param-* headers', () => {
  it('sends the header after the refusal, Base64 where the value needs it, and gets the answer', async () => {
    const { client, sent } = clientOf([regional]);
    const outcome = await client.callTool('regional', { region: 'Zürich' });
    assert.equal(outcome.kind, 'result');
    const result = outcome.kind === 'result' ? (outcome.result as { content: Array<{ text: string }> }) : undefined;
    assert.equal(result?.content[0]?.text, 'Ran in Zürich');
    assert.deepEqual(sent, ['tools/call -', 'tools/list -', 'tools/call =?base64?WsO8cmljaA==?=']);
  });

  it('sends nothing more for an argument left out; a request with a wrong header of its own is refused as it is', async () => {
    const { client, sent } = clientOf([regional]);
    const noArgument = await client.callTool('regional', {});
    assert.equal(noArgument.kind, 'result', 'the arguments check answers it (a tool error), no header needed');
    assert.deepEqual(sent, ['tools/call -']);
    sent.length = 0;
    await assert.rejects(
      client.request('tools/call', { name: 'regional', arguments: { region: 'eu' } }, { headers: { 'Mcp-Param-Region': 'us' } }),
      (error: unknown) => error instanceof McpError && error.code === HEADER_MISMATCH,
    );
    assert.deepEqual(sent, ['tools/call us'], 'a request sent with its own headers is not retried');
  });
});
