import type { LifecycleEvents } from '../events/publisher.ts';
import { errorName, type Log } from '../log.ts';
import { logTaskEnded, withMetrics } from '../metrics.ts';
import { parseTaskMessage } from '../queue/queue.ts';
import type { TaskStore } from '../tasks/store.ts';
import { EXHAUSTED_ERROR } from './worker.ts';

export interface DeadLetterDeps {
  store: Pick<TaskStore, 'fail' | 'loadJournal'>;
  log: Log;
  now?: () => number;
  /** Lifecycle events of the tasks ended here; absent: none. */
  events?: LifecycleEvents;
}

/** The diagnostic `statusMessage` of a task ended by a dead-lettered message. */
export const DEAD_LETTERED_MESSAGE = 'The task failed repeatedly and was abandoned after its last attempt';

/**
 * What a message that reached the dead-letter queue (its last delivery
 * failed) does to its task: the task is marked `failed` with
 * {@link EXHAUSTED_ERROR} and a diagnostic `statusMessage` (spec item 48), so
 * the client stops polling a task that will never finish.
 *
 * A message dead-lettered while the task kept recording steps (runs that died
 * after useful work, each recovered by the sweeper) does not end the task:
 * the worker's attempt cap, which counts progress, decides. That progress is
 * credited once: the next message dead-lettered without new steps ends the
 * task (the store compares the journal's step count with the task's mark).
 *
 * Resolves to whether the message was handled (a malformed one is: there is
 * nothing to mark failed); false when the store could not be read or
 * written, and the message must stay in the queue to be tried again.
 */
export async function handleDeadLetter(deps: DeadLetterDeps, body: string): Promise<boolean> {
  const { store, log } = deps;
  const message = parseTaskMessage(body);
  if (!message) {
    log({ event: 'malformed-message' }); // nothing to mark failed
    return true;
  }
  const { taskId } = message;
  try {
    const steps = (await store.loadJournal(taskId)).size;
    const at = (deps.now ?? Date.now)();
    const ended = await store.fail(taskId, { error: EXHAUSTED_ERROR, statusMessage: DEAD_LETTERED_MESSAGE, now: at, steps });
    const changed = ended !== undefined;
    log(
      changed
        ? withMetrics({ event: 'dead-lettered', taskId, changed }, { TasksDeadLettered: 1 }, at)
        : { event: 'dead-lettered', taskId, changed, steps },
    );
    if (ended) {
      logTaskEnded(log, ended, 'failed', at);
      // After the write; it never throws, so the message is handled whatever becomes of the event.
      await deps.events?.announce(ended);
    }
    return true;
  } catch (error) {
    log({ event: 'dead-letter-error', taskId, error: errorName(error) });
    return false;
  }
}
