/**
 * The local stack behind `npm start`, driven over HTTP as a client would:
 * the HTTP API adapter, the worker poller (event source mapping) and the
 * on-disk table across a restart. A second part runs fauxqs and the poller
 * in-process to check the event source mapping's retry and redrive rules.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { type Poller, startPoller } from '../../bin/local/poller.ts';
import { type LocalSqs, localSqsClient, startLocalSqs } from '../../bin/local/sqs.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { sleep } from '../support/wait.ts';
import { pollUntil, resultOf, rpc, TASKS_EXTENSION } from '../support/wire.ts';

/** Starts a one-second task and returns its id. */
async function startSlowTask(url: string): Promise<string> {
  const created = resultOf(await rpc(url, 'tools/call', { name: 'long_computation', arguments: { seconds: 1 } }));
  assert.equal(created['resultType'], 'task', JSON.stringify(created));
  assert.equal(typeof created['taskId'], 'string');
  return created['taskId'] as string;
}

describe('local stack (npm start)', () => {
  let stack: LocalStackProcess;

  before(async () => {
    stack = await startLocalStackProcess();
  });
  after(async () => {
    await stack?.stop();
  });

  it('serves server/discover advertising the tasks extension', async () => {
    const response = await rpc(stack.url, 'server/discover');
    assert.equal(response.status, 200);
    const capabilities = resultOf(response)['capabilities'] as { extensions?: Record<string, unknown> };
    assert.ok(capabilities.extensions?.[TASKS_EXTENSION], JSON.stringify(capabilities));
  });

  it('runs a task through the worker poller to completed', async () => {
    const taskId = await startSlowTask(stack.url);
    const task = await pollUntil(stack.url, taskId, (t) => t.status !== 'working', 15_000, 200);
    assert.equal(task.status, 'completed', JSON.stringify(task));
    const content = (task.result?.['content'] ?? []) as Array<{ text?: string }>;
    assert.match(String(content[0]?.text), /^Computed the result in 1 s: [0-9a-f]{16}$/);
  });

  it('answers 413 to a body over 10 MB, without buffering it', async () => {
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Method': 'tools/list' },
      body: 'x'.repeat(10 * 1024 * 1024 + 1),
    });
    assert.equal(response.status, 413);
    assert.deepEqual(await response.json(), { message: 'Request Entity Too Large' });
  });

  it('answers 413 to a chunked body once it crosses 10 MB', async () => {
    // No Content-Length: the limit is enforced while reading.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(stack.url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(1024 * 1024, 'x');
      let sent = 0;
      const write = () => {
        while (sent < 64 && !req.destroyed) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', write);
        }
        if (!req.destroyed) req.end();
      };
      write();
    });
    assert.equal(status, 413);
  });

  it('leaves GET /mcp to the endpoint (405) and answers 404 elsewhere', async () => {
    const get = await fetch(stack.url, { headers: { Accept: 'application/json, text/event-stream' } });
    assert.equal(get.status, 405);
    const other = await fetch(new URL('/other', stack.url), { method: 'POST', body: '{}' });
    assert.equal(other.status, 404);
    assert.deepEqual(await other.json(), { message: 'Not Found' });
  });
});

describe('local stack restart', () => {
  let dataDir: string;
  let stack: LocalStackProcess | undefined;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-restart-'));
  });
  after(async () => {
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps a completed task readable after stop and start on the same data', async () => {
    stack = await startLocalStackProcess({ dataDir });
    const taskId = await startSlowTask(stack.url);
    const done = await pollUntil(stack.url, taskId, (t) => t.status !== 'working', 15_000, 200);
    assert.equal(done.status, 'completed');
    assert.equal(await stack.stop(), 0, 'SIGTERM exits 0');

    stack = await startLocalStackProcess({ dataDir });
    const again = await pollUntil(stack.url, taskId, () => true);
    assert.equal(again.status, 'completed');
    assert.deepEqual(again.result, done.result);
  });
});

describe('SQS event source emulation (fauxqs + poller)', () => {
  const VISIBILITY_S = 1;
  let sqs: LocalSqs;
  let client: ReturnType<typeof localSqsClient>;
  const pollers: Poller[] = [];

  before(async () => {
    sqs = await startLocalSqs({ queueName: 'esm', maxReceiveCount: 2, visibilityTimeoutSeconds: VISIBILITY_S });
    client = localSqsClient(sqs.endpoint, sqs.region);
  });
  after(async () => {
    await Promise.all(pollers.map((poller) => poller.stop()));
    client?.destroy();
    await sqs?.close();
  });

  it('deletes handled records, redelivers failed ones, and dead-letters after maxReceiveCount', async () => {
    const seen: { body: string; receiveCount: number; at: number }[] = [];
    const dead: SQSEvent['Records'] = [];
    let deadLettered!: () => void;
    const reachedDlq = new Promise<void>((resolve) => (deadLettered = resolve));

    pollers.push(
      startPoller({
        client,
        queueUrl: sqs.queueUrl,
        queueArn: sqs.queueArn,
        region: sqs.region,
        log: () => {},
        handler: async (event) => {
          for (const record of event.Records) {
            assert.equal(record.eventSource, 'aws:sqs');
            assert.equal(record.eventSourceARN, sqs.queueArn);
            seen.push({ body: record.body, receiveCount: Number(record.attributes.ApproximateReceiveCount), at: Date.now() });
          }
          return { batchItemFailures: event.Records.filter((r) => r.body === 'fail').map((r) => ({ itemIdentifier: r.messageId })) };
        },
      }),
      startPoller({
        client,
        queueUrl: sqs.dlqUrl,
        queueArn: sqs.dlqArn,
        region: sqs.region,
        log: () => {},
        handler: async (event) => {
          dead.push(...event.Records);
          deadLettered();
          return undefined;
        },
      }),
    );

    const sentAt = Date.now();
    await client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrl, MessageBody: 'ok' }));
    await client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrl, MessageBody: 'fail' }));
    await Promise.race([reachedDlq, new Promise((_, reject) => setTimeout(() => reject(new Error('nothing reached the DLQ')), 15_000))]);
    // One more visibility period: a deleted record must not come back.
    await sleep((VISIBILITY_S + 1) * 1000);

    assert.deepEqual(
      seen.filter((s) => s.body === 'ok').map((s) => s.receiveCount),
      [1],
    );
    const failures = seen.filter((s) => s.body === 'fail');
    assert.deepEqual(
      failures.map((s) => s.receiveCount),
      [1, 2],
      'received maxReceiveCount times',
    );
    assert.ok(failures[1]!.at - sentAt >= VISIBILITY_S * 1000 - 100, 'redelivered only after the visibility timeout');
    assert.deepEqual(
      dead.map((r) => r.body),
      ['fail'],
    );
    assert.equal(dead[0]!.eventSourceARN, sqs.dlqArn);
  });
});
