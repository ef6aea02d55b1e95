/**
 * What the console's task routes share: who a request is for, a task as
 * they may read it, the not-found page, and a task's page drawn for them
 * (the owner's, or an approver's narrowed one).
 */
import type { Context } from 'hono';
import { eventsOf } from '../events/task-events.ts';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import type { TaskRecord } from '../tasks/model.ts';
import type { ConsoleEnv, ConsoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { ApproverTaskPage } from './pages/approvals.tsx';
import { Message, NotFound } from './pages/list.tsx';
import type { Refusal } from './pages/question.tsx';
import { TaskPage } from './pages/task.tsx';
import { liveView } from './view.ts';

// biome-ignore lint/suspicious/noExplicitAny: any route's context (its path and input types differ)
export type C = Context<ConsoleEnv, any, any>;

export interface RouteKit {
  /** The principal of a page request, or the answer that replaces the page (sign in first, or nothing to show). */
  whoFor(c: C): string | Response | Promise<Response>;
  /** The task as `who` may see it (`undefined` alike for unknown, expired, foreign and over-long ids). */
  readable(taskId: string, who: string): Promise<TaskRecord | undefined>;
  notFound(c: C): Response | Promise<Response>;
  /** The task page of `c`'s task for `who` (an approver's view of another's task, or the 404 page). */
  renderTask(c: C, who: string, refusal: Refusal | undefined): Promise<Response>;
}

export function routeKit(deps: ConsoleDeps, sessions: ConsoleSessions): RouteKit {
  const { actions, mode } = deps;
  const notFound = (c: C) => {
    c.status(404);
    return c.render(<NotFound />, { title: 'Not found' });
  };
  const readable = async (taskId: string, who: string) => (taskId.length > MAX_TASK_ID_LENGTH ? undefined : actions.read(taskId, who));
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
    if (taskId.length > MAX_TASK_ID_LENGTH) return notFound(c);
    if (!(await readable(taskId, who))) {
      const waiting = sessions.decider(c)?.approver ? await actions.readForApprover(taskId) : undefined;
      if (!waiting) return notFound(c);
      const token = c.get('session')?.formToken ?? '';
      return c.render(<ApproverTaskPage task={waiting} formToken={token} now={deps.now()} {...(refusal ? { refusal } : {})} />, {
        title: waiting.tool,
      });
    }
    const { task, steps } = await actions.withSteps(taskId, who);
    return c.render(
      <TaskPage
        task={task}
        live={liveView(task, deps.now(), deps.config)}
        steps={steps}
        formToken={c.get('session')?.formToken ?? ''}
        nonce={c.get('secureHeadersNonce')}
        now={deps.now()}
        viewer={who}
        {...(refusal ? { refusal } : {})}
        {...(deps.events ? { events: eventsOf(task, { links: deps.links, maxInputWaitMs: deps.config.maxInputWaitMs }) } : {})}
      />,
      { title: task.tool },
    );
  };
  return { whoFor, readable, notFound, renderTask };
}
