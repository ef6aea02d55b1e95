/**
 * The durable functions adapter with the real `@aws-sdk/client-lambda` on a
 * small local endpoint of the test's own, answering as Lambda's REST API
 * does: what goes on the wire for each call the adapter makes (the durable
 * execution name and the asynchronous invocation type as headers, the
 * payload as the body, the execution's ARN in the path), and how Lambda's
 * errors reach the port through the client's deserialisation.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { REGION } from '../../bin/local/emulators.ts';
import { LOCAL_CREDENTIALS } from '../../bin/local/sqs.ts';
import { DurableEngine, DurableExecutionClosedError } from '../../shared/engines/durable/index.ts';
import { TaskTokenGoneError } from '../../shared/engines/port.ts';

const QUALIFIED = 'arn:aws:lambda:us-east-1:123456789012:function:review-claim:7';
const ARN = `${QUALIFIED}/durable-execution/task-1/11111111-2222-4333-8444-555555555555`;
const STARTED_S = 1_764_583_200;

interface Received {
  method: string;
  path: string;
  name?: string;
  type?: string;
  body: string;
}

/** The endpoint's answer to a request: status, a Lambda error type, or a JSON body and headers. */
type Reply = { status: number; error?: string; body?: Record<string, unknown>; headers?: Record<string, string> };

describe('the durable adapter on the wire (real Lambda client)', () => {
  let server: Server;
  let engine: DurableEngine;
  const received: Received[] = [];
  let replies: Reply[] = [];

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        const name = req.headers['x-amz-durable-execution-name'];
        const type = req.headers['x-amz-invocation-type'];
        received.push({
          method: req.method ?? '',
          path: decodeURIComponent(req.url ?? ''),
          body,
          ...(typeof name === 'string' ? { name } : {}),
          ...(typeof type === 'string' ? { type } : {}),
        });
        const reply = replies.shift() ?? { status: 500, error: 'ServiceException' };
        const headers: Record<string, string> = { 'content-type': 'application/json', ...reply.headers };
        if (reply.error) headers['x-amzn-errortype'] = reply.error;
        res.writeHead(reply.status, headers);
        res.end(JSON.stringify(reply.body ?? (reply.error ? { message: reply.error } : {})));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    engine = new DurableEngine({
      client: new LambdaClient({ endpoint, region: REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 }),
      now: () => 9_000,
    });
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a start is an asynchronous invoke of the qualified function, named after the task; Lambda answers the ARN in a header', async () => {
    received.length = 0;
    replies = [{ status: 202, headers: { 'X-Amz-Durable-Execution-Arn': ARN } }];
    assert.deepEqual(await engine.start(QUALIFIED, 'task-1', '{"amount":120}'), { executionArn: ARN, startDate: 9_000 });
    assert.deepEqual(received, [
      { method: 'POST', path: `/2015-03-31/functions/${QUALIFIED}/invocations`, name: 'task-1', type: 'Event', body: '{"amount":120}' },
    ]);
  });

  it('a name already started and closed: the list by name of the unqualified function and its qualifier, then the describe by ARN', async () => {
    received.length = 0;
    const listed = {
      DurableExecutionArn: ARN,
      DurableExecutionName: 'task-1',
      FunctionArn: QUALIFIED,
      Status: 'FAILED',
      StartTimestamp: STARTED_S,
    };
    replies = [
      { status: 409, error: 'DurableExecutionAlreadyStartedException' },
      { status: 200, body: { DurableExecutions: [listed] } },
      { status: 200, body: { ...listed, Error: { ErrorType: 'ClaimInvalid', ErrorMessage: 'no policy' }, InputPayload: '{"amount":120}' } },
    ];
    const error = await engine.start(QUALIFIED, 'task-1', '{"amount":120}').catch((caught: unknown) => caught);
    assert.ok(error instanceof DurableExecutionClosedError);
    assert.deepEqual(error.described, {
      executionArn: ARN,
      status: 'FAILED',
      startDate: STARTED_S * 1000,
      error: 'ClaimInvalid',
      cause: 'no policy',
      input: '{"amount":120}',
    });
    assert.deepEqual(
      received.map(({ method, path }) => `${method} ${path}`),
      [
        `POST /2015-03-31/functions/${QUALIFIED}/invocations`,
        'GET /2025-12-01/functions/arn:aws:lambda:us-east-1:123456789012:function:review-claim/durable-executions?DurableExecutionName=task-1&Qualifier=7',
        `GET /2025-12-01/durable-executions/${ARN}?IncludeExecutionData=true`,
      ],
    );
  });

  it('a stop carries who cancelled as its error; callbacks go by id; a second completion is the port\'s "token gone"', async () => {
    received.length = 0;
    replies = [{ status: 200, body: { StopTimestamp: STARTED_S } }, { status: 200 }, { status: 400, error: 'CallbackTimeoutException' }];
    await engine.stop(ARN, { error: 'mcp-tasks.Cancelled', cause: 'Cancelled by Ana' });
    await engine.decline('cb-1', { error: 'mcp-tasks.Rejected', cause: 'Rejected by Ana: duplicate' });
    await assert.rejects(engine.answer('cb-1', '{"approved":true}'), TaskTokenGoneError);
    assert.deepEqual(
      received.map(({ method, path, body }) => ({ method, path, body: JSON.parse(body) })),
      [
        {
          method: 'POST',
          path: `/2025-12-01/durable-executions/${ARN}/stop`,
          body: { ErrorType: 'mcp-tasks.Cancelled', ErrorMessage: 'Cancelled by Ana' },
        },
        {
          method: 'POST',
          path: '/2025-12-01/durable-execution-callbacks/cb-1/fail',
          body: { ErrorType: 'mcp-tasks.Rejected', ErrorMessage: 'Rejected by Ana: duplicate' },
        },
        { method: 'POST', path: '/2025-12-01/durable-execution-callbacks/cb-1/succeed', body: { approved: true } },
      ],
    );
  });
});
