/**
 * Tasks are bound to the caller (spec item 56): through the unchanged Lambda
 * handler, with API Gateway events carrying a JWT authorizer's claims, a task
 * of one subject answers another subject exactly like an unknown task.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { mcpRequestEvent, TASKS_ONLY } from '../support/wire.ts';

let stack: LocalStack;
let dataDir: string;
let handler: (event: APIGatewayProxyEventV2) => Promise<unknown>;

async function call(method: string, params: Record<string, unknown>, subject?: string) {
  const result = (await handler(
    mcpRequestEvent(method, params, { capabilities: TASKS_ONLY, ...(subject ? { principal: subject } : {}) }),
  )) as APIGatewayProxyStructuredResultV2;
  return JSON.parse(String(result.body)) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

describe('tasks are bound to the caller', () => {
  let taskId: string;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-identity-'));
    // The worker sees the cancel in `after` within 200 ms, so closing the stack does not wait out its drain.
    stack = await startLocalStack({ port: 0, dataDir, log: () => {}, env: { TASKS_CANCEL_CHECK_MS: '200' } });
    handler = stack.handlers.mcp;
    const created = await call('tools/call', { name: 'long_computation', arguments: { seconds: 30 } }, 'alice');
    taskId = String(created.result?.['taskId']);
    assert.equal(created.result?.['resultType'], 'task');
  });

  after(async () => {
    await call('tasks/cancel', { taskId }, 'alice');
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('the owner reads its task', async () => {
    const read = await call('tasks/get', { taskId }, 'alice');
    assert.equal(read.result?.['taskId'], taskId);
  });

  for (const [who, subject] of [
    ['another subject', 'bob'],
    ['a caller without a token (the local principal)', undefined],
  ] as const) {
    it(`${who} gets exactly what an unknown task id gets, for get, update and cancel`, async () => {
      const unknown = crypto.randomUUID();
      for (const [method, extra] of [
        ['tasks/get', {}],
        ['tasks/update', { inputResponses: { k: { action: 'accept' } } }],
        ['tasks/cancel', {}],
      ] as const) {
        const foreign = await call(method, { taskId, ...extra }, subject);
        const missing = await call(method, { taskId: unknown, ...extra }, subject);
        assert.equal(foreign.error?.code, -32602, `${method}: ${JSON.stringify(foreign)}`);
        assert.deepEqual(foreign.error, missing.error, method);
      }
    });
  }

  it('refuses a token without a subject instead of mapping it to a shared principal', async () => {
    const request = mcpRequestEvent('tasks/get', { taskId }, { capabilities: TASKS_ONLY, principal: 'alice' });
    (request.requestContext as unknown as { authorizer: { jwt: { claims: Record<string, unknown> } } }).authorizer.jwt.claims = {
      client_id: 'svc-a',
      iss: 'https://issuer.example',
    };
    const result = (await handler(request)) as APIGatewayProxyStructuredResultV2;
    assert.equal(result.statusCode, 401);
  });

  it('binds tasks to issuer and subject: the same subject from another issuer is another principal', async () => {
    const request = mcpRequestEvent('tasks/get', { taskId }, { capabilities: TASKS_ONLY, principal: 'alice' });
    (request.requestContext as unknown as { authorizer: { jwt: { claims: Record<string, unknown> } } }).authorizer.jwt.claims = {
      sub: 'alice',
      iss: 'https://other-issuer.example',
    };
    const result = JSON.parse(String(((await handler(request)) as APIGatewayProxyStructuredResultV2).body)) as { error?: { code: number } };
    assert.equal(result.error?.code, -32602);
  });

  it('a foreign cancel changed nothing', async () => {
    const read = await call('tasks/get', { taskId }, 'alice');
    assert.equal(read.result?.['status'], 'working');
  });
});
