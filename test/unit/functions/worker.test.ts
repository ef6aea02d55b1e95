/**
 * The worker function (`functions/worker/app.ts`): an SQS batch in, a partial
 * batch response out — only the records whose task should run again are
 * reported as failed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { createWorkerHandler } from '../../../functions/worker/app.ts';
import { type Config, ENV, loadConfig } from '../../../shared/config.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { defineTool } from '../../../shared/runtime/tool.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, sqsEvent, storePolicy } from '../../support/factories.ts';

const config: Config = loadConfig({ [ENV.tableName]: 'tasks', [ENV.queueUrl]: 'https://sqs.invalid/tasks', [ENV.toolset]: 'all' });
const ok = defineTool({ name: 'ok', description: '', inputSchema: z.object({}), execution: 'task', handler: async () => 'ok' });
const flaky = defineTool({
  name: 'flaky',
  description: '',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async () => {
    throw new Error('connection reset');
  },
});

describe('worker function', () => {
  it('reports only the records whose task should run again as batch item failures', async () => {
    const store = new InMemoryTaskStore(storePolicy());
    const now = Date.now();
    await store.create(newTask({ taskId: 'runs', tool: 'ok', now }));
    await store.create(newTask({ taskId: 'retries', tool: 'flaky', now }));
    const lines: Array<Record<string, unknown>> = [];
    const handler = createWorkerHandler({
      config,
      store,
      queue: new InMemoryTaskQueue(),
      tools: new Map([ok, flaky].map((t) => [t.name, t])),
      log: (line) => void lines.push(line),
    });

    const response = await handler(
      sqsEvent([
        JSON.stringify({ taskId: 'runs', reason: 'start' }),
        'not a task message',
        JSON.stringify({ taskId: 'retries', reason: 'start' }),
      ]),
    );

    assert.deepEqual(response, { batchItemFailures: [{ itemIdentifier: 'm3' }] });
    assert.equal((await store.get('runs', 'alice', now))?.status, 'completed');
    assert.equal((await store.get('retries', 'alice', now))?.status, 'working', 'a retried task waits for its redelivery');
    assert.ok(
      lines.some((line) => line['event'] === 'malformed-message'),
      'a malformed message is logged and dropped',
    );
  });
});
