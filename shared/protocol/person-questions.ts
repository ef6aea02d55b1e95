/**
 * Questions for a person (`answeredBy: 'person'`) as a task-declaring
 * request gets them. To a request that also declared `elicitation.url`, on
 * a deployment whose task page identifies the person, each goes out as a
 * URL-mode elicitation naming the task's page, where it is decided: nothing
 * in-band can answer it (the client's accept carries no content, and its
 * accept, decline or cancel decides nothing). Any other request gets the
 * form, without a link inside it (the link travels in `statusMessage`).
 */
import { createHash } from 'node:crypto';
import type { AnswerOptions } from '../tasks/approvals-model.ts';
import { type ClientCapabilities, forPersonOnly, type InputRequest, type TaskRecord } from '../tasks/model.ts';

/** Where a question for a person is decided, when URL mode may send people there (see `personPageOf`). */
export type PersonPage = (taskId: string) => string | undefined;

/** Whether the request declared URL-mode elicitation (`elicitation.url`). */
function declaresUrlMode(capabilities: ClientCapabilities): boolean {
  const elicitation = capabilities['elicitation'];
  return typeof elicitation === 'object' && elicitation !== null && 'url' in elicitation;
}

/** The task page to send this request's person to, or `undefined` where the question stays a form. */
function pageFor(
  task: Pick<TaskRecord, 'taskId'>,
  capabilities: ClientCapabilities,
  personPage: PersonPage | undefined,
): string | undefined {
  return personPage && declaresUrlMode(capabilities) ? personPage(task.taskId) : undefined;
}

/** A stable id for the URL-mode elicitation of `key` on `taskId` (the same on every `tasks/get`). */
function elicitationId(taskId: string, key: string): string {
  return createHash('sha256').update(`${taskId.length}:${taskId}:${key}`).digest('base64url').slice(0, 32);
}

/** The open questions as this request gets them: questions for a person as URL-mode elicitations where it may. */
export function inputRequestsFor(
  task: Extract<TaskRecord, { status: 'input_required' }>,
  capabilities: ClientCapabilities,
  personPage: PersonPage | undefined,
): Record<string, InputRequest> {
  const page = pageFor(task, capabilities, personPage);
  if (!page) return task.inputRequests;
  return Object.fromEntries(
    Object.entries(task.inputRequests).map(([key, request]) => {
      if (request.method !== 'elicitation/create' || !forPersonOnly(request)) return [key, request];
      const { message, _meta } = request.params ?? {};
      const params = {
        mode: 'url',
        message: typeof message === 'string' ? message : 'A decision awaits you on the task page',
        url: page,
        elicitationId: elicitationId(task.taskId, key),
        ...(_meta === undefined ? {} : { _meta }),
      };
      return [key, { method: 'elicitation/create', params }];
    }),
  );
}

/** What this request's in-band answers do to questions for a person: ignored where it got them as URLs, else recorded as the owner's. */
export function inBandAnswers(
  task: Pick<TaskRecord, 'taskId'>,
  capabilities: ClientCapabilities,
  personPage: PersonPage | undefined,
): AnswerOptions {
  return { person: pageFor(task, capabilities, personPage) ? 'ignore' : 'record' };
}
