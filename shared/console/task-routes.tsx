/**
 * The console's task routes: the list (`/console`), a task's page and its
 * live state (`/console/tasks/<id>`, `…/live`), and the two forms a page
 * posts (`…/answer`, `…/cancel`: `task-forms.tsx`). Everything goes through
 * the task actions.
 */
import type { Hono } from 'hono';
import { taskPagePath } from '../links.ts';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import type { ConsoleEnv, ConsoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { WaitingList } from './pages/approvals.tsx';
import { ById, Message, TaskList } from './pages/list.tsx';
import { type RouteKit, routeKit } from './route-kit.tsx';
import { taskForms } from './task-forms.tsx';
import { liveView } from './view.ts';

/** Tasks per page of the list. */
const LIST_PAGE_SIZE = 25;

export function taskRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions): void {
  const kit = routeKit(deps, sessions);
  listRoutes(app, deps, sessions, kit);
  pageRoutes(app, deps, sessions, kit);
  taskForms(app, deps, sessions, kit);
}

function listRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions, kit: RouteKit): void {
  const { actions, mode } = deps;
  app.get('/', async (c) => {
    const who = kit.whoFor(c);
    if (typeof who !== 'string') return who;
    if (mode.kind === 'by-id') return c.render(<ById />, { title: 'Find a task' });
    const after = c.req.query('after');
    const page = await actions.list(who, { limit: LIST_PAGE_SIZE, ...(after === undefined ? {} : { after }) });
    // A page of the questions waiting for an approver (a malformed cursor is refused, as the task list's is).
    const waitingAfter = c.req.query('waiting');
    const waiting = sessions.decider(c)?.approver
      ? await actions.waitingForPeople({ limit: LIST_PAGE_SIZE, ...(waitingAfter === undefined ? {} : { after: waitingAfter }) })
      : undefined;
    return c.render(
      <>
        {c.req.query('decided') === undefined ? null : (
          <p id="decided" role="status">
            Your decision was recorded: the task goes on.
          </p>
        )}
        {waiting ? <WaitingList questions={waiting.questions} {...(waiting.next ? { next: waiting.next } : {})} now={deps.now()} /> : null}
        <TaskList tasks={page.tasks} {...(page.next ? { next: page.next } : {})} now={deps.now()} first={after === undefined} />
      </>,
      { title: 'Your tasks' },
    );
  });

  app.get('/find', (c) => {
    const id = c.req.query('id')?.trim() ?? '';
    if (id === '' || id.length > MAX_TASK_ID_LENGTH) {
      c.status(400);
      return c.render(<Message heading="No task id" text="Give the task id a tool result or the command line showed." />, {
        title: 'Find a task',
      });
    }
    return c.redirect(taskPagePath(id), 303);
  });
}

function pageRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions, kit: RouteKit): void {
  app.get('/tasks/:id', async (c) => {
    const who = kit.whoFor(c);
    if (typeof who !== 'string') return who;
    return kit.renderTask(c, who, undefined);
  });

  app.get('/tasks/:id/live', async (c) => {
    const who = sessions.principal(c);
    if (who === undefined) return c.json({ error: 'sign in first' }, 401);
    const task = await kit.readable(c.req.param('id'), who);
    if (!task) return c.json({ error: 'not found' }, 404);
    return c.json(liveView(task, deps.now(), deps.config));
  });
}
