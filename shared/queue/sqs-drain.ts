import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A message taken from a queue, to be deleted once handled. */
export interface DrainedMessage {
  messageId: string;
  body: string;
  receiptHandle: string;
}

/** A queue read by its consumer itself rather than by an event source mapping. */
export interface MessageSource {
  /** Up to 10 messages, without waiting for any (an empty queue costs one request). */
  receive(): Promise<DrainedMessage[]>;
  /** Deletes handled messages (one request for up to 10). */
  delete(messages: DrainedMessage[]): Promise<void>;
}

/** {@link MessageSource} on Amazon SQS: `ReceiveMessage` with no wait, `DeleteMessageBatch`. */
export class SqsMessageSource implements MessageSource {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(options: { client: SQSClient; queueUrl: string }) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
  }

  async receive(): Promise<DrainedMessage[]> {
    const { Messages } = await this.#client.send(
      new ReceiveMessageCommand({ QueueUrl: this.#queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    return (Messages ?? []).flatMap((m) =>
      m.MessageId && m.ReceiptHandle ? [{ messageId: m.MessageId, body: m.Body ?? '', receiptHandle: m.ReceiptHandle }] : [],
    );
  }

  async delete(messages: DrainedMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const { Failed } = await this.#client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.#queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.receiptHandle })),
      }),
    );
    if (Failed?.length) throw new Error(`${Failed.length} handled message(s) could not be deleted; they will be handled again`);
  }
}
