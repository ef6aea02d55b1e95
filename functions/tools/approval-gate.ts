import * as z from 'zod';
import { defineTool } from '#tool';

/**
 * An approval gate: before acting, asks a person to confirm through
 * elicitation. While it waits the task is `input_required` and nothing runs.
 * A decline (or a "no") ends the task with a tool-level refusal, not an error.
 * The question is for a person only: a client without tasks sees it through
 * `task_status`, but its model cannot answer it with `task_answer`; with
 * `fourEyes`, only an approver other than the caller decides it, on the
 * task's page. Who decided is named in the result, and the comment given
 * with the decision travels in it either way (on a "no", as the reason).
 */
export const approvalGate = defineTool({
  name: 'approval_gate',
  title: 'Approval gate',
  description: 'Asks a person to approve an action (with an optional comment) before carrying it out.',
  inputSchema: z.object({
    action: z.string().min(1).max(500).describe('What will be done once approved, e.g. "deploy web@1.4.2 to production"'),
    fourEyes: z
      .boolean()
      .optional()
      .describe('true: an approver other than the caller must decide (refused at once where the deployment names no approvers)'),
  }),
  execution: 'task',
  // An approval is the person's to give: a model may not answer it on their behalf.
  answeredBy: 'person',
  handler: async ({ action, fourEyes }, ctx) => {
    const answer = await ctx.elicit('approval', {
      ...(fourEyes ? { fourEyes } : {}),
      message: `Approve: ${action}?`,
      requestedSchema: {
        type: 'object',
        properties: {
          approve: { type: 'boolean', title: 'Approve' },
          comment: { type: 'string', title: 'Comment' },
        },
        required: ['approve'],
      },
    });
    const approved = answer.action === 'accept' && answer.content?.['approve'] === true;
    const comment = typeof answer.content?.['comment'] === 'string' ? answer.content['comment'] : undefined;
    // Who decided (recorded with the answer): named in the result, so the caller knows whose approval it holds.
    const decidedBy = answer.decidedBy
      ? { decidedBy: answer.decidedBy.name ?? answer.decidedBy.by, decidedAt: new Date(answer.decidedBy.at).toISOString() }
      : {};
    // `message` repeats the text: several clients hand their model only `structuredContent`.
    if (!approved) {
      // Who rejected and why reach the caller: the reason is the comment given with the "no".
      const who = 'decidedBy' in decidedBy ? ` by ${decidedBy.decidedBy}` : '';
      const message = `Not approved${who}: ${action}${comment ? `. Reason: ${comment}` : ''}`;
      return {
        content: [{ type: 'text', text: message }],
        structuredContent: { approved: false, action, ...(comment ? { comment } : {}), ...decidedBy, message },
        isError: true,
        statusMessage: message,
      };
    }
    await ctx.progress(`Approved; carrying out: ${action}`);
    const message = `Approved and done: ${action}${comment ? ` (${comment})` : ''}`;
    return {
      content: [{ type: 'text', text: message }],
      structuredContent: { approved: true, action, ...(comment ? { comment } : {}), ...decidedBy, message },
      statusMessage: message,
    };
  },
});
