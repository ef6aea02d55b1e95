/**
 * The console's task routes: the list (`/console`, with its filters and its
 * live rows at `/console/live`), a task's page and its live state
 * (`/console/tasks/<id>`, `…/live`), and the two forms a page posts
 * (`…/answer`, `…/cancel`: `task-forms.tsx`). Everything goes through the
 * task actions; each list refresh is one query per list.
 */
import type { Hono } from 'hono';
import { taskPagePath } from '../links.ts';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import type { ConsoleEnv, ConsoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { type ListFilter, listFilter, shown, taskRows, waitingRows } from './lists.ts';
import type { LiveList } from './live.ts';
import type { UiNode } from './nodes.ts';
import { WaitingList } from './pages/approvals.tsx';
import { ById, LIST_REFRESH_MS, ListPage, Message } from './pages/list.tsx';
import { type C, type RouteKit, routeKit } from './route-kit.tsx';
import { taskForms } from './task-forms.tsx';
import { decidedWords } from './words.ts';

/** Tasks per page of the list. */
const LIST_PAGE_SIZE = 25;

export function taskRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions): void {
  const kit = routeKit(deps, sessions);
  listRoutes(app, deps, sessions, kit);
  pageRoutes(app, sessions, kit);
  taskForms(app, deps, sessions, kit);
}

/** What a list page shows: its rows (filtered), how many the query read, the cursor, and an approver's waiting rows. */
interface ListRows {
  rows: UiNode[];
  read: number;
  next?: string;
  waiting?: { rows: UiNode[]; next?: string };
}

function listRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions, kit: RouteKit): void {
  const { actions, mode } = deps;

  /** One query for the person's page of tasks, one for the waiting questions (approvers only). */
  async function rowsOf(c: C, who: string, filter: ListFilter): Promise<ListRows> {
    const viewer = kit.viewer(c, who);
    const after = c.req.query('after');
    const page = await actions.list(who, { limit: LIST_PAGE_SIZE, ...(after === undefined ? {} : { after }) });
    const tasks = page.tasks.filter((task) => shown(task, filter, viewer));
    const waitingAfter = c.req.query('waiting');
    const waiting = viewer.approver
      ? await actions.waitingForPeople({ limit: LIST_PAGE_SIZE, ...(waitingAfter === undefined ? {} : { after: waitingAfter }) })
      : undefined;
    return {
      rows: taskRows(tasks, viewer, deps.now()),
      read: page.tasks.length,
      ...(page.next ? { next: page.next } : {}),
      ...(waiting
        ? {
            waiting: {
              rows: waitingRows(waiting.questions, viewer, deps.now()),
              ...(waiting.next ? { next: waiting.next } : {}),
            },
          }
        : {}),
    };
  }

  app.get('/', async (c) => {
    const who = kit.whoFor(c);
    if (typeof who !== 'string') return who;
    if (mode.kind === 'by-id') return c.render(<ById />, { title: 'Find a task' });
    const filter = listFilter(c.req.query('show'), c.req.query('q'));
    const { rows, read, next, waiting } = await rowsOf(c, who, filter);
    const words = decidedWords(c.req.query('decided'));
    const decided =
      words === undefined ? null : (
        <p id="decided" class="note" role="status">
          {words}
        </p>
      );
    return c.render(
      <ListPage
        filter={filter}
        after={c.req.query('after')}
        rows={rows}
        read={read}
        {...(next ? { next } : {})}
        nonce={c.get('secureHeadersNonce')}
        notice={decided}
        waiting={waiting ? <WaitingList rows={waiting.rows} {...(waiting.next ? { next: waiting.next } : {})} /> : null}
      />,
      { title: 'Your tasks' },
    );
  });

  app.get('/live', async (c) => {
    const who = sessions.principal(c);
    if (who === undefined) return c.json({ error: 'sign in first' }, 401);
    if (mode.kind === 'by-id') return c.json({ error: 'not found' }, 404);
    const { rows, waiting } = await rowsOf(c, who, listFilter(c.req.query('show'), c.req.query('q')));
    const live: LiveList = {
      pollIntervalMs: LIST_REFRESH_MS,
      rows: { 'task-rows': rows, ...(waiting ? { 'waiting-rows': waiting.rows } : {}) },
    };
    return c.json(live);
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

function pageRoutes(app: Hono<ConsoleEnv>, sessions: ConsoleSessions, kit: RouteKit): void {
  app.get('/tasks/:id', async (c) => {
    const who = kit.whoFor(c);
    if (typeof who !== 'string') return who;
    return kit.renderTask(c, who, undefined);
  });

  app.get('/tasks/:id/live', async (c) => {
    const who = sessions.principal(c);
    if (who === undefined) return c.json({ error: 'sign in first' }, 401);
    const view = await kit.live(c, who);
    return view ? c.json(view) : c.json({ error: 'not found' }, 404);
  });
}
