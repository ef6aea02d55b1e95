/**
 * The task lifecycle events: the contract operators write rules against
 * (`source`, `detail-type`, the `detail` of each, versioned by
 * `detail.version`; docs/operators.md), and {@link eventsOf}, the one pure
 * derivation of the events a task's row implies. Every function publishes
 * what `eventsOf` gives for the row it has just written, and the task page
 * lists what it gives for the row it reads, so the two never disagree and the
 * page needs no storage of its own.
 *
 * What an event carries is chosen here once: ids, the tool's name, the
 * status, times, the task page's link and, for a question, the tool's words
 * only where the tool allowed it ({@link EVENT_MESSAGE_META}). Never the
 * arguments, the answers, the result, the error's message or the owner.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */

import type { DeploymentLinks } from '../links.ts';
import type { InputRequest, TaskRecord, TaskStatus } from '../tasks/model.ts';
import { EVENT_MESSAGE_META, forPersonOnly } from '../tasks/model.ts';
import { traceIdOf } from '../tracing/tracing.ts';

/** The events' `source`. */
export const EVENT_SOURCE = 'dev.mcp-tasks-serverless';

/**
 * `detail.version` of the events this code writes. Within a version fields
 * are only added; a field removed, renamed or given another meaning makes
 * the next version.
 */
export const EVENTS_VERSION = 1;

/** The events' `detail-type`, by what happened. */
export const DETAIL_TYPES = {
  question: 'Task Waiting For Person',
  completed: 'Task Completed',
  failed: 'Task Failed',
  cancelled: 'Task Cancelled',
} as const;

export type DetailType = (typeof DETAIL_TYPES)[keyof typeof DETAIL_TYPES];

/** The longest question message an event carries (characters): one event stays one 64 KB billing unit. */
export const MAX_EVENT_MESSAGE_CHARS = 1000;

/** Fields every event's `detail` has. */
interface DetailBase {
  version: typeof EVENTS_VERSION;
  /** Stable for one happening: the same for a retried publish and for the row read later (deduplicate on it). */
  eventId: string;
  taskId: string;
  /** The tool's name. */
  tool: string;
  /** ISO 8601. */
  createdAt: string;
  /** The task's trace id (32 hex digits), when it was created in a traced request: its spans' trace. */
  traceId?: string;
}

/** `Task Waiting For Person`: the task waits for an answer only a person may give. */
export interface PersonQuestionDetail extends DetailBase {
  status: 'input_required';
  /** When the question was asked (ISO 8601). */
  openedAt: string;
  /** When the wait ends and the task fails unanswered (ISO 8601; absent when the deployment sets no limit). */
  deadline?: string;
  /** The task's page, where the question is answered (absent when the deployment's URL is not known). */
  taskUrl?: string;
  /** The open questions for a person: the message where the tool allowed it, else the tool's title. */
  questions: Array<{ key: string; message: string }>;
}

/** `Task Completed`, `Task Failed`, `Task Cancelled`: the task ended. */
export interface TaskEndedDetail extends DetailBase {
  status: Exclude<TaskStatus, 'working' | 'input_required'>;
  /** ISO 8601. */
  endedAt: string;
  /** From creation to the end. */
  durationMs: number;
  /** A failed task's JSON-RPC error code (its message stays in the task). */
  errorCode?: number;
}

/** One event, as a publisher sends it. */
export interface TaskEvent {
  detailType: DetailType;
  /** When it happened (epoch ms): the event's `time`. */
  time: number;
  detail: PersonQuestionDetail | TaskEndedDetail;
}

/** What {@link eventsOf} needs besides the row. */
export interface EventContext {
  /** Builds the task page's link (`TASKS_PUBLIC_URL`). */
  links: DeploymentLinks;
  /** A tool's title by name: what stands in for a question's message the tool keeps out of events. */
  titleOf?: (tool: string) => string | undefined;
  /**
   * `TASKS_MAX_INPUT_WAIT_MS`: a question is dated from its deadline, which
   * answers to some of a set of questions leave alone (they do move
   * `lastUpdatedAt`).
   */
  maxInputWaitMs?: number;
}

/**
 * The events `task`'s row implies as it is now: a `Task Waiting For Person`
 * while it waits on questions only a person may answer, one end event once
 * it ended, nothing otherwise (working, or waiting on questions a client's
 * model may answer). A row keeps no answered question, so the questions of
 * a task that went on are not among them.
 */
export function eventsOf(task: TaskRecord, context: EventContext): TaskEvent[] {
  const base: Omit<DetailBase, 'eventId'> = {
    version: EVENTS_VERSION,
    taskId: task.taskId,
    tool: task.tool,
    createdAt: iso(task.createdAt),
    ...traceOf(task),
  };
  switch (task.status) {
    case 'working':
      return [];
    case 'input_required': {
      const open = Object.entries(task.inputRequests).filter(([, request]) => forPersonOnly(request));
      if (open.length === 0) return [];
      const title = context.titleOf?.(task.tool) ?? task.tool;
      const deadline = task.sweepAt;
      const openedAt =
        deadline !== undefined && context.maxInputWaitMs !== undefined ? deadline - context.maxInputWaitMs : task.lastUpdatedAt;
      const taskUrl = context.links.taskPage(task.taskId);
      const detail: PersonQuestionDetail = {
        ...base,
        eventId: `${task.taskId}:question:${openedAt}`,
        status: 'input_required',
        openedAt: iso(openedAt),
        ...(deadline === undefined ? {} : { deadline: iso(deadline) }),
        ...(taskUrl === undefined ? {} : { taskUrl }),
        questions: open.map(([key, request]) => ({ key, message: messageOf(request) ?? title })),
      };
      return [{ detailType: DETAIL_TYPES.question, time: openedAt, detail }];
    }
    default: {
      const detail: TaskEndedDetail = {
        ...base,
        eventId: `${task.taskId}:${task.status}`,
        status: task.status,
        endedAt: iso(task.lastUpdatedAt),
        durationMs: Math.max(0, task.lastUpdatedAt - task.createdAt),
        ...(task.status === 'failed' ? { errorCode: task.error.code } : {}),
      };
      return [{ detailType: DETAIL_TYPES[task.status], time: task.lastUpdatedAt, detail }];
    }
  }
}

/** The question's message when its tool let it go out in events (cut to {@link MAX_EVENT_MESSAGE_CHARS}). */
function messageOf(request: InputRequest): string | undefined {
  const meta = request.params?.['_meta'] as Record<string, unknown> | undefined;
  const message = request.params?.['message'];
  if (meta?.[EVENT_MESSAGE_META] !== true || typeof message !== 'string' || message === '') return undefined;
  return message.length > MAX_EVENT_MESSAGE_CHARS ? `${message.slice(0, MAX_EVENT_MESSAGE_CHARS - 1)}…` : message;
}

function traceOf(task: TaskRecord): { traceId?: string } {
  const traceId = traceIdOf(task.traceparent);
  return traceId === undefined ? {} : { traceId };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
