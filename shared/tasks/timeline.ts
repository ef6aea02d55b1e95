/**
 * A task's life as phases in order (`phases.ts`), read from its row: the
 * moments it recorded (`moments.ts`), who decided its questions for a
 * person (`decisions`), and what its callbacks and workflow posted
 * (`callbacks`). `ops trace` prints it as a waterfall and the task's page
 * draws it; neither needs more than the row.
 *
 * Rows written before moments were recorded have none: their timeline is
 * one phase from the creation to the last change (or now), named by the
 * status, marked `recorded: false`.
 *
 * No AWS SDK and no Node here: the console's pages and the terminal share it.
 */
import { forPersonOnly, isTerminal, type TaskRecord } from './model.ts';
import { type Span, spansOf } from './moments.ts';
import type { Moment, Phase } from './phases.ts';
import { WORKFLOW_END_ID, WORKFLOW_QUESTION_PREFIX } from './workflows-model.ts';

/** The trace id of a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`). */
const TRACE_ID = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Who decided a question for a person, and when (never what they answered). */
export interface TimelineAnswer {
  key: string;
  by: string;
  name?: string;
  as: 'owner' | 'approver';
  via: 'page' | 'client';
  at: number;
}

/** Something an outside system posted: a callback's completion, a workflow's question or its end. */
export interface TimelineArrival {
  /** The callback's id (`workflow` for the execution's end; `workflow-question:<id>` for a question). */
  id: string;
  at: number;
  /** `error`: the callback posted a failure; a workflow's end says its status. */
  outcome: string;
}

/** One phase of the timeline. */
export interface TimelinePhase {
  phase: Phase;
  from: number;
  to: number;
  ms: number;
  /** Its part of the whole, 0 to 1. */
  share: number;
  /** Still going (the last phase of an unfinished task). */
  open?: true;
  /** Which run it is (`run` and `recovered`: 1, 2, …). */
  run?: number;
  /** Questions decided in it (a wait for a person). */
  answers?: TimelineAnswer[];
  /** What outside systems posted in it (a wait for a callback or the workflow). */
  arrivals?: TimelineArrival[];
  /** `earlier`: the time each phase took before the moments kept, and the runs in it. */
  summary?: { totals: Partial<Record<Phase, number>>; runs: number; moments: number };
}

/** A task's timeline. */
export interface Timeline {
  taskId: string;
  tool: string;
  status: TaskRecord['status'];
  createdAt: number;
  /** The end (a finished task) or now. */
  until: number;
  ms: number;
  phases: TimelinePhase[];
  /** When it ended (absent: still going). */
  endedAt?: number;
  runs: number;
  retries: number;
  recoveries: number;
  /** `false`: the row was written before moments were recorded (one phase, named by the status). */
  recorded: boolean;
  /** The task's trace (the trace of the request that created it), when tracing was on then. */
  traceId?: string;
}

/** The timeline of `task` at `now`. */
export function timelineOf(task: TaskRecord, now: number): Timeline {
  const moments = task.moments ?? [];
  const end = moments.findLast((moment) => moment.kind === 'end');
  const endedAt = isTerminal(task.status) ? (end?.at ?? task.lastUpdatedAt) : undefined;
  const until = Math.max(task.createdAt, endedAt ?? now);
  const spans = task.moments === undefined ? [unrecordedSpan(task, until)] : spansOf(task.createdAt, moments, until);
  const ms = until - task.createdAt;
  const answers = answersOf(task);
  const arrivals = arrivalsOf(task);
  let run = 0;
  const phases = spans.map((span, index) => {
    if (span.phase === 'run' || span.phase === 'recovered') run += 1;
    const open = endedAt === undefined && index === spans.length - 1;
    return phaseOf(span, { ms, open, run, answers, arrivals });
  });
  const counted = (kind: Moment['kind']) => moments.filter((moment) => moment.kind === kind).length;
  const earlier = moments.find((moment) => moment.kind === 'earlier');
  return {
    taskId: task.taskId,
    tool: task.tool,
    status: task.status,
    createdAt: task.createdAt,
    until,
    ms,
    phases,
    ...(endedAt === undefined ? {} : { endedAt }),
    runs: counted('claim') + (earlier?.runs ?? 0),
    retries: counted('retry') + counted('redelivery'),
    recoveries: phases.filter((phase) => phase.phase === 'recovered').length,
    recorded: task.moments !== undefined,
    ...traceOf(task),
  };
}

