/**
 * {@link EventPublisher} on an EventBridge bus: one `PutEvents` request per
 * set of events. Imported by path by the functions that publish, so that no
 * other module pulls the EventBridge client into a bundle.
 */
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { EventPublisher } from './publisher.ts';
import { EVENT_SOURCE, type TaskEvent } from './task-events.ts';

/** `PutEvents` takes at most this many entries. */
export const MAX_ENTRIES_PER_PUT = 10;

/** Sends task events to one bus, with the events' `source`, as one `PutEvents` request per set. */
export class EventBridgePublisher implements EventPublisher {
  readonly #client: EventBridgeClient;
  readonly #busName: string;

  /** `busName`: the bus's name or ARN. The client is created once by the composition root. */
  constructor(options: { client: EventBridgeClient; busName: string }) {
    this.#client = options.client;
    this.#busName = options.busName;
  }

  /**
   * `PutEvents` answers 200 even when it refused some entries: those carry an
   * `ErrorCode` at their index (the answer lists the entries in the request's
   * order) and are what this resolves to, for the caller to retry.
   */
  async put(events: readonly TaskEvent[]): Promise<readonly TaskEvent[]> {
    if (events.length === 0) return [];
    if (events.length > MAX_ENTRIES_PER_PUT) throw new RangeError(`PutEvents takes at most ${MAX_ENTRIES_PER_PUT} entries`);
    const output = await this.#client.send(
      new PutEventsCommand({
        Entries: events.map((event) => ({
          EventBusName: this.#busName,
          Source: EVENT_SOURCE,
          DetailType: event.detailType,
          Detail: JSON.stringify(event.detail),
          Time: new Date(event.time),
        })),
      }),
    );
    if (!output.FailedEntryCount) return [];
    // Without per-entry results there is no telling which were taken: all are retried.
    if (output.Entries?.length !== events.length) return events;
    return events.filter((_, index) => output.Entries?.[index]?.ErrorCode !== undefined);
  }
}
