/**
 * What the console's task routes share: who a request is for (and how they
 * view a task), a task as they may read it, the not-found page, a task's
 * page drawn for them (the owner's, or an approver's narrowed one) and its
 * live state.
 */
import type { Context } from 'hono';
import { eventsOf, type TaskEvent } from '../events/task-events.ts';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import type { Decision, TaskRecord } from '../tasks/model.ts';
import type { ConsoleEnv, ConsoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { type ExecutionLink, executionLink } from './execution-link.ts';
import type { LiveView } from './live.ts';
import { onLoopback } from './mode.ts';
import { ApproverTaskPage } from './pages/approvals.tsx';
import { Message, NotFound } from './pages/list.tsx';
import type { Refusal } from './pages/question.tsx';
import { TaskPage } from './pages/task.tsx';
import { signInNames } from './sign-in-names.ts';
import { decisionNodes, liveView } from './view.ts';
import { titleOf, type Viewer } from './words.ts';

// biome-ignore lint/suspicious/noExplicitAny: any route's context (its path and input types differ)
export type C = Context<ConsoleEnv, any, any>;

/** Most question keys an approver's live read looks up once the task no longer waits for them. */
const MAX_LIVE_KEYS = 5;

export interface RouteKit {
  /** The principal of a page request, or the answer that replaces the page (sign in first, or nothing to show). */
  whoFor(c: C): string | Response | Promise<Response>;
  /** How `who` views tasks on this request (`who` and whether they are an approver). */
  viewer(c: C, who: string): Viewer;
  /** The task as `who` may see it (`undefined` alike for unknown, expired, foreign and over-long ids). */
  readable(taskId: string, who: string): Promise<TaskRecord | undefined>;
  notFound(c: C): Response | Promise<Response>;
  /** The task page of `c`'s task for `who` (an approver's view of another's task, or the 404 page). */
  renderTask(c: C, who: string, refusal: Refusal | undefined): Promise<Response>;
  /** The live state of `c`'s task for `who`, or `undefined` (the same 404 as the page's). */
  live(c: C, who: string): Promise<LiveView | undefined>;
}

export function routeKit(deps: ConsoleDeps, sessions: ConsoleSessions): RouteKit {
  const { actions, mode } = deps;
  const names = signInNames(deps.signInNameRecords, deps);
  const notFound = (c: C) => {
    c.status(404);
    return c.render(<NotFound />, { title: 'Not found' });
  };
  const readable = async (taskId: string, who: string) => (taskId.length > MAX_TASK_ID_LENGTH ? undefined : actions.read(taskId, who));
  const viewer = (c: C, who: string): Viewer => ({ principal: who, approver: sessions.decider(c)?.approver === true });
  /** Another's task, for an approver, while it waits on a question for a person. */
  const approversView = async (c: C, taskId: string) =>
    taskId.length <= MAX_TASK_ID_LENGTH && sessions.decider(c)?.approver ? actions.readForApprover(taskId) : undefined;
  const whoFor = (c: C) => {
    const principal = sessions.principal(c);
    if (principal !== undefined) return principal;
    if (mode.kind === 'sign-in') return c.redirect(`/console/sign-in?next=${encodeURIComponent(new URL(c.req.url).pathname)}`, 302);
    c.status(403);
    return c.render(
      <Message
        heading="Sign-in is not set up"
        text="This endpoint requires sign-in, and its console has no sign-in configured: it shows no task. An operator configures it (see the console docs)."
      />,
      { title: 'Console off' },
    );
  };
  const renderTask = async (c: C, who: string, refusal: Refusal | undefined) => {
    const taskId = c.req.param('id') ?? '';
    const common = {
      formToken: c.get('session')?.formToken ?? '',
      nonce: c.get('secureHeadersNonce'),
      now: deps.now(),
      ...(refusal ? { refusal } : {}),
    };
    if (!(await readable(taskId, who))) {
      const waiting = await approversView(c, taskId);
      if (!waiting) return notFound(c);
      const live = liveView(waiting, deps.now(), deps.config, viewer(c, who));
      const title = titleOf(waiting);
      const requester = await names.whoAsks(waiting, c.get('session'));
      return c.render(<ApproverTaskPage task={waiting} title={title} requester={requester} live={live} {...common} />, { title });
    }
    const { task, steps } = await actions.withSteps(taskId, who);
    const title = titleOf(task);
    return c.render(
      <TaskPage
        task={task}
        title={title}
        requester={await names.whoAsks(task, c.get('session'))}
        live={liveView(task, deps.now(), deps.config, viewer(c, who))}
        steps={steps}
        viewer={viewer(c, who)}
        {...common}
        {...ownersExtras(task, deps)}
      />,
      { title },
    );
  };
  const live = async (c: C, who: string): Promise<LiveView | undefined> => {
    const taskId = c.req.param('id') ?? '';
    const own = await readable(taskId, who);
    if (own) return liveView(own, deps.now(), deps.config, viewer(c, who));
    if (!sessions.decider(c)?.approver) return undefined;
    const waiting = await approversView(c, taskId);
    // An approver sees no result or error: only the status, the questions for a person, who decided.
    if (waiting) {
      const { result: _result, error: _error, ...shown } = liveView(waiting, deps.now(), deps.config, viewer(c, who));
      return shown;
    }
    // No longer waiting for them: who decided the questions their page shows, then nothing more.
    const keys = c.req.queries('key')?.slice(0, MAX_LIVE_KEYS) ?? [];
    const decided: Record<string, Decision> = {};
    for (const key of keys) {
      const decision = await actions.decisionOf(taskId, key);
      if (decision && decision !== 'withdrawn') decided[key] = decision;
    }
    if (Object.keys(decided).length === 0) return undefined;
    return { ...decidedElsewhere(), decisionNodes: decisionNodes(decided, deps.now()), pollIntervalMs: deps.config.pollIntervalMs };
  };
  return { whoFor, viewer, readable, notFound, renderTask, live };
}

/** What an approver's page is told once its questions were decided elsewhere. */
/**
 * What only the owner's page shows: the lifecycle events the row implies
 * (where the deployment publishes them), and the workflow execution the task
 * follows (for a workflow tool's task).
 */
function ownersExtras(task: TaskRecord, deps: ConsoleDeps): { events?: readonly TaskEvent[]; execution?: ExecutionLink } {
  const arn = task.workflow?.execution;
  const execution = arn === undefined ? undefined : executionLink(arn, onLoopback(deps.links));
  return {
    ...(deps.events ? { events: eventsOf(task, { links: deps.links, maxInputWaitMs: deps.config.maxInputWaitMs }) } : {}),
    ...(execution ? { execution } : {}),
  };
}

function decidedElsewhere(): Omit<LiveView, 'decisionNodes' | 'pollIntervalMs'> {
  return {
    status: 'working',
    statusNodes: ['Decided: this question is no longer waiting for you.'],
    updatedNodes: [],
    questions: [],
    cancelRequested: false,
    over: true,
  };
}
