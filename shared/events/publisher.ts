/**
 * Where lifecycle events go, and how a function sends them.
 *
 * {@link EventPublisher} is the port: EventBridge when deployed
 * (`eventbridge.ts`, imported by path only by the functions that publish),
 * a printed line under `npm start` (`bin/local/events.ts`), a list in memory
 * in tests ({@link MemoryEventPublisher}).
 *
 * {@link LifecycleEvents} is what the functions call after a state write:
 * it publishes what the written row implies (`eventsOf`), retries a bounded
 * number of times, and then logs and counts what it could not deliver. It
 * never throws: the task's outcome is already written, and an event is a
 * notice of it, never a condition of it. Delivery is at most once (see
 * docs/operators.md, "Lifecycle events").
 */

import { delay } from '../delay.ts';
import { errorName, type Log } from '../log.ts';
import { withMetrics } from '../metrics.ts';
import type { TaskRecord } from '../tasks/model.ts';
import { type EventContext, eventsOf, type TaskEvent } from './task-events.ts';

/** Sends task events. */
export interface EventPublisher {
  /**
   * Sends `events` (at most 10, one request). Resolves to those not accepted
   * (a partial failure: retry them); rejects when the request failed as a whole.
   */
  put(events: readonly TaskEvent[]): Promise<readonly TaskEvent[]>;
}

/** Keeps the events it is given, in order (tests, and anything that reads events in process). */
export class MemoryEventPublisher implements EventPublisher {
  readonly events: TaskEvent[] = [];

  async put(events: readonly TaskEvent[]): Promise<readonly TaskEvent[]> {
    this.events.push(...structuredClone(events));
    return [];
  }
}

/** Attempts per set of events (the first and two retries); the delays double from {@link RETRY_DELAY_MS}. */
export const PUBLISH_ATTEMPTS = 3;

/** The delay before the first retry; the second waits twice as long. */
const RETRY_DELAY_MS = 100;

/** What {@link LifecycleEvents} is built from, once per function. */
export interface LifecycleEventsDeps {
  publisher: EventPublisher;
  log: Log;
  /** The link, the titles and the input deadline events are derived with. */
  context: EventContext;
  /** Default {@link PUBLISH_ATTEMPTS}. */
  attempts?: number;
  /** Default {@link RETRY_DELAY_MS}. */
  retryDelayMs?: number;
}

/** Publishes the events a task's written row implies; see the module's comment. */
export class LifecycleEvents {
  readonly #deps: LifecycleEventsDeps;

  constructor(deps: LifecycleEventsDeps) {
    this.#deps = deps;
  }

  /**
   * Publishes what `task` (as just written) implies, if anything. Call it
   * after the write, never before: a publish that fails, or a crash between
   * the write and the publish, loses the event and leaves the task as
   * written. Never throws; what could not be sent after the last attempt is
   * logged (`events-failed`) and counted (`EventsFailed`).
   */
  async announce(task: TaskRecord): Promise<void> {
    const { publisher, log, context } = this.#deps;
    const attempts = this.#deps.attempts ?? PUBLISH_ATTEMPTS;
    const delayMs = this.#deps.retryDelayMs ?? RETRY_DELAY_MS;
    let pending: readonly TaskEvent[] = eventsOf(task, context);
    let failure: unknown;
    for (let attempt = 1; attempt <= attempts && pending.length > 0; attempt += 1) {
      if (attempt > 1) await delay(delayMs * 2 ** (attempt - 2));
      try {
        pending = await publisher.put(pending);
        failure = undefined;
      } catch (error) {
        // Kept for the log line below; the next attempt sends the same events.
        failure = error;
      }
    }
    if (pending.length === 0) return;
    log(
      withMetrics(
        {
          event: 'events-failed',
          taskId: task.taskId,
          detailTypes: pending.map((event) => event.detailType),
          attempts,
          error: failure === undefined ? 'entries-refused' : errorName(failure),
        },
        { EventsFailed: pending.length },
      ),
    );
  }
}
