/**
 * A cloud assembly "deployed" without AWS: the template's table and queues
 * created on dynalite and fauxqs (in this process, on 127.0.0.1), each of its
 * functions running from its bundled asset (`runtime.ts`) behind its own
 * recording proxy (`proxy.ts`), and the services that drive them emulated
 * from the template's own resources:
 *
 * - the HTTP API: its routes (`AWS::ApiGatewayV2::Route`) and Lambda proxy
 *   integrations, as payload-2.0 events; an unknown route is a 404;
 * - the event source mapping: its batch size, maximum concurrency and
 *   `ReportBatchItemFailures`, polling with the worker's role;
 * - the schedule rule: its targets, each invoked with a scheduled event;
 * - the rules on the default bus: an event the test delivers reaches the
 *   targets whose patterns match it; Step Functions is a fake of the calls
 *   the worker makes (`stepfunctions-fake.ts`), its states played by the test;
 * - CloudFormation: the custom resource's Create event, with a sink for its
 *   response.
 *
 * Deviations from the template, each stated here and nowhere hidden:
 * - service endpoints: the functions' SDKs talk to the proxies, which talk
 *   to the emulators (and answer SSM, Secrets Manager and EventBridge's
 *   `PutEvents` themselves);
 * - the table has no SSE, point-in-time recovery or TTL (dynalite has none);
 * - the issuer and resource URLs: `TASKS_AUTH_ISSUERS` and
 *   `TASKS_AUTH_RESOURCE`, when the template sets them, name the local
 *   authorization server and the local HTTP API front (the API's own
 *   `ApiEndpoint` already resolves to the front);
 * - a dead-lettered message is put on the dead-letter queue directly rather
 *   than after five visibility timeouts of 30 minutes.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import { buildApp } from 'fauxqs';
import { startDynalite } from '../../bin/local/dynamodb.ts';
import { type Poller, startPoller } from '../../bin/local/poller.ts';
import { LOCAL_CREDENTIALS, localSqsClient } from '../../bin/local/sqs.ts';
import { type Assembly, type FunctionRole, functionsOf, type Json, resourcesOf } from './assembly.ts';
import { type AwsCall, CallLog, EventBusFake, ParameterStore, startProxy, type Upstreams } from './proxy.ts';
import { ACCOUNT, defaultPhysical, type Physical, REGION, resolver, STACK_NAME } from './resolve.ts';
import { type FunctionSpec, type RunningFunction, startFunction } from './runtime.ts';
import { machinesOf, StepFunctionsFake, targetsOf } from './stepfunctions-fake.ts';

/** The event source mapping's long-poll wait (short, so that pausing it is quick). */
const POLL_WAIT_SECONDS = 1;

export interface DeploymentOptions {
  /** Deviation: the issuer the MCP function trusts, when the template makes it a resource server. */
  authIssuer?: string;
}

export interface CustomResourceResponse {
  Status: string;
  Reason?: string;
  PhysicalResourceId?: string;
  LogicalResourceId?: string;
  RequestId?: string;
}

export interface Deployment {
  readonly assembly: Assembly;
  /** The HTTP API front's `/mcp` URL. */
  readonly url: string;
  readonly functions: Record<FunctionRole, RunningFunction>;
  readonly calls: CallLog;
  readonly parameters: ParameterStore;
  /** The lifecycle events the functions put, each with the function that put it. */
  readonly bus: EventBusFake;
  /** Step Functions: the executions the worker started, the tokens the test minted and their answers. */
  readonly states: StepFunctionsFake;
  /** An event on the default bus (e.g. a status change): each target of a rule matching it invoked; their results. */
  deliver(event: Json): Promise<unknown[]>;
  /** The custom resources' responses to their Create events, by logical id. */
  readonly customResources: Map<string, CustomResourceResponse>;
  /** CloudFormation deleting the stack: each custom resource's Delete event; the responses by logical id. */
  deleteCustomResources(): Promise<Map<string, CustomResourceResponse>>;
  /** The resolved template value (e.g. a policy document) as deployed here. */
  resolve(value: unknown): unknown;
  /** One run of the schedule rule: each target invoked with its scheduled event; the results by function. */
  tick(): Promise<Map<FunctionRole, unknown>>;
  /** Stops the event source mapping (messages stay on the queue) or starts it again. */
  pauseEventSource(): Promise<void>;
  resumeEventSource(): void;
  /** Moves the next message of the task queue to the dead-letter queue (deviation: instead of five 30-minute redeliveries). */
  deadLetterNext(): Promise<string>;
  stop(): Promise<void>;
}

