/**
 * A task's worker runs in the task's trace. Each run is a span whose parent
 * is the context that created the task (kept on its row at creation), so one
 * trace holds the task from the call to its end; what resumed it (an answer's
 * request, a callback, a workflow's end) is a link, carried by the resume's
 * queue message. Inside a run, each step, sleep and outside call that runs is
 * a child span, and each wait that ended before the run (a person, a
 * callback, a workflow) is recorded once, by the run that resumed from it,
 * as a span from its start to its resume.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TaskMessage } from '../queue/queue.ts';
import type { QuestionRecord, TaskOutcome, TaskRecord } from '../tasks/model.ts';
import { MCP_ATTRIBUTES as MCP, type Phase, TASK_ATTRIBUTES as TASK } from './names.ts';
import { type OpenSpan, type TraceContext, type Tracing, traceContextOf, tracingOf } from './tracing.ts';

/** What a composition that runs tasks may be given: a tracing (absent: the installed one, off by default). */
export interface Traced {
  tracing?: Tracing | undefined;
}

/** A wait that ended before a run: what it waited for, from when until its resume (epoch ms). */
export interface EndedWait {
  phase: Extract<Phase, 'wait:person' | 'wait:callback' | 'wait:workflow'>;
  /** `person`, `client` (a question the client answers), `callback`, `workflow`. */
  waitedFor: 'person' | 'client' | 'callback' | 'workflow';
  /** The question's key or the callback's name. */
  name: string;
  since: number;
  until: number;
}

/** What the run in progress offers its handler's replay (`run.ts`). */
export interface RunTrace {
  /** Whether a resume (an answer, a callback, a workflow's end) queued this run: its waits ended before it. */
  readonly resumed: boolean;
  /** When the row was last written before the run (the resume's write: a claim leaves `lastUpdatedAt` alone). */
  readonly resumedAt: number;
  /** Runs `fn` (a step, a sleep's record, a step that calls outside) in a child span. */
  step<T>(kind: 'step' | 'sleep', name: string, fn: () => Promise<T>): Promise<T>;
  /** Records a wait that ended before this run. */
  waited(wait: EndedWait): void;
}

const active = new AsyncLocalStorage<{ trace: RunTrace; span: OpenSpan }>();

/** The run in progress, if it is traced. */
function activeRunTrace(): RunTrace | undefined {
  return active.getStore()?.trace;
}

/** The phase of a run: a retry the handler asked for, a run after one that crashed (or was swept), or a plain run. */
function runPhaseOf(task: Pick<TaskRecord, 'attempts'>, reason: TaskMessage['reason']): Phase {
  if (reason === 'retry') return 'retry';
  return reason === 'sweep' || task.attempts > 1 ? 'recovered' : 'run';
}

/**
 * Runs `run` (the claimed task's run) inside its span: a consumer span in the
 * task's trace, linked to the context the message carries. A run that gives
 * its message back (an unexpected error) ends with status ERROR.
 */
export function traceRun<T extends string>(deps: Traced, message: TaskMessage, task: TaskRecord, run: () => Promise<T>): Promise<T> {
  const tracing = tracingOf(deps);
  if (!tracing.enabled) return run();
  const parent = traceContextOf(task.traceparent, task.tracestate) ?? null;
  const link = traceContextOf(message.link);
  const phase = runPhaseOf(task, message.reason);
  const spec = {
    name: `${phase} ${task.tool}`,
    kind: 'consumer' as const,
    parent,
    ...(link ? { links: [link] } : {}),
    attributes: {
      [TASK.taskId]: task.taskId,
      [MCP.toolName]: task.tool,
      [TASK.phase]: phase,
      [TASK.runReason]: message.reason,
      [TASK.attempt]: task.attempts,
    },
  };
  return tracing.span(spec, async (span) => {
    const trace = runTraceOf(tracing, task, message, parent);
    const disposition = await active.run({ trace, span }, run);
    if (disposition === 'retry') span.fail('run_failed');
    return disposition;
  });
}

/** Notes the outcome a run wrote on its span: the task's status, and ERROR for a failed task. */
export function runEnded(outcome: TaskOutcome): void {
  const store = active.getStore();
  if (!store) return;
  store.span.set({ [TASK.status]: outcome.status });
  if (outcome.status === 'failed') store.span.fail(String(outcome.error.code));
}

function runTraceOf(tracing: Tracing, task: TaskRecord, message: TaskMessage, parent: TraceContext | null): RunTrace {
  const common = { [TASK.taskId]: task.taskId, [MCP.toolName]: task.tool };
  return {
    resumed: message.reason === 'resume',
    resumedAt: task.lastUpdatedAt,
    step: (kind, name, fn) =>
      tracing.span({ name: `${kind} ${name}`, kind: 'internal', attributes: { ...common, [TASK.stepName]: name } }, () => fn()),
    waited: (wait) =>
      tracing.record({
        name: `${wait.phase} ${task.tool}`,
        kind: 'internal',
        parent,
        startTime: wait.since,
        endTime: Math.max(wait.since, wait.until),
        attributes: { ...common, [TASK.phase]: wait.phase, [TASK.waitedFor]: wait.waitedFor, [TASK.stepName]: wait.name },
      }),
  };
}

/**
 * What a run's replay (`run.ts`) reports to its trace: the steps it runs and
 * the waits it passes. A question's wait is recorded by the run that resumed
 * once it was answered, for the questions asked by the run before (those
 * with the latest `askedAt`); a callback's or a workflow's by the run its
 * completion resumed (the completion's time is the row's last write).
 */
export class ReplayTrace {
  private readonly latestAsked: number | undefined;

  private constructor(
    private readonly trace: RunTrace,
    questions: Record<string, QuestionRecord>,
    /** When this run started: what its new questions record as `askedAt`. */
    readonly startedAt: number,
  ) {
    const asked = Object.values(questions).flatMap((question) => (question.askedAt === undefined ? [] : [question.askedAt]));
    this.latestAsked = asked.length > 0 ? Math.max(...asked) : undefined;
  }

  /** The replay's trace when the run in progress is traced. */
  static of(questions: Record<string, QuestionRecord> | undefined, startedAt: number): ReplayTrace | undefined {
    const trace = activeRunTrace();
    return trace && new ReplayTrace(trace, questions ?? {}, startedAt);
  }

  step<T>(kind: 'step' | 'sleep', name: string, fn: () => Promise<T>): Promise<T> {
    return this.trace.step(kind, name, fn);
  }

  /** A recorded question's answer reached: its wait, when the run resumed from it. */
  answered(key: string, question: QuestionRecord | undefined, person: boolean, decidedAt: number | undefined): void {
    const { trace } = this;
    if (!trace.resumed || question?.askedAt === undefined || question.askedAt !== this.latestAsked) return;
    const until = decidedAt ?? trace.resumedAt;
    trace.waited({ phase: 'wait:person', waitedFor: person ? 'person' : 'client', name: key, since: question.askedAt, until });
  }

  /** A callback's (or a workflow's end's) completion reached: its wait, when it resumed this run. */
  calledBack(wait: Omit<EndedWait, 'phase' | 'waitedFor'> & { workflow?: boolean }): void {
    const { trace } = this;
    if (!trace.resumed || wait.until !== trace.resumedAt) return;
    const { workflow, ...rest } = wait;
    trace.waited(
      workflow ? { ...rest, phase: 'wait:workflow', waitedFor: 'workflow' } : { ...rest, phase: 'wait:callback', waitedFor: 'callback' },
    );
  }
}
