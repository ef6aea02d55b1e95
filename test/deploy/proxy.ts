/**
 * What each function asks of AWS, recorded on the wire. Every bundled
 * function carries its own AWS SDK, so the only place to see its calls is
 * the network: each function gets its own proxy (its `AWS_ENDPOINT_URL`),
 * which names the service and action from the request's `X-Amz-Target`, the
 * resource from its body, and forwards it to the emulator (dynalite, fauxqs)
 * or answers it itself (the minimal SSM, Secrets Manager and EventBridge
 * `PutEvents` fakes, and the Step Functions one of `stepfunctions-fake.ts`:
 * there is no emulator of any of them here).
 *
 * The proxy records; it does not enforce. Whether the role allows each call
 * is decided afterwards against the synthesized policies (`iam.ts`), so one
 * denied call names itself instead of breaking the run that follows it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerPutEvents, type ReceivedEvent } from '../support/eventbridge-fake.ts';
import { ACCOUNT, REGION } from './resolve.ts';
import type { StepFunctionsFake } from './stepfunctions-fake.ts';

/** One AWS call a function made (or the Lambda service made with its role). */
export interface AwsCall {
  /** The function's role in the stack (`worker`, `mcp`, …). */
  fn: string;
  /** IAM action, `service:Operation`. */
  action: string;
  /** The resource's ARN (`*` for actions without one). */
  resource: string;
  /** Who made it: the function's code, or the Lambda service on its behalf (event source mapping, logs). */
  by: 'code' | 'lambda';
}

export interface Upstreams {
  dynamodb: string;
  sqs: string;
  /** Queue ARNs by URL, as the emulator spells the URLs. */
  queueArns: Map<string, string>;
  /** Queue ARNs by name (`GetQueueUrl`). */
  queueArnsByName: Map<string, string>;
}

export class CallLog {
  readonly calls: AwsCall[] = [];
  add(call: AwsCall): void {
    this.calls.push(call);
  }
  /** Distinct calls: one per function, action and resource. */
  distinct(): AwsCall[] {
    return [...new Map(this.calls.map((call) => [`${call.fn} ${call.action} ${call.resource}`, call])).values()];
  }
}

const arn = (service: string, resource: string) => `arn:aws:${service}:${REGION}:${ACCOUNT}:${resource}`;

/** The SSM parameters and Secrets Manager secrets the fakes hold; shared by every function. */
export class ParameterStore {
  readonly parameters = new Map<string, { value: string; type: string }>();
  readonly secrets = new Map<string, string>();

  /** Answers an SSM or Secrets Manager JSON request as the service would (the calls the functions make, nothing more). */
  answer(action: string, body: Json): { status: number; body: Json } {
    const missing = (type: string, message: string) => ({ status: 400, body: { __type: type, message } });
    switch (action) {
      case 'ssm:PutParameter': {
        const name = String(body['Name']);
        if (this.parameters.has(name) && body['Overwrite'] !== true)
          return missing('ParameterAlreadyExists', 'The parameter already exists.');
        this.parameters.set(name, { value: String(body['Value']), type: String(body['Type'] ?? 'String') });
        return { status: 200, body: { Version: 1, Tier: body['Tier'] ?? 'Standard' } };
      }
      case 'ssm:GetParameter': {
        const name = String(body['Name']);
        const parameter = this.parameters.get(name);
        if (!parameter) return missing('ParameterNotFound', '');
        return { status: 200, body: { Parameter: { Name: name, Type: parameter.type, Value: parameter.value, Version: 1 } } };
      }
      case 'ssm:DeleteParameter': {
        if (!this.parameters.delete(String(body['Name']))) return missing('ParameterNotFound', '');
        return { status: 200, body: {} };
      }
      case 'secretsmanager:GetSecretValue': {
        const secret = this.secrets.get(String(body['SecretId']));
        if (secret === undefined) return missing('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
        return { status: 200, body: { Name: body['SecretId'], SecretString: secret } };
      }
      default:
        return { status: 400, body: { __type: 'UnknownOperationException', message: `The lane's fake does not implement ${action}` } };
    }
  }
}

type Json = Record<string, any>;

/** `X-Amz-Target` prefixes of the JSON protocols the functions' clients speak. */
const TARGETS: Record<string, string> = {
  DynamoDB_20120810: 'dynamodb',
  AmazonSQS: 'sqs',
  AmazonSSM: 'ssm',
  secretsmanager: 'secretsmanager',
  AWSEvents: 'events',
  AWSStepFunctions: 'states',
};

/** The lifecycle events the functions put, kept by the lane's `PutEvents` fake (shared by every function). */
export class EventBusFake {
  readonly events: Array<ReceivedEvent & { fn: string }> = [];

