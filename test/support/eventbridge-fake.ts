/**
 * A small stand-in for EventBridge's `PutEvents` (there is no emulator of
 * EventBridge here): an HTTP server on 127.0.0.1 that speaks the AWS JSON 1.1
 * protocol the SDK's EventBridge client uses (`X-Amz-Target:
 * AWSEvents.PutEvents`), keeps every entry it accepts with the time it
 * arrived, and can be told to fail the next requests, as a whole (HTTP 500)
 * or entry by entry (`FailedEntryCount`). The deployment lane's proxy answers
 * with the same {@link answerPutEvents}.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One entry as `PutEvents` received it, `Detail` parsed. */
export interface ReceivedEvent {
  eventBusName: string;
  source: string;
  detailType: string;
  detail: Record<string, any>;
  /** The entry's `Time` (epoch ms), when it had one. */
  time?: number;
  /** When the request carrying it arrived here (epoch ms). */
  receivedAt: number;
}

/** How the next requests fail: `error` answers HTTP 500, `refuse` accepts the request and refuses every entry. */
export type PutFailure = 'error' | 'refuse';

/** The answer to one `PutEvents` body: accepted entries are added to `accepted`. */
export function answerPutEvents(
  body: Record<string, any>,
  accepted: ReceivedEvent[],
  failure?: PutFailure,
): { status: number; body: Record<string, unknown> } {
  if (failure === 'error') return { status: 500, body: { __type: 'InternalException', message: 'The fake was told to fail' } };
  const entries = (body['Entries'] ?? []) as Array<Record<string, any>>;
  if (failure === 'refuse') {
    return {
      status: 200,
      body: {
        FailedEntryCount: entries.length,
        Entries: entries.map(() => ({ ErrorCode: 'InternalFailure', ErrorMessage: 'The fake was told to refuse' })),
      },
    };
  }
  const receivedAt = Date.now();
  for (const entry of entries) {
    accepted.push({
      eventBusName: String(entry['EventBusName']),
      source: String(entry['Source']),
      detailType: String(entry['DetailType']),
      detail: JSON.parse(String(entry['Detail'])) as Record<string, any>,
      ...(entry['Time'] === undefined ? {} : { time: Math.round(Number(entry['Time']) * 1000) }),
      receivedAt,
    });
  }
  return { status: 200, body: { FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: randomUUID() })) } };
}

export interface EventBridgeFake {
  /** The endpoint to give the SDK client. */
  url: string;
  /** Every entry accepted, in order. */
  events: ReceivedEvent[];
  /** Every `PutEvents` request that arrived (accepted or not), with its arrival time and the task ids of its entries. */
  requests: Array<{ receivedAt: number; taskIds: string[]; failed?: PutFailure }>;
  /** Fails the next `count` requests as `how`. */
  failNext(count: number, how: PutFailure): void;
  close(): Promise<void>;
}

export async function startEventBridgeFake(): Promise<EventBridgeFake> {
  const events: ReceivedEvent[] = [];
  const requests: EventBridgeFake['requests'] = [];
  const failures: PutFailure[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target'] ?? '');
      const reply = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
        response.end(JSON.stringify(body));
      };
      if (target !== 'AWSEvents.PutEvents') {
        reply(400, { __type: 'UnknownOperationException', message: `The fake implements PutEvents only, not ${target}` });
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, any>;
      const failed = failures.shift();
      const taskIds = ((body['Entries'] ?? []) as Array<Record<string, any>>).map(
        (entry) => (JSON.parse(String(entry['Detail'])) as { taskId?: string }).taskId ?? '',
      );
      requests.push({ receivedAt: Date.now(), taskIds, ...(failed ? { failed } : {}) });
      const answer = answerPutEvents(body, events, failed);
      reply(answer.status, answer.body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    requests,
    failNext(count, how) {
      for (let i = 0; i < count; i++) failures.push(how);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
