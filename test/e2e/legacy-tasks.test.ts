/**
 * 2025-11-25 task clients (SEP-1686 as shipped) against the local stack as
 * `npm start` runs it: the MCP TypeScript SDK v1 client (1.32.x) and its
 * `experimental.tasks.callToolStream`, which needs the server's `tasks`
 * capability and each tool's `execution.taskSupport`, asks for a task with
 * `params.task`, polls `tasks/get` and reads the result with `tasks/result`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { sleep } from '../support/wait.ts';

let stack: LocalStackProcess;
let client: Client;

before(async () => {
  // The suite's fixtures (greet, slow_compute, failing_job) switched on beside the product tools.
  stack = await startLocalStackProcess({ env: { TASKS_TOOLSET: 'all' } });
  client = new Client({ name: 'e2e-sdk-v1', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.url)));
});

after(async () => {
  await client?.close();
  await stack?.stop();
});

type StreamMessage = {
  type: string;
  task?: { taskId: string; status: string; pollInterval?: number };
  result?: Record<string, unknown>;
  error?: unknown;
};

async function collect(stream: AsyncIterable<unknown>): Promise<StreamMessage[]> {
  const messages: StreamMessage[] = [];
  for await (const message of stream) messages.push(message as StreamMessage);
  return messages;
}

function explain(messages: StreamMessage[]): string {
  return `${JSON.stringify(messages)}\nstack log (tail):\n${stack.output().split('\n').slice(-20).join('\n')}`;
}

describe('MCP TypeScript SDK v1 client, 2025-11-25 tasks', () => {
  it('initialize declares the tasks capability; tools/list gives each tool its execution.taskSupport', async () => {
    assert.equal(client.getServerVersion()?.name, 'mcp-tasks-serverless');
    assert.deepEqual(client.getServerCapabilities()?.tasks, { cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    assert.equal(support['greet'], 'forbidden');
    assert.equal(support['slow_compute'], 'optional');
    // A task-only tool the fallback serves is optional (a plain call gets the fallback); one that opts out stays required.
    assert.equal(support['approval_gate'], 'optional');
    assert.equal(support['failing_job'], 'required');
  });

  it('callToolStream runs slow_compute for 25 s (past the 20 s synchronous budget) to its result; tasks/result waits a bounded time', {
    timeout: 90_000,
  }, async () => {
    const started = Date.now();
    const stream = client.experimental.tasks.callToolStream(
      { name: 'slow_compute', arguments: { seconds: 25, label: 'legacy-long' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 }, timeout: 60_000 },
    );
    const messages: StreamMessage[] = [];
    let early: Promise<unknown> | undefined;
    for await (const message of stream) {
      messages.push(message as StreamMessage);
      // While it runs, a tasks/result held by another request answers after the bound with a retryable error.
      if ((message as StreamMessage).type === 'taskCreated') {
        const taskId = (message as StreamMessage).task!.taskId;
        early = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 60_000 }).then(
          () => assert.fail('tasks/result answered a result before the task ended'),
          (error: unknown) => ({ error, after: Date.now() - started }),
        );
      }
    }
    const types = messages.map((message) => message.type);
    assert.equal(types[0], 'taskCreated', explain(messages));
    assert.equal(types.at(-1), 'result', explain(messages));
    assert.ok(types.includes('taskStatus'));
    const statuses = messages.filter((message) => message.type === 'taskStatus').map((message) => message.task!.status);
    assert.equal(statuses.at(-1), 'completed');
    assert.ok(
      statuses.slice(0, -1).every((status) => status === 'working'),
      statuses.join(','),
    );
    const result = messages.at(-1)!.result!;
    assert.deepEqual(result['content'], [{ type: 'text', text: 'Computed legacy-long after 25s' }]);
    const taskId = messages[0]!.task!.taskId;
    assert.deepEqual((result['_meta'] as Record<string, unknown>)['io.modelcontextprotocol/related-task'], { taskId });
    assert.equal('resultType' in result, false, 'no 2026-07-28 vocabulary on a 2025-11-25 wire');
    assert.ok(Date.now() - started >= 25_000);

    const held = (await early) as { error: unknown; after: number };
    assert.ok(held.error instanceof McpError, String(held.error));
    assert.equal(held.error.code, -32603);
    assert.deepEqual(held.error.data, { taskId, status: 'working', retry: true });
    assert.ok(held.after >= 19_000 && held.after < 25_000, `tasks/result answered after ${held.after} ms`);

    // tasks/cancel on an ended task: -32602 (that revision's rule); the task stays completed.
    await assert.rejects(
      client.experimental.tasks.cancelTask(taskId),
      (error: unknown) => error instanceof McpError && error.code === -32602,
    );
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'completed');
  });

  it('tasks/cancel on a running task answers the task, which ends cancelled', { timeout: 30_000 }, async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 120 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    assert.equal(created.task.status, 'working');
    await sleep(1_500);
    const answered = await client.experimental.tasks.cancelTask(taskId);
    assert.equal(answered.taskId, taskId);
    // That revision: the task is cancelled before the answer, not when its handler next checks.
    assert.equal(answered.status, 'cancelled');
    assert.equal((await client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status, 'cancelled');
    // The worker stops at its next check and its late writes are refused: the task stays cancelled.
    await sleep(6_000);
    assert.equal((await client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status, 'cancelled');
  });

  it('a tool that asks for input cannot run for a 2025 client: approval_gate ends failed (-32021), nothing waits for input forever', {
    timeout: 30_000,
  }, async () => {
    const messages = await collect(
      client.experimental.tasks.callToolStream({ name: 'approval_gate', arguments: { action: 'deploy' } }, CallToolResultSchema, {
        task: {},
      }),
    );
    assert.equal(messages.at(-1)?.type, 'error', explain(messages));
    const taskId = messages[0]!.task!.taskId;
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'failed');
    await assert.rejects(
      client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      (error: unknown) => error instanceof McpError && error.code === -32021,
    );
  });

  it('without params.task the same client still gets results inline', async () => {
    const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 1 } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Computed result after 1s' }]);
  });
});
