/**
 * Factories for what tests otherwise build by hand: store policies, new
 * tasks, HTTP API (payload 2.0) events as API Gateway hands them to the MCP
 * function, and SQS events as the event source mapping hands them to the
 * worker. Each takes overrides for the fields a test cares about. (MCP
 * requests as events: `mcpRequestEvent` in `wire.ts`.)
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, SQSEvent } from 'aws-lambda';
import type { NewTask, StorePolicy } from '../../shared/tasks/store-types.ts';

/** A store policy for tests: one-hour retention, one-minute grace, ten-second leases, steps kept a day. */
export function storePolicy(overrides: Partial<StorePolicy> = {}): StorePolicy {
  return { retentionMs: 3_600_000, sweepGraceMs: 60_000, leaseMs: 10_000, stepRetentionMs: 86_400_000, ...overrides };
}

/**
 * What `TaskStore.create` takes: a fresh task id, owner `alice`, tool `echo`,
 * no arguments, no capabilities, an hour's TTL, created at 0. The tests' one
 * way to describe a new task.
 */
export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    taskId: randomUUID(),
    owner: 'alice',
    tool: 'echo',
    arguments: {},
    clientCapabilities: {},
    inputResponses: {},
    now: 0,
    ttlMs: 3_600_000,
    pollIntervalMs: 1000,
    ...overrides,
  };
}

export interface HttpApiEventOptions {
  method?: string;
  path?: string;
  /** Header names are lower-cased, as API Gateway does. */
  headers?: Record<string, string>;
  body?: string;
  /** The `sub` claim of a JWT authorizer on the route; none without it. */
  subject?: string;
  requestId?: string;
}

let nextRequest = 0;

/** An HTTP API (payload 2.0) event for `POST /mcp` on `api.example.com`, as API Gateway builds it. */
export function httpApiEvent(options: HttpApiEventOptions = {}): APIGatewayProxyEventV2 {
  const method = options.method ?? 'POST';
  const path = options.path ?? '/mcp';
  const routeKey = `${method} ${path}`;
  const headers: Record<string, string> = { host: 'api.example.com' };
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: options.requestId ?? `r${++nextRequest}`,
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
      ...(options.subject ? { authorizer: { jwt: { claims: { sub: options.subject }, scopes: [] } } } : {}),
    } as APIGatewayProxyEventV2['requestContext'],
    ...(options.body === undefined ? {} : { body: options.body }),
    isBase64Encoded: false,
  };
}

/** An SQS event as the event source mapping delivers it: one record per body, message ids `m1`, `m2`, … */
export function sqsEvent(bodies: readonly string[]): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: `m${i + 1}`,
      receiptHandle: `receipt-${i + 1}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'AIDAEXAMPLE',
        ApproximateFirstReceiveTimestamp: '0',
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:tasks',
      awsRegion: 'us-east-1',
    })),
  };
}
