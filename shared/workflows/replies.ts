/**
 * What goes back to a task-token state once its question is decided:
 * - an accepted answer: `SendTaskSuccess` with the answer's fields as the
 *   state's output (`{ "approve": true, "comment": "…" }`);
 * - an approval turned down (a question whose schema has a boolean `approve`,
 *   answered `approve: false`): `SendTaskFailure` with {@link REJECTED_ERROR},
 *   the comment as its cause, so the machine's `Catch` takes the rejection path;
 * - a declined or dismissed question: `SendTaskFailure` with {@link DECLINED_ERROR}.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import type { ElicitAnswer, ElicitParams } from '../runtime/tool.ts';
import type { WorkflowQuestion } from '../tasks/workflows-model.ts';

/** The error a state gets for a question declined or dismissed. */
export const DECLINED_ERROR = 'mcp-tasks.Declined';

/** The error a state gets for an approval turned down (`approve: false`). */
export const REJECTED_ERROR = 'mcp-tasks.Rejected';

/** The answer to send: the state's output, or a failure it can `Catch`. */
export type Reply = { output: string } | { failure: { error: string; cause: string } };

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
  if (isApproval(question) && content['approve'] === false) {
    const comment = typeof content['comment'] === 'string' && content['comment'] !== '' ? content['comment'] : 'Rejected';
    return { failure: { error: REJECTED_ERROR, cause: comment } };
  }
  return { output: JSON.stringify(content) };
}

/** An approval question: its schema has a boolean property `approve`. */
function isApproval(question: WorkflowQuestion): boolean {
  const properties = question.requestedSchema['properties'] as Record<string, { type?: unknown }> | undefined;
  return properties?.['approve']?.type === 'boolean';
}