export async function startDeployment(assembly: Assembly, options: DeploymentOptions = {}): Promise<Deployment> {
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    return await deploy(assembly, options, cleanups, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

async function deploy(
  assembly: Assembly,
  options: DeploymentOptions,
  cleanups: Array<() => Promise<void>>,
  stop: () => Promise<void>,
): Promise<Deployment> {
  const { template } = assembly;
  const physical = new Map<string, Physical>();
  const calls = new CallLog();
  const parameters = new ParameterStore();
  const bus = new EventBusFake();

  // The emulators.
  const dynamo = await startDynalite();
  cleanups.push(() => dynamo.close());
  const fauxqs = buildApp({ logger: false, defaultRegion: REGION });
  const sqsEndpoint = await fauxqs.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(async () => {
    await fauxqs.close();
  });
  const admin = localSqsClient(sqsEndpoint, REGION);
  cleanups.push(async () => admin.destroy());

  // The HTTP API front first: its URL is the API's `ApiEndpoint`.
  const front = await listen((request, response) => api.handle(request, response));
  cleanups.push(() => closeServer(front.server));
  for (const [id] of resourcesOf(template, 'AWS::ApiGatewayV2::Api')) {
    physical.set(id, { ref: 'lane0api01', attributes: { ApiEndpoint: front.url, ApiId: 'lane0api01' } });
  }
  // A state machine's Ref is its ARN, by the name the template gives it.
  for (const [id, machine] of resourcesOf(template, 'AWS::StepFunctions::StateMachine')) {
    const name = String(machine['Properties']['StateMachineName']);
    const arn = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
    physical.set(id, { ref: arn, attributes: { Arn: arn, Name: name } });
  }

  const resolve = resolver(template, physical);
  const states = new StepFunctionsFake(machinesOf(template, resolve));
  const upstreams: Upstreams = { dynamodb: dynamo.endpoint, sqs: sqsEndpoint, queueArns: new Map(), queueArnsByName: new Map() };
  await createTables(template, physical, dynamo.endpoint);
  await createQueues(template, physical, resolve, admin, upstreams);

  // The functions, each behind its own proxy.
  const resources = functionsOf(assembly);
  const functions = {} as Record<FunctionRole, RunningFunction>;
  const byArn = new Map<string, FunctionRole>();
  const record = (call: AwsCall) => calls.add(call);
  await Promise.all(
    (Object.keys(resources) as FunctionRole[]).map(async (role) => {
      const fn = resources[role];
      const props = fn.properties;
      const proxy = await startProxy(role, upstreams, { parameters, bus, states }, calls);
      cleanups.push(proxy.close);
      const own = defaultPhysical(fn.logicalId, 'AWS::Lambda::Function');
      byArn.set(own.attributes['Arn']!, role);
      const logGroupId = props['LoggingConfig']?.['LogGroup']?.['Ref'] as string | undefined;
      const logGroup = logGroupId
        ? { ref: String(resolve({ Ref: logGroupId })), arn: String(resolve({ 'Fn::GetAtt': [logGroupId, 'Arn'] })) }
        : { ref: `/aws/lambda/${own.ref}`, arn: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/lambda/${own.ref}:*` };
      const environment = resolveEnvironment(props, resolve, role, options, front.url);
      const spec: FunctionSpec = {
        role,
        name: own.ref,
        arn: own.attributes['Arn']!,
        assetDir: fn.assetDir,
        handler: String(props['Handler']),
        timeoutSeconds: Number(props['Timeout'] ?? 3),
        memorySize: Number(props['MemorySize'] ?? 128),
        logGroupName: logGroup.ref,
        logGroupArn: logGroup.arn,
        environment,
        endpoint: proxy.endpoint,
      };
      const running = await startFunction(spec, record);
      cleanups.push(running.stop);
      functions[role] = running;
    }),
  );
  const roleOfArn = (arn: unknown): FunctionRole => {
    const role = byArn.get(String(arn));
    assert.ok(role, `The template targets ${String(arn)}, which is none of the stack's functions`);
    return role;
  };

  // CloudFormation creates the custom resources (the MCP function depends on the state key).
  const customResources = new Map<string, CustomResourceResponse>();
  const custom = Object.entries(template['Resources'] as Record<string, Json>)
    .filter(([, resource]) => String(resource['Type']).startsWith('Custom::'))
    .map(([id, resource]) => {
      const properties = resolve(resource['Properties']) as Record<string, unknown>;
      return { id, type: String(resource['Type']), properties, fn: functions[roleOfArn(properties['ServiceToken'])] };
    });
  for (const resource of custom) customResources.set(resource.id, await sendCustomResourceEvent('Create', resource));

  // The HTTP API's routes.
  const routes = new Map<string, FunctionRole>();
  for (const [, route] of resourcesOf(template, 'AWS::ApiGatewayV2::Route')) {
    const props = route['Properties'] as Json;
    assert.notEqual(props['AuthorizationType'], 'JWT', 'The lane runs stacks without an HTTP API JWT authorizer only');
    const integrationId = String(props['Target']['Fn::Join'][1][1]['Ref']);
    const integration = (template['Resources'] as Record<string, Json>)[integrationId]!['Properties'] as Json;
    assert.equal(integration['PayloadFormatVersion'], '2.0', `Route ${props['RouteKey']}: the lane emulates payload format 2.0 only`);
    routes.set(String(props['RouteKey']), roleOfArn(resolve(integration['IntegrationUri'])));
  }
  const api = httpApi(routes, functions);

  // The event source mappings.
  const pollers: Array<{ start(): void; stop(): Promise<void> }> = [];
  for (const [, mapping] of resourcesOf(template, 'AWS::Lambda::EventSourceMapping')) {
    const props = mapping['Properties'] as Json;
    const role = roleOfArn(`arn:aws:lambda:${REGION}:${ACCOUNT}:function:${resolve(props['FunctionName'])}`);
    const queueArn = String(resolve(props['EventSourceArn']));
    const queueUrl = [...upstreams.queueArns].find(([, arn]) => arn === queueArn)?.[0];
    assert.ok(queueUrl, `The event source mapping reads ${queueArn}, which is none of the stack's queues`);
    assert.deepEqual(
      props['FunctionResponseTypes'],
      ['ReportBatchItemFailures'],
      'The lane emulates mappings with ReportBatchItemFailures',
    );
    // The Lambda service polls with the function's role: a proxy of its own records those calls as the service's.
    const proxy = await startProxy(role, upstreams, { parameters, bus, states }, {
      add: (call) => calls.add({ ...call, by: 'lambda' }),
    } as CallLog);
    cleanups.push(proxy.close);
    const client = localSqsClient(proxy.endpoint, REGION);
    cleanups.push(async () => client.destroy());
    // Creating a mapping reads the queue's attributes (Lambda checks its visibility timeout).
    await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['VisibilityTimeout'] }));
    let poller: Poller | undefined;
    const control = {
      start() {
        poller ??= startPoller({
          client,
          queueUrl,
          queueArn,
          region: REGION,
          batchSize: Number(props['BatchSize'] ?? 10),
          maxConcurrency: Number(props['ScalingConfig']?.['MaximumConcurrency'] ?? 2),
          waitTimeSeconds: POLL_WAIT_SECONDS,
          handler: (event: SQSEvent) => functions[role].invoke(event),
          log: () => {},
        });
      },
      async stop() {
        const running = poller;
        poller = undefined;
        await running?.stop();
      },
    };
    control.start();
    pollers.push(control);
    cleanups.push(control.stop);
  }

  // The schedule rules' targets.
  const scheduled: Array<{ rule: string; targets: FunctionRole[] }> = [];
  for (const [id, rule] of resourcesOf(template, 'AWS::Events::Rule')) {
    const props = rule['Properties'] as Json;
    if (!props['ScheduleExpression']) continue;
    scheduled.push({ rule: id, targets: (props['Targets'] as Json[]).map((target) => roleOfArn(resolve(target['Arn']))) });
  }

  const taskQueue = queueOf(template, upstreams, physical, 'task');
  const deadLetterQueue = queueOf(template, upstreams, physical, 'dead-letter');

  return {
    assembly,
    url: `${front.url}/mcp`,
    functions,
    calls,
    parameters,
    bus,
    states,
    deliver: (event) => Promise.all(targetsOf(template, resolve, event).map((arn) => functions[roleOfArn(arn)].invoke(event))),
    customResources,
    async deleteCustomResources() {
      const responses = new Map<string, CustomResourceResponse>();
      for (const resource of custom) {
        const physicalId = customResources.get(resource.id)?.PhysicalResourceId;
        responses.set(resource.id, await sendCustomResourceEvent('Delete', resource, physicalId));
      }
      return responses;
    },
    resolve,
    async tick() {
      const results = new Map<FunctionRole, unknown>();
      for (const { rule, targets } of scheduled) {
        for (const role of targets) {
          const event = {
            version: '0',
            id: randomUUID(),
            'detail-type': 'Scheduled Event',
            source: 'aws.events',
            account: ACCOUNT,
            time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            region: REGION,
            resources: [`arn:aws:events:${REGION}:${ACCOUNT}:rule/${STACK_NAME}-${rule}`],
            detail: {},
          };
          results.set(role, await functions[role].invoke(event));
        }
      }
      return results;
    },
    async pauseEventSource() {
      for (const poller of pollers) await poller.stop();
      // A long poll the client gave up on may still be open at the emulator and take the next message: let it end.
      await new Promise((resolve) => setTimeout(resolve, (POLL_WAIT_SECONDS + 0.5) * 1000));
    },
    resumeEventSource() {
      for (const poller of pollers) poller.start();
    },
    async deadLetterNext() {
      const { Messages } = await admin.send(
        new ReceiveMessageCommand({
          QueueUrl: taskQueue,
          MaxNumberOfMessages: 1,
          WaitTimeSeconds: 2,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const message = Messages?.[0];
      assert.ok(message?.Body && message.ReceiptHandle, 'No message on the task queue to dead-letter');
      await admin.send(new SendMessageCommand({ QueueUrl: deadLetterQueue, MessageBody: message.Body }));
      await admin.send(new DeleteMessageCommand({ QueueUrl: taskQueue, ReceiptHandle: message.ReceiptHandle }));
      return message.Body;
    },
    stop,
  };
}

/** The function's `Environment.Variables`, resolved, with the stated deviations for the issuer and resource URLs. */
function resolveEnvironment(
  props: Json,
  resolve: (value: unknown) => unknown,
  role: string,
  options: DeploymentOptions,
  frontUrl: string,
): Record<string, string> {
  const variables = resolve(props['Environment']?.['Variables'] ?? {}) as Record<string, unknown>;
  const environment = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, String(value)]));
  if ('TASKS_AUTH_ISSUERS' in environment) {
    assert.ok(options.authIssuer, `The template makes ${role} a resource server: the lane needs a local issuer`);
    environment['TASKS_AUTH_ISSUERS'] = options.authIssuer;
  }
  if ('TASKS_AUTH_RESOURCE' in environment) environment['TASKS_AUTH_RESOURCE'] = `${frontUrl}/mcp`;
  return environment;
}

async function createTables(template: Json, physical: Map<string, Physical>, endpoint: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
  try {
    for (const [id, table] of resourcesOf(template, 'AWS::DynamoDB::Table')) {
      const props = table['Properties'] as Json;
      const made = defaultPhysical(id, 'AWS::DynamoDB::Table');
      physical.set(id, made);
      // Deviation: SSE, point-in-time recovery and TTL are left out (dynalite has none of them).
      await client.send(
        new CreateTableCommand({
          TableName: made.ref,
          AttributeDefinitions: props['AttributeDefinitions'],
          KeySchema: props['KeySchema'],
          BillingMode: props['BillingMode'],
          ...(props['GlobalSecondaryIndexes'] ? { GlobalSecondaryIndexes: props['GlobalSecondaryIndexes'] } : {}),
        }),
      );
    }
  } finally {
    client.destroy();
  }
}

async function createQueues(
  template: Json,
  physical: Map<string, Physical>,
  resolve: (value: unknown) => unknown,
  admin: SQSClient,
  upstreams: Upstreams,
): Promise<void> {
  // Queues without a redrive policy first: the others name them.
  const queues = resourcesOf(template, 'AWS::SQS::Queue').sort(([, a], [, b]) =>
    a['Properties']['RedrivePolicy'] ? (b['Properties']['RedrivePolicy'] ? 0 : 1) : -1,
  );
  for (const [id, queue] of queues) {
    const props = queue['Properties'] as Json;
    const name = `${STACK_NAME}-${id}`;
    const attributes: Record<string, string> = {};
    for (const key of [
      'VisibilityTimeout',
      'MessageRetentionPeriod',
      'DelaySeconds',
      'ReceiveMessageWaitTimeSeconds',
      'MaximumMessageSize',
    ]) {
      if (props[key] !== undefined) attributes[key] = String(props[key]);
    }
    if (props['RedrivePolicy']) attributes['RedrivePolicy'] = JSON.stringify(resolve(props['RedrivePolicy']));
    const { QueueUrl } = await admin.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    assert.ok(QueueUrl);
    const { Attributes } = await admin.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    const arn = Attributes?.['QueueArn'];
    assert.ok(arn);
    physical.set(id, { ref: QueueUrl, attributes: { Arn: arn, QueueName: name, QueueUrl } });
    upstreams.queueArns.set(QueueUrl, arn);
    upstreams.queueArnsByName.set(name, arn);
  }
}

function queueOf(template: Json, upstreams: Upstreams, physical: Map<string, Physical>, which: 'task' | 'dead-letter'): string {
  const [id] = resourcesOf(template, 'AWS::SQS::Queue').find(([, queue]) =>
    which === 'task' ? queue['Properties']['RedrivePolicy'] !== undefined : queue['Properties']['RedrivePolicy'] === undefined,
  ) ?? [undefined];
  assert.ok(id, `The template has no ${which} queue`);
  const url = physical.get(id)?.ref;
  assert.ok(url && upstreams.queueArns.has(url));
  return url;
}

/** Sends a CloudFormation event to the custom resource's function and waits for its response at the pre-signed URL. */
async function sendCustomResourceEvent(
  requestType: 'Create' | 'Delete',
  resource: { id: string; type: string; properties: Record<string, unknown>; fn: RunningFunction },
  physicalResourceId?: string,
): Promise<CustomResourceResponse> {
  const { id: logicalId, type, properties, fn } = resource;
  let received: (response: CustomResourceResponse) => void = () => {};
  const response = new Promise<CustomResourceResponse>((resolve) => (received = resolve));
  const sink = await listen((request, reply) => {
    void readAll(request).then((body) => {
      reply.writeHead(200).end();
      received(JSON.parse(body) as CustomResourceResponse);
    });
  });
  try {
    const requestId = randomUUID();
    await fn.invoke({
      RequestType: requestType,
      ...(physicalResourceId ? { PhysicalResourceId: physicalResourceId } : {}),
      ServiceToken: properties['ServiceToken'],
      ResponseURL: `${sink.url}/cloudformation-response/${requestId}?X-Amz-Signature=lane`,
      StackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${STACK_NAME}/00000000-0000-0000-0000-000000000000`,
      RequestId: requestId,
      LogicalResourceId: logicalId,
      ResourceType: type,
      ResourceProperties: properties,
    });
    const timeout = setTimeout(() => received({ Status: 'TIMEOUT', Reason: `${fn.spec.role} never answered the pre-signed URL` }), 10_000);
    const answer = await response;
    clearTimeout(timeout);
    return answer;
  } finally {
    await closeServer(sink.server);
  }
}

function httpApi(routes: Map<string, FunctionRole>, functions: Record<FunctionRole, RunningFunction>) {
  return {
    async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const method = request.method ?? 'GET';
      const routeKey = routeOf(routes, method, url.pathname);
      const role = routeKey === undefined ? undefined : routes.get(routeKey);
      if (!role || routeKey === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
        return;
      }
      const body = await readAll(request);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (value !== undefined && name !== 'cookie') headers[name] = Array.isArray(value) ? value.join(',') : value;
      }
      const contentType = headers['content-type'] ?? '';
      const text = contentType === '' || /json|text|xml|x-www-form-urlencoded/.test(contentType);
      const now = new Date();
      const event: APIGatewayProxyEventV2 = {
        version: '2.0',
        routeKey,
        rawPath: url.pathname,
        rawQueryString: url.search.replace(/^\?/, ''),
        ...(request.headers.cookie ? { cookies: request.headers.cookie.split(/;\s*/) } : {}),
        headers,
        ...(url.search ? { queryStringParameters: Object.fromEntries(url.searchParams) } : {}),
        requestContext: {
          accountId: ACCOUNT,
          apiId: 'lane0api01',
          domainName: headers['host'] ?? '127.0.0.1',
          domainPrefix: 'lane0api01',
          http: { method, path: url.pathname, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
          requestId: randomUUID(),
          routeKey,
          stage: '$default',
          time: now.toUTCString(),
          timeEpoch: now.getTime(),
        },
        isBase64Encoded: !text && body.length > 0,
        ...(body.length > 0 ? { body: text ? body : Buffer.from(body).toString('base64') } : {}),
      };
      let result: APIGatewayProxyStructuredResultV2 | string;
      try {
        result = await functions[role].invoke<APIGatewayProxyStructuredResultV2 | string>(event);
      } catch {
        // An HTTP API answers a failed invocation with a bare 500.
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal Server Error"}');
        return;
      }
      if (typeof result !== 'object' || result === null || !('statusCode' in result)) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
        return;
      }
      const outHeaders: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
      if (result.cookies?.length) outHeaders['set-cookie'] = result.cookies;
      response.writeHead(result.statusCode ?? 200, outHeaders);
      response.end(result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? ''));
    },
  };
}

/**
 * The route a request takes, as the HTTP API matches them: the method and
 * path exactly, else `ANY` on the path, else a `{proxy+}` route whose prefix
 * the path extends (the console's `/console/{proxy+}`), or a route whose
 * `{parameter}` segments each match one segment (`/callbacks/{token}`).
 */
function routeOf(routes: Map<string, FunctionRole>, method: string, path: string): string | undefined {
  for (const key of [`${method} ${path}`, `ANY ${path}`]) if (routes.has(key)) return key;
  for (const key of routes.keys()) {
    const [routeMethod, routePath = ''] = key.split(' ');
    if (routeMethod !== method && routeMethod !== 'ANY') continue;
    if (routePath.endsWith('/{proxy+}') && path.startsWith(routePath.slice(0, -'{proxy+}'.length))) return key;
    // A path parameter (`/callbacks/{token}`) stands for one non-empty segment.
    const want = routePath.split('/');
    const got = path.split('/');
    if (want.length === got.length && want.some((part) => /^\{\w+\}$/.test(part))) {
      if (want.every((part, index) => (/^\{\w+\}$/.test(part) ? got[index] !== '' : part === got[index]))) return key;
    }
  }
  return undefined;
}

async function readAll(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>) {
  const server = createServer((request, response) => {
    Promise.resolve(handler(request, response)).catch((error: unknown) => {
      response.writeHead(502).end(String((error as Error).message));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
