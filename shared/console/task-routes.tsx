/**
 * The console's task routes: the list (`/console`), a task's page and its
 * live state (`/console/tasks/<id>`, `…/live`), and the two forms a page
 * posts (`…/answer`, `…/cancel`). Everything goes through the task actions.
 */
import type { Context, Hono } from 'hono';
import { checkGivenAnswers } from '../actions/answers.ts';
import { eventsOf } from '../events/task-events.ts';
import { taskPagePath } from '../links.ts';
import { DecisionRefusedError } from '../tasks/approvals-model.ts';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import { forPersonOnly } from '../tasks/model.ts';
import type { AnswerResult } from '../tasks/store-types.ts';
import type { ConsoleEnv, ConsoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { formContent, formFields, type PostedForm } from './forms.ts';
import { ApproverTaskPage, WaitingList } from './pages/approvals.tsx';
import { ById, Message, NotFound, TaskList } from './pages/list.tsx';
import type { Refusal } from './pages/question.tsx';
import { FOUR_EYES_BLOCKED, TaskPage } from './pages/task.tsx';
import { refused } from './sign-in-routes.tsx';
import { liveView } from './view.ts';

/** Tasks per page of the list. */
const LIST_PAGE_SIZE = 25;

// biome-ignore lint/suspicious/noExplicitAny: any route's context (its path and input types differ)
type C = Context<ConsoleEnv, any, any>;

export function taskRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions): void {
  const { actions, mode } = deps;

  /** The principal of a page request, or the answer that replaces the page (sign in first, or nothing to show). */
  const whoFor = (c: C): string | Response | Promise<Response> => {
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

  app.get('/', async (c) => {
    const who = whoFor(c);
    if (typeof who !== 'string') return who;
    if (mode.kind === 'by-id') return c.render(<ById />, { title: 'Find a task' });
    const after = c.req.query('after');
    const page = await actions.list(who, { limit: LIST_PAGE_SIZE, ...(after === undefined ? {} : { after }) });
    const waiting = sessions.decider(c)?.approver ? await waitingPage(c.req.query('waiting')) : undefined;
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
      {
        title: 'Your tasks',
      },
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

  app.get('/tasks/:id', async (c) => {
    const who = whoFor(c);
    if (typeof who !== 'string') return who;
    return renderTask(c, who, undefined);
  });

  app.get('/tasks/:id/live', async (c) => {
    const who = sessions.principal(c);
    if (who === undefined) return c.json({ error: 'sign in first' }, 401);
    const task = await readable(c.req.param('id'), who);
    if (!task) return c.json({ error: 'not found' }, 404);
    return c.json(liveView(task, deps.now(), deps.config));
  });

  app.post('/tasks/:id/answer', async (c) => {
    const who = sessions.principal(c);
    const form = (await c.req.parseBody({ all: true })) as PostedForm;
    if (who === undefined || !sessions.tokenOk(c, form['token'])) return refused(c, deps);
    const decider = sessions.decider(c);
    const taskId = c.req.param('id');
    const own = await readable(taskId, who);
    const task = own ?? (decider?.approver && taskId.length <= MAX_TASK_ID_LENGTH ? await actions.readForApprover(taskId) : undefined);
    if (!task || !decider) return notFound(c);
    const key = typeof form['key'] === 'string' ? form['key'] : '';
    const request = task.status === 'input_required' ? task.inputRequests[key] : undefined;
    // An approver decides another's questions for a person only: any other key of theirs is not open to them.
    if (task.status !== 'input_required' || !request || (!own && !forPersonOnly(request))) {
      c.status(409);
      return c.render(
        <Message heading="Not open" text="This question is no longer open: it was answered, or the task moved on. Nothing was recorded." />,
        {
          title: 'Not open',
        },
      );
    }
    const content = formContent(formFields(request.params?.['requestedSchema']), form);
    const check = checkGivenAnswers(task.inputRequests, { [key]: content }, { personAllowed: true });
    if (!check.ok) {
      const problems =
        check.reason === 'mismatch' ? check.problems : check.reason === 'too-large' ? [check.message] : ['Not an open question'];
      deps.log({ event: 'console-answer-refused', taskId, reason: check.reason });
      c.status(400);
      return renderTask(c, who, { key, problems, form });
    }
    let recorded: AnswerResult;
    try {
      recorded = await actions.decide(taskId, decider, check.responses);
    } catch (error) {
      if (!(error instanceof DecisionRefusedError)) throw error;
      c.status(403);
      return renderTask(c, who, { key, problems: [error.reason === 'four-eyes' ? FOUR_EYES_BLOCKED : error.message], form });
    }
    deps.log({ event: 'console-answered', taskId, accepted: recorded.accepted.length, resumed: recorded.resumed });
    return c.redirect(own ? taskPagePath(taskId) : '/console?decided=1', 303);
  });

  app.post('/tasks/:id/cancel', async (c) => {
    const who = sessions.principal(c);
    const form = await c.req.parseBody();
    if (who === undefined || !sessions.tokenOk(c, form['token'])) return refused(c, deps);
    const taskId = c.req.param('id');
    if (form['confirm'] !== 'yes') {
      c.status(400);
      return c.render(<Message heading="Not cancelled" text="Cancelling needs its confirmation. Nothing was changed." />, {
        title: 'Not cancelled',
      });
    }
    if (!(await readable(taskId, who))) return notFound(c);
    const outcome = await actions.cancel(taskId, who);
    deps.log({ event: 'console-cancel', taskId, outcome });
    return c.redirect(taskPagePath(taskId), 303);
  });

  /** The task as `who` may see it (`undefined` alike for unknown, expired, foreign and over-long ids). */
  async function readable(taskId: string, who: string) {
    return taskId.length > MAX_TASK_ID_LENGTH ? undefined : actions.read(taskId, who);
  }

  /** A page of the questions waiting for an approver (a malformed cursor is refused, as the task list's is). */
  async function waitingPage(after: string | undefined) {
    const options = { limit: LIST_PAGE_SIZE, ...(after === undefined ? {} : { after }) };
    return actions.waitingForPeople(options);
  }

  async function renderTask(c: C, who: string, refusal: Refusal | undefined) {
    const taskId = c.req.param('id') ?? '';
    if (taskId.length > MAX_TASK_ID_LENGTH) return notFound(c);
    if (!(await actions.read(taskId, who))) {
      const waiting = sessions.decider(c)?.approver ? await actions.readForApprover(taskId) : undefined;
      if (!waiting) return notFound(c);
      const token = c.get('session')?.formToken ?? '';
      return c.render(<ApproverTaskPage task={waiting} formToken={token} now={deps.now()} {...(refusal ? { refusal } : {})} />, {
        title: waiting.tool,
      });
    }
    const { task, steps } = await actions.withSteps(taskId, who);
    const session = c.get('session');
    const live = liveView(task, deps.now(), deps.config);
    return c.render(
      <TaskPage
        task={task}
        live={live}
        steps={steps}
        formToken={session?.formToken ?? ''}
        nonce={c.get('secureHeadersNonce')}
        now={deps.now()}
        viewer={who}
        {...(refusal ? { refusal } : {})}
        {...(deps.events ? { events: eventsOf(task, { links: deps.links, maxInputWaitMs: deps.config.maxInputWaitMs }) } : {})}
      />,
      { title: task.tool },
    );
  }
}

function notFound(c: C) {
  c.status(404);
  return c.render(<NotFound />, { title: 'Not found' });
}
