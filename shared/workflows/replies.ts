/**
 * What goes back to a task-token state once its question is decided:
 * - an accepted answer: `SendTaskSuccess` with the answer's fields as the
 *   state's output (`{ "approve": true, "comment": "…" }`) and, for a
 *   question for a person, who decided it (`decidedBy: { subject, name? }`);
 * - an approval turned down (a question whose schema has a boolean `approve`,
 *   answered `approve: false`): `SendTaskFailure` with {@link REJECTED_ERROR}
 *   and a cause that names the decider and carries the comment ("Rejected by
 *   Bob: not this week"), so the machine's `Catch` takes the rejection path;
 * - a declined or dismissed question: `SendTaskFailure` with {@link DECLINED_ERROR}.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { parsePrincipal } from '../auth/principal.ts';
import type { ElicitAnswer, ElicitParams } from '../runtime/tool.ts';
import type { Decision } from '../tasks/model.ts';
import type { WorkflowQuestion } from '../tasks/workflows-model.ts';

/** The error a state gets for a question declined or dismissed. */
export const DECLINED_ERROR = 'mcp-tasks.Declined';

/** The error a state gets for an approval turned down (`approve: false`). */
export const REJECTED_ERROR = 'mcp-tasks.Rejected';

/** The answer to send: the state's output, or a failure it can `Catch`. */
export type Reply = { output: string } | { failure: { error: string; cause: string } };

/**
 * Who decided, as the workflow reads it in an accepted answer: the subject
 * of their principal (the principal itself on an open endpoint) and what the
 * console calls them, when known. It stays in the execution's history.
 */
export interface DecidedBy {
  subject: string;
  name?: string;
}

/** {@link DecidedBy} of a recorded decision. */
function decidedByOf(decision: Decision): DecidedBy {
  const subject = parsePrincipal(decision.by)?.subject ?? decision.by;
  return { subject, ...(decision.name === undefined ? {} : { name: decision.name }) };
}

/** The question as the task asks it (`ctx.elicit`'s params). */
export function elicitParamsOf(question: WorkflowQuestion): ElicitParams {
  return {
    message: question.message,
    requestedSchema: question.requestedSchema,
    ...(question.answeredBy ? { answeredBy: question.answeredBy } : {}),
    ...(question.fourEyes ? { fourEyes: question.fourEyes } : {}),
  };
}

/** What goes back for `answer` to `question`. */
export function replyOf(question: WorkflowQuestion, answer: ElicitAnswer): Reply {
  if (answer.action !== 'accept') {
    const cause =
      answer.action === 'decline' ? `The question "${question.key}" was declined` : `The question "${question.key}" was dismissed`;
    return { failure: { error: DECLINED_ERROR, cause } };
  }
  const content = answer.content ?? {};
  const decidedBy = answer.decidedBy ? decidedByOf(answer.decidedBy) : undefined;
  if (isApproval(question) && content['approve'] === false) {
    const comment = typeof content['comment'] === 'string' && content['comment'] !== '' ? content['comment'] : undefined;
    const by = decidedBy ? `Rejected by ${decidedBy.name ?? decidedBy.subject}` : undefined;
    const cause = by && comment !== undefined ? `${by}: ${comment}` : (by ?? comment ?? 'Rejected');
    return { failure: { error: REJECTED_ERROR, cause } };
  }
  return { output: JSON.stringify(decidedBy ? { ...content, decidedBy } : content) };
}

/** An approval question: its schema has a boolean property `approve`. */
function isApproval(question: WorkflowQuestion): boolean {
  const properties = question.requestedSchema['properties'] as Record<string, { type?: unknown }> | undefined;
  return properties?.['approve']?.type === 'boolean';
}
