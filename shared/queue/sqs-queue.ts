import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { TaskMessage, TaskQueue } from './queue.ts';

/** {@link TaskQueue} on Amazon SQS: one `SendMessage` per message. */
export class SqsTaskQueue implements TaskQueue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(options: { client: SQSClient; queueUrl: string }) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
  }

  async send(message: TaskMessage, options?: { delaySeconds?: number }): Promise<void> {
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: this.#queueUrl,
        MessageBody: JSON.stringify({ taskId: message.taskId, reason: message.reason, ...(message.link ? { link: message.link } : {}) }),
        DelaySeconds: options?.delaySeconds,
      }),
    );
  }
}
