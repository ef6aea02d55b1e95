import type { TaskMessage, TaskQueue } from './queue.ts';

/** An in-process {@link TaskQueue} that hands each message to a consumer callback. */
export class InMemoryTaskQueue implements TaskQueue {
  readonly sent: TaskMessage[] = [];
  #consumer: ((message: TaskMessage) => Promise<void>) | undefined;

  /** Delivers every message sent from now on to `consumer` (asynchronously). */
  consume(consumer: (message: TaskMessage) => Promise<void>): void {
    this.#consumer = consumer;
  }

  async send(message: TaskMessage, options?: { delaySeconds?: number }): Promise<void> {
    this.sent.push({ ...message });
    const consumer = this.#consumer;
    if (!consumer) return;
    setTimeout(() => void consumer({ ...message }), (options?.delaySeconds ?? 0) * 1000);
  }
}
