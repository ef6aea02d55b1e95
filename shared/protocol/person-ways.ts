/**
 * Where and how a person decides a question meant for them, as the
 * fallback's texts word it for a model: the task's page first, the command
 * line second; a four-eyes question only by an approver on the page.
 */
import type { DeploymentLinks } from '../links.ts';
import { forPersonOnly, type InputRequest, needsAnotherApprover } from '../tasks/model.ts';

/**
 * Where and how the person answers a question meant for them, in words and
 * as fields: the task's page in the console first (when the deployment's URL
 * is known), the command line second. A machine's task (`machine`: its
 * questions for a person are four-eyes ones) names the approvers, who decide
 * on that page: nobody signs in as the machine.
 */
export function personWays(
  taskId: string,
  links: DeploymentLinks,
  signIn: boolean,
  fourEyes = false,
  machine = false,
): { text: string; fields: Record<string, unknown> } {
  const { endpoint } = links;
  const page = links.taskPage(taskId);
  if (fourEyes && machine) {
    return {
      text:
        `by an approver of this deployment, on the task's page${page ? `, ${page}` : ''} (a machine client started this task, and ` +
        'nobody signs in as a machine: an approver signs in as themselves)',
      fields: { answeredBy: 'an approver of this deployment (the task was started by a machine client)', ...(page ? { page } : {}) },
    };
  }
  // Four eyes: neither the caller nor their client decides; an approver does, on the page.
  if (fourEyes) {
    return {
      text: `by an approver other than the user (who started this task, so cannot decide it), on the task's page${page ? `, ${page}` : ''}`,
      fields: { answeredBy: 'an approver other than the user', ...(page ? { page } : {}) },
    };
  }
  const cli = `node bin/mcp-tasks.js${endpoint ? ` --url ${endpoint}` : ''}`;
  const command = `${cli} answer ${taskId}`;
  const signInText = signIn ? ` signed in as the same identity that started this task (\`${cli} login\` first)` : '';
  const onPage = page ? `on the task's page, ${page}${signIn ? ' (signed in as the identity that started this task)' : ''}; or ` : '';
  return {
    text:
      `${onPage}in a client that supports MCP tasks, or with the mcp-tasks command line of this server's repository: in a checkout of it, ` +
      `after \`npm ci\`, run \`${command}\`${signInText}`,
    fields: {
      answeredBy: 'the user, not you',
      ...(page ? { page } : {}),
      command,
      commandFrom: "a checkout of this server's repository, after npm ci",
      ...(signIn ? { signIn: 'as the identity that started this task' } : {}),
    },
  };
}

/** Whether every open question for a person of a task (its `inputRequests`) needs an approver other than its caller. */
export function allFourEyes(inputRequests: Readonly<Record<string, InputRequest>>): boolean {
  return Object.values(inputRequests).filter(forPersonOnly).every(needsAnotherApprover);
}
