/**
 * What the task actions keep of the request's span: a created task keeps
 * its context on the row (inside the create's one write: no request of its
 * own), and a resume's queue message carries it, for the run to link.
 */
import type { TaskMessage } from '../queue/queue.ts';
import { TASK_ATTRIBUTES } from './names.ts';
import { type TraceContext, type Tracing, tracingOf } from './tracing.ts';

/** The trace fields of a task created inside the active span (none when tracing is off or the span is not sampled). */
export function createdIn(deps: { tracing?: Tracing | undefined }, taskId: string): { trace?: TraceContext } {
  const tracing = tracingOf(deps);
  if (!tracing.enabled) return {};
  tracing.annotate({ [TASK_ATTRIBUTES.taskId]: taskId });
  const context = tracing.current();
  if (!context) return {};
  return { trace: context };
}

/** The link a resume's message carries: the context of the span that resumed the task (which gets the task's id). */
export function resumeLink(deps: { tracing?: Tracing | undefined }, taskId: string, reason: TaskMessage['reason']): { link?: string } {
  const tracing = tracingOf(deps);
  if (reason !== 'resume' || !tracing.enabled) return {};
  tracing.annotate({ [TASK_ATTRIBUTES.taskId]: taskId });
  const context = tracing.current();
  return context ? { link: context.traceparent } : {};
}

/**
 * Runs `fn` (what an outside party's delivery does: a callback's completion,
 * a workflow's end) in a span of its own, so that the resume it queues links
 * it: `parent` is the delivery's own context, when it carried one.
 */
export function deliverySpan<T>(
  deps: { tracing?: Tracing | undefined },
  name: string,
  kind: 'server' | 'consumer',
  fn: () => Promise<T>,
  parent?: TraceContext,
): Promise<T> {
  const tracing = tracingOf(deps);
  return tracing.enabled ? tracing.span({ name, kind, parent: parent ?? null }, () => fn()) : fn();
}
