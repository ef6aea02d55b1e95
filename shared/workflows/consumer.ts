/**
 * The consumer of the executions' status-change events (the rule on the
 * default bus delivers them to the workflow-events function; `npm start`'s
 * emulator hands them over in process): an execution's end is recorded on
 * its task, exactly once (first wins), then the task is enqueued (a failed
 * enqueue is logged and left to the sweeper), and its run ends it as the
 * execution ended. RUNNING and PENDING_REDRIVE, a repeated event, an event of
 * an execution the task does not follow and one that comes after the task
 * ended change nothing: a redrive after the task ended is not followed.
 */
import { type ActionStore, TaskActions } from '../actions/task-actions.ts';
import { readExecutionEvent } from '../engines/stepfunctions/index.ts';
import type { Log } from '../log.ts';
import type { TaskQueue } from '../queue/queue.ts';
import { deliverySpan } from '../tracing/actions.ts';
import type { Tracing } from '../tracing/tracing.ts';
import { expectedBy, type WorkflowBindings } from './bindings.ts';

export interface ConsumerDeps {
  store: ActionStore;
  queue: TaskQueue;
  bindings: WorkflowBindings;
  log: Log;
  now?: () => number;
  /** Spans of each delivery (absent: the installed tracing, off by default). */
  tracing?: Tracing | undefined;
}

/** What the consumer did with an event: recorded an end (and what that did), or ignored the event. */
export type Consumed = { recorded: string } | { ignored: string };

export function workflowEventConsumer(deps: ConsumerDeps): (event: unknown) => Promise<Consumed> {
  const actions = new TaskActions({
    store: deps.store,
    queue: deps.queue,
    log: deps.log,
    now: deps.now ?? Date.now,
    tracing: deps.tracing,
  });
  const expected = expectedBy(deps.bindings);
  return async (event) => {
    const read = readExecutionEvent(event);
    if (read.kind === 'ignored') {
      deps.log({ event: 'workflow-event-ignored', reason: read.reason, ...(read.status ? { status: read.status } : {}) });
      return { ignored: read.reason };
    }
    const { taskId, end } = read;
    const result = await deliverySpan(deps, 'workflow end', 'consumer', () => actions.endWorkflow(taskId, end, expected));
    deps.log({ event: 'workflow-event', taskId, status: end.status, result });
    return { recorded: result };
  };
}