  /** Answers a `PutEvents` request as EventBridge would, keeping its entries as `fn`'s. */
  answer(fn: string, body: Json): { status: number; body: Json } {
    const accepted: ReceivedEvent[] = [];
    const answer = answerPutEvents(body, accepted);
    this.events.push(...accepted.map((event) => ({ ...event, fn })));
    return answer;
  }
}

/** The resources a call names, as IAM evaluates it. */
export function resourcesOfCall(service: string, operation: string, body: Json, upstreams: Upstreams): string[] {
  switch (service) {
    case 'dynamodb': {
      const table = (name: string) => arn('dynamodb', `table/${name}`);
      if (body['RequestItems']) return Object.keys(body['RequestItems'] as Json).map(table);
      if (body['TransactItems']) {
        return (body['TransactItems'] as Json[]).map((item) => table(String((Object.values(item)[0] as Json)['TableName'])));
      }
      const base = table(String(body['TableName']));
      return [body['IndexName'] ? `${base}/index/${body['IndexName']}` : base];
    }
    case 'sqs': {
      if (operation === 'GetQueueUrl')
        return [upstreams.queueArnsByName.get(String(body['QueueName'])) ?? `unknown-queue:${body['QueueName']}`];
      if (operation === 'ListQueues') return ['*'];
      const url = String(body['QueueUrl']);
      return [upstreams.queueArns.get(url) ?? `unknown-queue:${url}`];
    }
    case 'ssm':
      return [arn('ssm', `parameter/${String(body['Name']).replace(/^\//, '')}`)];
    case 'events':
      // `PutEvents` is authorized on each entry's bus; an entry names it by name or ARN (no name: the default bus).
      return [
        ...new Set(
          ((body['Entries'] ?? []) as Json[]).map((entry) => {
            const bus = String(entry['EventBusName'] ?? 'default');
            return bus.startsWith('arn:') ? bus : arn('events', `event-bus/${bus}`);
          }),
        ),
      ];
    case 'secretsmanager': {
      const id = String(body['SecretId']);
      // Secrets Manager appends six random characters to a secret's name in its ARN.
      return [id.startsWith('arn:') ? id : arn('secretsmanager', `secret:${id}-AbCdEf`)];
    }
    default:
      return ['*'];
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A function's proxy: records each call as this function's, then forwards or answers it. */
export async function startProxy(
  fn: string,
  upstreams: Upstreams,
  fakes: { parameters: ParameterStore; bus: EventBusFake; states: StepFunctionsFake },
  log: CallLog,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const { parameters, bus, states } = fakes;
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ __type: 'InternalFailure', message: `lane proxy: ${(error as Error).message}` }));
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    if (request.method === 'POST' && request.url === '/v1/traces') return acceptSpans(request, response, body);
    const target = String(request.headers['x-amz-target'] ?? '');
    const [prefix, operation = ''] = target.split('.');
    const service = TARGETS[prefix ?? ''];
    if (!service) {
      log.add({ fn, action: `unknown:${target || `${request.method} ${request.url}`}`, resource: '*', by: 'code' });
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ __type: 'UnknownOperationException', message: 'The lane knows no service for this request' }));
      return;
    }
    const json = body.length ? (JSON.parse(body.toString('utf8')) as Json) : {};
    // The batch APIs are authorized as their single-message actions.
    const action = `${service}:${service === 'sqs' ? operation.replace(/Batch$/, '') : operation}`;
    if (service === 'states') {
      // Step Functions authorizes an answer on the machine of the token's execution: only the fake knows it.
      log.add({ fn, action, resource: states.resourceOf(operation, json), by: 'code' });
      const answer = states.answer(operation, json);
      response.writeHead(answer.status, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': randomBytes(8).toString('hex'),
      });
      response.end(JSON.stringify(answer.body));
      return;
    }
    for (const resource of resourcesOfCall(service, operation, json, upstreams)) log.add({ fn, action, resource, by: 'code' });

    if (service === 'ssm' || service === 'secretsmanager' || service === 'events') {
      const answer = service === 'events' ? bus.answer(fn, json) : parameters.answer(action, json);
      response.writeHead(answer.status, {
        'content-type': 'application/x-amz-json-1.1',
        'x-amzn-requestid': randomBytes(8).toString('hex'),
      });
      response.end(JSON.stringify(answer.body));
      return;
    }
    const upstream = service === 'dynamodb' ? upstreams.dynamodb : upstreams.sqs;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || ['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const forwarded = await fetch(new URL(request.url ?? '/', upstream), {
      method: request.method ?? 'POST',
      headers,
      body: new Uint8Array(body),
    });
    const out = Buffer.from(await forwarded.arrayBuffer());
    const outHeaders: Record<string, string> = {};
    forwarded.headers.forEach((value, name) => {
      if (!['content-encoding', 'transfer-encoding', 'connection', 'content-length'].includes(name)) outHeaders[name] = value;
    });
    response.writeHead(forwarded.status, outHeaders);
    response.end(out);
  }

  /**
   * A fake OTLP endpoint, as X-Ray's (`/v1/traces`): an export of spans signed with SigV4 for the
   * `xray` service is recorded as `xray:PutSpans` on `*` (X-Ray has no resource-level permissions
   * for it) and answered with an empty `ExportTraceServiceResponse`; anything else as unknown.
   */
  function acceptSpans(request: IncomingMessage, response: ServerResponse, body: Buffer): void {
    const signed = /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(String(request.headers['authorization'] ?? ''));
    const protobuf = request.headers['content-type'] === 'application/x-protobuf' && body.length > 0;
    const action = signed?.[1] === 'xray' && protobuf ? 'xray:PutSpans' : `unknown:POST /v1/traces (${signed?.[1] ?? 'unsigned'})`;
    log.add({ fn, action, resource: '*', by: 'code' });
    response.writeHead(action === 'xray:PutSpans' ? 200 : 403, { 'content-type': 'application/x-protobuf' });
    response.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
