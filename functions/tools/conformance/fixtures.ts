/**
 * The fixture tools the MCP conformance suite's task and stateless scenarios
 * call. They exercise the protocol, not any product behaviour, and are only
 * served when the toolset includes `conformance`.
 */
import * as z from 'zod';
import { defineTool, ToolError, ToolProtocolError, type ToolDefinition } from '../../../shared/runtime/tool.ts';
import { sleep } from '../../../shared/runtime/sleep.ts';

const greet = defineTool({
  name: 'greet',
  description: 'Greets someone by name (always synchronous).',
  inputSchema: z.object({ name: z.string().default('World') }),
  execution: 'sync',
  handler: async ({ name }) => `Hello, ${name}!`,
});

const slowCompute = defineTool({
  name: 'slow_compute',
  description: 'Waits for the given number of seconds, then answers; runs as a task when the client supports tasks.',
  inputSchema: z.object({ seconds: z.number().min(0).max(3600).default(1), label: z.string().optional() }),
  execution: 'optional',
  inline: ({ seconds }) => seconds === 0,
  handler: async ({ seconds, label }, ctx) => {
    await sleep(seconds * 1000, ctx.signal);
    return `Computed ${label ?? 'result'} after ${seconds}s`;
  },
});

const failingJob = defineTool({
  name: 'failing_job',
  description: 'A task-only job that ends with a tool error (isError: true).',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async () => {
    throw new ToolError('The job failed: simulated tool error');
  },
});

const protocolErrorJob = defineTool({
  name: 'protocol_error_job',
  description: 'A task-only job whose underlying request fails with a JSON-RPC error.',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async () => {
    throw new ToolProtocolError(-32603, 'Simulated protocol error');
  },
});

const confirmDelete = defineTool({
  name: 'confirm_delete',
  description: 'Asks the user to confirm before deleting a file (one elicitation).',
  inputSchema: z.object({ filename: z.string().default('example.txt') }),
  execution: 'task',
  handler: async ({ filename }, ctx) => {
    const answer = await ctx.elicit('confirm', {
      message: `Delete ${filename}?`,
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm deletion' } }, required: ['confirm'] },
    });
    const confirmed = answer.action === 'accept' && answer.content?.['confirm'] !== false;
    return confirmed ? `Deleted ${filename}` : `Kept ${filename}`;
  },
});

const multiInput = defineTool({
  name: 'multi_input',
  description: 'Asks two questions at once (two outstanding input requests).',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_args, ctx) => {
    const [name, color] = await Promise.all([
      ctx.elicit('name', {
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      }),
      ctx.elicit('color', {
        message: 'What is your favourite colour?',
        requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
      }),
    ]);
    return `name=${String(name.content?.['name'] ?? '')}, color=${String(color.content?.['color'] ?? '')}`;
  },
});

const askUserName = (ctx: Parameters<ToolDefinition['handler']>[1]) =>
  ctx.elicit('user_name', {
    message: 'What is your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  });

const toolWithTask = defineTool({
  name: 'test_tool_with_task',
  description: 'Gathers a name through a multi-round-trip request, then continues as a task.',
  inputSchema: z.object({}),
  execution: 'task',
  prepare: async (_args, ctx) => {
    await askUserName(ctx);
  },
  handler: async (_args, ctx) => {
    const answer = await askUserName(ctx);
    return `Hello, ${String(answer.content?.['name'] ?? 'stranger')}!`;
  },
});

/** Needs sampling, which the stateless scenario never declares: answers `-32021`. */
const missingCapability = defineTool({
  name: 'test_missing_capability',
  description: 'Asks the client for a sampling completion (requires the sampling capability).',
  inputSchema: z.object({}),
  execution: 'sync',
  handler: async (_args, ctx) => {
    const reply = await ctx.sample('completion', {
      messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }],
      maxTokens: 20,
    });
    return JSON.stringify(reply);
  },
});

/** Elicits inline: the answer is an `input_required` result, never a server-to-client request. */
const streamingElicitation = defineTool({
  name: 'test_streaming_elicitation',
  description: 'Asks for a value through elicitation within the request.',
  inputSchema: z.object({}),
  execution: 'sync',
  handler: async (_args, ctx) => {
    const answer = await ctx.elicit('value', {
      message: 'Enter a value',
      requestedSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
    });
    return `Received ${String(answer.content?.['value'] ?? answer.action)}`;
  },
});

/** Logs nothing (no log level was requested) and answers at once. */
const loggingTool = defineTool({
  name: 'test_logging_tool',
  description: 'Answers at once; would log only when the client asks for a log level.',
  inputSchema: z.object({}),
  execution: 'sync',
  handler: async () => 'Done',
});

/**
 * For `input-required-result-tampered-state`: asks one question inline, so its
 * `input_required` result carries a sealed `requestState`; a round echoing a
 * tampered state is refused with `-32602` before the tool runs again.
 */
const tamperedState = defineTool({
  name: 'test_input_required_result_tampered_state',
  description: 'Asks for a confirmation through a multi-round-trip request whose requestState is integrity-protected.',
  inputSchema: z.object({}),
  execution: 'sync',
  handler: async (_args, ctx) => {
    const answer = await ctx.elicit('confirm', {
      message: 'Proceed?',
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    });
    return answer.action === 'accept' ? 'Confirmed' : 'Not confirmed';
  },
});

export const conformanceTools: ToolDefinition[] = [
  greet,
  slowCompute,
  failingJob,
  protocolErrorJob,
  confirmDelete,
  multiInput,
  toolWithTask,
  missingCapability,
  streamingElicitation,
  loggingTool,
  tamperedState,
];
