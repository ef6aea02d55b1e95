import { setTimeout as delay } from 'node:timers/promises';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';
import { errorName, type Log } from '../../shared/log.ts';

/** An SQS Lambda handler with partial batch responses (`ReportBatchItemFailures`). */
// biome-ignore lint/suspicious/noConfusingVoidType: a Lambda SQS handler may return nothing, as aws-lambda's own types say
export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface PollerOptions {
  client: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  handler: SqsHandler;
  /** Records per invocation, as the event source mapping's `batchSize` (1–10; default 10). */
  batchSize?: number;
  /** Invocations (batches) in flight at once, as the mapping's `maxConcurrency` (default 2, Lambda's least). */
  maxConcurrency?: number;
  /** Long-poll wait; short so that `stop()` returns quickly. */
  waitTimeSeconds?: number;
  /** Diagnostic lines (names and ids only: never bodies). */
  log: Log;
}

export interface Poller {
  /** Stops polling; resolves once the batches in hand (if any) have been handled. */
  stop(): Promise<void>;
  /** Batches being handled right now, and the most there ever were at once. */
  stats(): { inFlight: number; peak: number };
}

const SYSTEM_ATTRIBUTES = ['ApproximateReceiveCount', 'SentTimestamp', 'SenderId', 'ApproximateFirstReceiveTimestamp'] as const;
const RETRY_DELAY_MS = 1000;

/**
 * Emulates the Lambda SQS event source mapping with `ReportBatchItemFailures`:
 * long-poll a batch, invoke the handler with an `SQSEvent`, delete the records
 * it did not report as failed. Up to `maxConcurrency` batches are handled at
 * once, as Lambda runs concurrent invocations: the loop receives again as
 * soon as a slot is free, never waiting for a slow batch to finish. Failed
 * records are left alone, so they reappear after the visibility timeout and reach the dead-letter queue after
 * `maxReceiveCount` receives — the queue's redrive policy, not this loop,
 * decides that, as on AWS. A handler that throws fails the whole batch.
 */
export function startPoller(options: PollerOptions): Poller {
  const abort = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let peak = 0;
  let slotFreed: (() => void) | undefined;

  const loop = run();

  async function run(): Promise<void> {
    while (!abort.signal.aborted) {
      if (inFlight.size >= (options.maxConcurrency ?? 2)) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        continue;
      }
      const messages = await receive(options, abort.signal);
      if (messages === undefined) return;
      // An empty receive has already waited `WaitTimeSeconds` (a failed one, its retry delay): no busy loop.
      if (messages.length === 0) continue;
      const batch = deliver(options, messages).finally(() => {
        inFlight.delete(batch);
        slotFreed?.();
        slotFreed = undefined;
      });
      inFlight.add(batch);
      peak = Math.max(peak, inFlight.size);
    }
  }

  return {
    async stop() {
      abort.abort();
      slotFreed?.();
      await loop;
      await Promise.all(inFlight);
    },
    stats: () => ({ inFlight: inFlight.size, peak }),
  };
}

/**
 * One long poll: the messages received (none after an empty wait, or after a
 * failed receive, logged and waited out so an unreachable queue is not
 * spun on); `undefined` once the poller stops.
 */
async function receive(options: PollerOptions, signal: AbortSignal): Promise<Message[] | undefined> {
  try {
    const received = await options.client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: options.batchSize ?? 10,
        WaitTimeSeconds: options.waitTimeSeconds ?? 1,
        MessageSystemAttributeNames: [...SYSTEM_ATTRIBUTES],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: signal },
    );
    return received.Messages ?? [];
  } catch (error) {
    if (signal.aborted) return undefined;
    options.log({ event: 'poll-error', queueArn: options.queueArn, error: errorName(error) });
    await delay(RETRY_DELAY_MS, undefined, { signal }).catch(() => {});
    return [];
  }
}

/** One invocation: the batch to the handler, then the records it did not report failed off the queue. */
async function deliver(options: PollerOptions, messages: Message[]): Promise<void> {
  const records = messages.map((message) => toRecord(message, options.queueArn, options.region));
  let failed: Set<string>;
  try {
    failed = failedIds(await options.handler({ Records: records }), records);
  } catch (error) {
    options.log({ event: 'batch-failed', queueArn: options.queueArn, records: records.length, error: errorName(error) });
    return;
  }
  const done = records.filter((record) => !failed.has(record.messageId));
  if (done.length > 0) await deleteHandled(options, done);
}

/** Deletes handled records; a record that could not be deleted is simply delivered again (handlers are idempotent). */
async function deleteHandled(options: PollerOptions, done: SQSRecord[]): Promise<void> {
  try {
    const result = await options.client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((record, i) => ({ Id: String(i), ReceiptHandle: record.receiptHandle })),
      }),
    );
    if (result.Failed?.length) options.log({ event: 'delete-failed', queueArn: options.queueArn, records: result.Failed.length });
  } catch (error) {
    options.log({ event: 'delete-failed', queueArn: options.queueArn, records: done.length, error: errorName(error) });
  }
}

/**
 * The message ids to keep on the queue. As Lambda does, a response naming an
 * empty or unknown `itemIdentifier` counts as a failure of the whole batch.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: what an SqsHandler resolves to
function failedIds(response: SQSBatchResponse | void, records: SQSRecord[]): Set<string> {
  const ids = new Set(records.map((record) => record.messageId));
  const failures = response?.batchItemFailures ?? [];
  if (failures.some((failure) => !failure.itemIdentifier || !ids.has(failure.itemIdentifier))) return ids;
  return new Set(failures.map((failure) => failure.itemIdentifier));
}

/** One received message as Lambda presents it in an `SQSEvent`. */
function toRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  const messageAttributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      stringValue: value.StringValue,
      binaryValue: value.BinaryValue ? Buffer.from(value.BinaryValue).toString('base64') : undefined,
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((item) => Buffer.from(item).toString('base64')),
    };
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? '',
      SenderId: attributes.SenderId ?? '',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '',
    } satisfies SQSRecordAttributes,
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}
