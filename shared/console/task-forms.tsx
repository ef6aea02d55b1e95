/**
 * The two forms a task's page posts: an answer to one of its questions
 * (`…/answer`: checked against the question's schema, then decided through
 * the task actions, by the owner or an approver) and a cancel (`…/cancel`,
 * behind its confirmation). Each needs the session's form token.
 */
import type { Hono } from 'hono';
import { checkGivenAnswers } from '../actions/answers.ts';
import { taskPagePath } from '../links.ts';
import { type Decider, DecisionRefusedError } from '../tasks/approvals-model.ts';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import { forPersonOnly, type TaskRecord } from '../tasks/model.ts';
import { NOT_DELIVERED_MESSAGE, withdrawnKeys } from '../tasks/workflows-model.ts';
import type { ConsoleEnv, ConsoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { fieldProblems, formContent, formFields, type PostedForm } from './forms.ts';
import { Message } from './pages/list.tsx';
import { FOUR_EYES_BLOCKED } from './pages/task.tsx';
import type { C, RouteKit } from './route-kit.tsx';
import { refused } from './sign-in-routes.tsx';
import { absoluteUtc } from './times.ts';
import { decidedKind, timeNode } from './words.ts';

export function taskForms(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions, kit: RouteKit): void {
  const { actions } = deps;
  const { answer, lateOrNotFound } = answerSteps(deps, kit);

  app.post('/tasks/:id/answer', async (c) => {
    const who = sessions.principal(c);
    const form = (await c.req.parseBody({ all: true })) as PostedForm;
    if (who === undefined || !sessions.tokenOk(c, form['token'])) return refused(c, deps);
    const decider = sessions.decider(c);
    const taskId = c.req.param('id');
    const own = await kit.readable(taskId, who);
    const approver = decider?.approver === true && taskId.length <= MAX_TASK_ID_LENGTH;
    const task = own ?? (approver ? await actions.readForApprover(taskId) : undefined);
    const key = typeof form['key'] === 'string' ? form['key'].slice(0, 200) : '';
    // Too late: someone decided while this page was open. Say who and when (never what).
    if (!task && approver) return lateOrNotFound(c, taskId, key);
    if (!task || !decider) return kit.notFound(c);
    return answer(c, { task, own: own !== undefined, who, decider, key, form });
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
    if (!(await kit.readable(taskId, who))) return kit.notFound(c);
    const outcome = await actions.cancel(taskId, who);
    deps.log({ event: 'console-cancel', taskId, outcome });
    return c.redirect(taskPagePath(taskId), 303);
  });
}

/** An answer to a question its workflow's restart withdrew: refused, saying so (the restarted workflow asks again). */
function notDelivered(deps: ConsoleDeps, c: C, taskId: string) {
  deps.log({ event: 'console-answer-refused', taskId, reason: 'withdrawn' });
  c.status(409);
  return c.render(<Message heading="Not delivered" text={`${NOT_DELIVERED_MESSAGE}. Nothing was recorded.`} />, {
    title: 'Not delivered',
  });
}

/** The steps of an answer: checks and the record, and what a late one is told. */
function answerSteps(deps: ConsoleDeps, kit: RouteKit) {
  const { actions } = deps;

  /**
   * An answer to a question no longer open: who decided it and when, that a
   * restart of its workflow withdrew it, else the not-open page (or the 404,
   * `open` false).
   */
  async function lateOrNotFound(c: C, taskId: string, key: string, open = false) {
    const decision = key === '' ? undefined : await actions.decisionOf(taskId, key);
    if (decision === 'withdrawn') return notDelivered(deps, c, taskId);
    if (!decision && !open) return kit.notFound(c);
    c.status(409);
    const text = decision
      ? [
          `${decision.name ?? decision.by} decided this question `,
          timeNode(decision.at, deps.now()),
          ` (${absoluteUtc(decision.at)}), before your answer arrived. Nothing was recorded.`,
        ]
      : 'This question is no longer open: it was answered, or the task moved on. Nothing was recorded.';
    return c.render(<Message heading={decision ? 'Already decided' : 'Not open'} text={text} />, { title: 'Not open' });
  }

  interface Posted {
    task: TaskRecord;
    /** The task is the poster's own (else they decide as an approver). */
    own: boolean;
    who: string;
    decider: Decider;
    key: string;
    form: PostedForm;
  }

  /** Checks the posted answer against its question, then records it; a refusal redraws the page with the problems. */
  async function answer(c: C, { task, own, who, decider, key, form }: Posted) {
    const { taskId } = task;
    const request = task.status === 'input_required' ? task.inputRequests[key] : undefined;
    // An approver decides another's questions for a person only: any other key of theirs is not open to them.
    if (task.status !== 'input_required' || !request || (!own && !forPersonOnly(request))) {
      // A question a restart of its workflow withdrew: the decision cannot go anywhere.
      if (withdrawnKeys(task.callbacks).includes(key)) return notDelivered(deps, c, taskId);
      return lateOrNotFound(c, taskId, key, true);
    }
    const fields = formFields(request.params?.['requestedSchema']);
    const content = formContent(fields, form);
    const problems = fieldProblems(fields, content);
    if (Object.keys(problems).length > 0) {
      deps.log({ event: 'console-answer-refused', taskId, reason: 'mismatch' });
      c.status(400);
      return kit.renderTask(c, who, { key, problems: [], fields: problems, form });
    }
    const check = checkGivenAnswers(task.inputRequests, { [key]: content }, { personAllowed: true });
    if (!check.ok) {
      const problems =
        check.reason === 'mismatch' ? check.problems : check.reason === 'too-large' ? [check.message] : ['Not an open question'];
      deps.log({ event: 'console-answer-refused', taskId, reason: check.reason });
      c.status(400);
      return kit.renderTask(c, who, { key, problems, form });
    }
    const kind = decidedKind(request, check.responses[key]);
    try {
      const recorded = await actions.decide(taskId, decider, check.responses);
      deps.log({ event: 'console-answered', taskId, accepted: recorded.accepted.length, resumed: recorded.resumed });
    } catch (error) {
      if (!(error instanceof DecisionRefusedError)) throw error;
      c.status(403);
      return kit.renderTask(c, who, { key, problems: [error.reason === 'four-eyes' ? FOUR_EYES_BLOCKED : error.message], form });
    }
    // An approver's list confirms what the decision did; the owner's page shows it as the task's status.
    return c.redirect(own ? taskPagePath(taskId) : `/console?decided=${kind}`, 303);
  }

  return { answer, lateOrNotFound };
}