/** The task's trace id as a field to spread, from the trace context its row keeps. */
function traceOf(task: TaskRecord): { traceId?: string } {
  const traceId = task.traceparent === undefined ? undefined : TRACE_ID.exec(task.traceparent)?.[1];
  return traceId === undefined ? {} : { traceId };
}

/** A row without moments: one span from its creation, named by what it is doing now. */
function unrecordedSpan(task: TaskRecord, until: number): Span {
  if (task.status !== 'input_required') return { phase: 'run', from: task.createdAt, to: until };
  const person = Object.values(task.inputRequests).some(forPersonOnly);
  return { phase: person ? 'wait:person' : 'wait:client', from: task.createdAt, to: until };
}

interface PhaseContext {
  ms: number;
  open: boolean;
  run: number;
  answers: readonly TimelineAnswer[];
  arrivals: readonly TimelineArrival[];
}

function phaseOf(span: Span, context: PhaseContext): TimelinePhase {
  const ms = span.to - span.from;
  const within = <T extends { at: number }>(items: readonly T[]) => items.filter((item) => item.at >= span.from && item.at <= span.to);
  const answers = span.phase === 'wait:person' ? within(context.answers) : [];
  const arrivals = span.phase === 'wait:callback' || span.phase === 'wait:workflow' ? within(context.arrivals) : [];
  const earlier = span.start?.kind === 'earlier' ? span.start : undefined;
  return {
    phase: span.phase,
    from: span.from,
    to: span.to,
    ms,
    share: context.ms > 0 ? ms / context.ms : 0,
    ...(context.open ? { open: true } : {}),
    ...(span.phase === 'run' || span.phase === 'recovered' ? { run: context.run } : {}),
    ...(answers.length > 0 ? { answers } : {}),
    ...(arrivals.length > 0 ? { arrivals } : {}),
    ...(earlier ? { summary: { totals: earlier.totals ?? {}, runs: earlier.runs ?? 0, moments: earlier.folded ?? 0 } } : {}),
  };
}

/** Who decided each question for a person, in the order they did. */
function answersOf(task: TaskRecord): TimelineAnswer[] {
  return Object.entries(task.decisions ?? {})
    .map(([key, decision]) => ({
      key,
      by: decision.by,
      ...(decision.name === undefined ? {} : { name: decision.name }),
      as: decision.as,
      via: decision.via,
      at: decision.at,
    }))
    .sort((a, b) => a.at - b.at);
}

/** What the task's callbacks and workflow posted, in the order it arrived (never what it carried). */
function arrivalsOf(task: TaskRecord): TimelineArrival[] {
  return Object.entries(task.callbacks ?? {})
    .map(([id, settlement]) => ({ id, at: settlement.at, outcome: outcomeOf(id, settlement) }))
    .sort((a, b) => a.at - b.at);
}

function outcomeOf(id: string, settlement: { result?: unknown; error?: unknown }): string {
  if (id === WORKFLOW_END_ID) {
    const status = (settlement.result as { status?: unknown } | undefined)?.status;
    return typeof status === 'string' ? status.toLowerCase() : 'ended';
  }
  if (id.startsWith(WORKFLOW_QUESTION_PREFIX)) return 'question';
  return settlement.error === undefined ? 'result' : 'error';
}

/**
 * The timeline as an approver sees it on a task that is not theirs: only the
 * waits for a person they took part in (the open one they are asked in, and
 * those in which they decided a question), with their own decisions only;
 * shares stay parts of the whole.
 */
export function approversTimeline(timeline: Timeline, principal: string): Timeline {
  const phases = timeline.phases.flatMap((phase) => {
    if (phase.phase !== 'wait:person') return [];
    const answers = (phase.answers ?? []).filter((answer) => answer.by === principal);
    if (answers.length === 0 && !phase.open) return [];
    const { answers: _all, ...rest } = phase;
    return [{ ...rest, ...(answers.length > 0 ? { answers } : {}) }];
  });
  return { ...timeline, phases, runs: 0, retries: 0, recoveries: 0 };
}
