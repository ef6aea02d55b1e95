/**
 * What a model reads from the fallback's results: every text and
 * `structuredContent` they carry (the tools' listing is `fallback-tools.ts`). Written for a model that knows nothing of MCP tasks:
 * what runs, its id, that the tool must not be called again, and the exact
 * next call. The tools' behaviour is in `fallback.ts`.
 */
import type * as z from 'zod';
import type { AnswerCheck } from '../actions/answers.ts';
import type { TaskSettings } from '../config.ts';
import { formatDuration } from '../durations.ts';
import type { DeploymentLinks } from '../links.ts';
import type { ToolResult } from '../runtime/tool.ts';
import { forPersonOnly, type InputRequiredTask, isTerminal, needsAnotherApprover, type TaskRecord } from '../tasks/model.ts';
import { finalMessageOf, statusMessageOf } from '../tasks/status-message.ts';
import type { CancelResult } from '../tasks/store-types.ts';
import { TASK_ANSWER, TASK_CANCEL, TASK_STATUS } from './fallback-tools.ts';
import { allFourEyes, personWays } from './person-ways.ts';

/** What the texts quote and link to: the retention, where a person answers, whether they must sign in. */
export interface TextContext {
  config: Pick<TaskSettings, 'retentionMs'>;
  links: DeploymentLinks;
  /** The endpoint requires tokens: a person answering must sign in as the task's owner. */
  signIn: boolean;
}

/** The next call a model should make, as a tool name and its arguments. */
interface NextCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * A `CallToolResult` whose guidance travels twice: as the text, and in
 * `structuredContent` (several clients hand their model only the latter):
 * `message` is the same text, `nextCall` the exact follow-up, and
 * `doNotCallAgain` the tool that must not be called again for this.
 */
function reply(
  text: string,
  fields: Record<string, unknown>,
  options: { next?: NextCall; doNotCallAgain?: string; isError?: boolean } = {},
) {
  const structuredContent = {
    ...fields,
    message: text,
    ...(options.next ? { nextCall: options.next } : {}),
    ...(options.doNotCallAgain ? { doNotCallAgain: options.doNotCallAgain } : {}),
  };
  return { content: [{ type: 'text', text }], structuredContent, ...(options.isError ? { isError: true } : {}) } satisfies ToolResult;
}

/** `text` ending as a sentence does. */
function sentence(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

/** `text` with its first letter in capitals. */
function capitalised(text: string): string {
  return `${text[0]?.toUpperCase() ?? ''}${text.slice(1)}`;
}

/** The call that waits for the task's end. */
function statusCall(taskId: string): NextCall {
  return { tool: TASK_STATUS, arguments: { taskId, waitSeconds: 20 } };
}

/** How to reach the task's result, for the texts. */
function followUp(taskId: string): string {
  return `call ${TASK_STATUS} with {"taskId": "${taskId}", "waitSeconds": 20}, and again while it says the task is working`;
}

const quoted = (keys: readonly string[]) => keys.map((key) => `"${key}"`).join(', ');

/** One answer for an id that is unknown, expired or another principal's: nothing tells them apart. */
export function unknownTask(taskId: string, context: TextContext): ToolResult {
  const shown = taskId.slice(0, 128);
  return reply(
    `No task "${shown}" is known to you. Check the id: use exactly the taskId a tool result gave you. ` +
      `A finished task's result stays readable for ${formatDuration(context.config.retentionMs)} after it ends, then it is gone.`,
    { taskId: shown, status: 'unknown' },
    { isError: true },
  );
}

/** Arguments of a fallback tool that do not fit its schema (or its size budget), said so the model can correct them. */
export function invalidArguments(tool: string, problem: z.ZodError | string): ToolResult {
  const issues =
    typeof problem === 'string'
      ? problem
      : problem.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
  const text = `Invalid arguments for ${tool}: ${issues}. Nothing was done; call ${tool} again with corrected arguments.`;
  return { content: [{ type: 'text', text }], structuredContent: { message: text }, isError: true };
}

/** A task waiting on answers. */
type OpenTask = TaskRecord & { status: 'input_required' };

/** The open questions, for the text and for `structuredContent`. */
function questions(task: OpenTask, context: TextContext) {
  const ways = (fourEyes: boolean) => personWays(task.taskId, context.links, context.signIn, fourEyes, task.machineOwner === true).text;
  const lines: string[] = [];
  const listed: Record<string, Record<string, unknown>> = {};
  for (const [key, request] of Object.entries(task.inputRequests)) {
    const params = request.params ?? {};
    const person = forPersonOnly(request);
    const message = typeof params['message'] === 'string' ? params['message'] : request.method;
    const schema = request.method === 'elicitation/create' ? params['requestedSchema'] : undefined;
    listed[key] = {
      method: request.method,
      message,
      ...(schema === undefined ? {} : { requestedSchema: schema }),
      ...(request.method === 'sampling/createMessage' ? { params } : {}),
      answeredBy: person ? 'person' : 'anyone',
    };
    if (person && needsAnotherApprover(request)) {
      lines.push(
        `- "${key}" (for an approver only; neither you nor the user may answer it): ${sentence(message)} It is decided ${ways(true)}.`,
      );
    } else if (person) {
      lines.push(
        `- "${key}" (for the person only; you must not answer it): ${sentence(message)} Ask the user to answer it ${ways(false)}.`,
      );
    } else if (schema !== undefined) {
      lines.push(`- "${key}": ${sentence(message)} Answer with an object matching this JSON Schema: ${JSON.stringify(schema)}`);
    } else {
      lines.push(`- "${key}": a ${request.method} request; answer with its result object. Request: ${JSON.stringify(params)}`);
    }
  }
  return { lines, listed };
}

/**
 * What a fallback call (or `task_status`) answers for a task in its current
 * state. A completed task answers the tool's result exactly as it returned it.
 */
export function describeTask(
  task: TaskRecord,
  context: TextContext,
  options: { firstAnswer?: boolean; joined?: boolean } = {},
): ToolResult {
  const { taskId, tool } = task;
  const kept = `Its result stays readable for ${formatDuration(context.config.retentionMs)} after it ends.`;
  const again = `Do not call ${tool} again for this: that would start the work a second time.`;
  const guide = { next: statusCall(taskId), doNotCallAgain: tool };
  switch (task.status) {
    case 'completed': {
      // `resultType` is wire vocabulary the SDK stamps on the way out (2026-07-28 only).
      const { resultType: _resultType, ...result } = task.result;
      return result as ToolResult;
    }
    case 'failed':
      return reply(
        `Task ${taskId} (${tool}) failed: ${task.error.message}. The tool did not finish; calling ${tool} again starts it anew.`,
        { taskId, status: task.status, error: task.error },
        { isError: true },
      );
    case 'cancelled': {
      // The reason its end gave (the client's request, an operator's); a bare default would only repeat the opening.
      const reason = finalMessageOf(task);
      return reply(`Task ${taskId} (${tool}) was cancelled${reason ? ` (${reason})` : ''}; the tool did not finish.`, {
        taskId,
        status: task.status,
        ...(reason === undefined ? {} : { statusMessage: reason }),
      });
    }
    case 'input_required':
      return describeWaiting(task, context, options, { again, kept });
    case 'working': {
      const latest = statusMessageOf(task);
      const progress = latest ? ` Latest progress: ${latest}.` : '';
      if (task.cancelRequested) {
        return reply(
          `Task ${taskId} (${tool}) was asked to cancel and is stopping: it ends cancelled at its next check, within seconds.${progress} ` +
            `To see it end, ${followUp(taskId)}.`,
          { taskId, status: task.status, cancelRequested: true },
          guide,
        );
      }
      const opening = options.joined
        ? `An identical call of ${tool} is already running as background task ${taskId}; this call joined it instead of starting the work again.`
        : options.firstAnswer
          ? `${tool} is taking longer than this reply may wait, so it goes on running as background task ${taskId}; nothing is lost.`
          : `Task ${taskId} (${tool}) is still working.`;
      return reply(
        [`${opening}${progress}`, again, `To get its result, ${followUp(taskId)}.`, kept].join('\n'),
        { taskId, status: task.status, ...(latest === undefined ? {} : { statusMessage: latest }) },
        guide,
      );
    }
  }
}

/** {@link describeTask} for a task waiting for answers: its questions, and who answers them where. */
function describeWaiting(
  task: InputRequiredTask,
  context: TextContext,
  options: { firstAnswer?: boolean; joined?: boolean },
  words: { again: string; kept: string },
): ToolResult {
  const { taskId, tool } = task;
  const { again, kept } = words;
  const guide = { next: statusCall(taskId), doNotCallAgain: tool };
  const { lines, listed } = questions(task, context);
  const answerable = Object.values(listed).some((question) => question['answeredBy'] !== 'person');
  const how = answerable
    ? `Answer with ${TASK_ANSWER} {"taskId": "${taskId}", "answers": {"<key>": {…}}}, then ${followUp(taskId)}.`
    : `Once the person has answered, ${followUp(taskId)}.`;
  const opening = options.joined
    ? `An identical call of ${tool} is already running as background task ${taskId}; this call joined it instead of starting the work again. It is waiting for answers to these questions:`
    : options.firstAnswer
      ? `${tool} is running as background task ${taskId} and is waiting for answers to these questions:`
      : `Task ${taskId} (${tool}) is waiting for answers to these questions:`;
  const person = Object.values(listed).some((question) => question['answeredBy'] === 'person');
  return reply(
    [opening, ...lines, how, again, kept].join('\n'),
    {
      taskId,
      status: task.status,
      questions: listed,
      ...(person
        ? {
            person: personWays(taskId, context.links, context.signIn, allFourEyes(task.inputRequests), task.machineOwner === true).fields,
          }
        : {}),
    },
    { ...guide, ...(answerable ? { next: { tool: TASK_ANSWER, arguments: { taskId, answers: {} } } } : {}) },
  );
}

/** `task_answer` on a task that has no open questions. */
export function notWaiting(task: TaskRecord): ToolResult {
  const { taskId, status, tool } = task;
  const next = isTerminal(status) ? `Call ${TASK_STATUS} for its outcome.` : `${capitalised(followUp(taskId))}.`;
  return reply(
    `Task ${taskId} (${tool}) is ${status} and has no open questions: nothing was recorded. ${next}`,
    { taskId, status },
    { next: isTerminal(status) ? { tool: TASK_STATUS, arguments: { taskId } } : statusCall(taskId), isError: true },
  );
}

/**
 * `task_answer`'s answers refused before anything was recorded. A question
 * for the person is not the model's mistake to fix: that refusal is no
 * error, and tells the model to hand the question to the user and wait.
 */
export function answersRefused(task: OpenTask, check: Exclude<AnswerCheck, { ok: true }>, context: TextContext): ToolResult {
  const { taskId, status, tool } = task;
  const retry = { next: { tool: TASK_STATUS, arguments: { taskId } }, isError: true };
  switch (check.reason) {
    case 'person-only': {
      const fourEyes = check.keys.every((key) => needsAnotherApprover(task.inputRequests[key]!));
      const ways = personWays(taskId, context.links, context.signIn, fourEyes, task.machineOwner === true);
      const whose = !fourEyes
        ? `for the user themselves. Tell the user the task is waiting for them, and that they answer it ${ways.text}. `
        : task.machineOwner
          ? `for an approver of this deployment. The task waits for an approver's decision, made ${ways.text}. `
          : `for an approver other than the user. Tell the user the task is waiting for an approver's decision, made ${ways.text}. `;
      return reply(
        `Not recorded, and not for you to answer: ${quoted(check.keys)} ${check.keys.length === 1 ? 'is a question' : 'are questions'} ` +
          whose +
          `Meanwhile wait for it: ${followUp(taskId)}. Do not call ${tool} again.`,
        { taskId, status, refused: check.keys, person: ways.fields },
        { next: statusCall(taskId), doNotCallAgain: tool },
      );
    }
    case 'no-open-question':
      return reply(
        `None of the keys given is an open question of task ${taskId}; nothing was recorded. Open questions: ${quoted(check.open)}. ` +
          `Call ${TASK_STATUS} to see them with their schemas.`,
        { taskId, status, open: check.open },
        retry,
      );
    case 'mismatch':
      return reply(
        `Nothing was recorded: ${check.problems.join('; ')}. Call ${TASK_STATUS} to see each question's schema.`,
        { taskId, status },
        retry,
      );
    case 'too-large':
      return reply(`Nothing was recorded: ${check.message}. Answer again with a smaller answer.`, { taskId, status }, retry);
  }
}

/** `task_answer`'s answers recorded: what is still open, or that the task goes on. */
export function answersRecorded(task: OpenTask, accepted: string[], resumed: boolean): ToolResult {
  const { taskId, tool } = task;
  const left = Object.keys(task.inputRequests).filter((key) => !accepted.includes(key));
  const next = resumed ? `The task goes on; to get its result, ${followUp(taskId)}.` : `Still open: ${quoted(left)}.`;
  return reply(
    `Recorded ${quoted(accepted) || 'nothing'} for task ${taskId}. ${next}`,
    { taskId, status: resumed ? 'working' : task.status, accepted },
    { next: resumed ? statusCall(taskId) : { tool: TASK_ANSWER, arguments: { taskId, answers: {} } }, doNotCallAgain: tool },
  );
}

/** What `task_cancel` did to a task that had not ended. */
export function cancelOutcome(taskId: string, outcome: Exclude<CancelResult, 'terminal'>): ToolResult {
  return outcome === 'cancelled'
    ? reply(`Task ${taskId} is cancelled; its tool did not finish.`, { taskId, status: 'cancelled' })
    : reply(
        `Cancellation of task ${taskId} is requested: it stops at its next check, within seconds. Call ${TASK_STATUS} to confirm it ended cancelled.`,
        { taskId, status: 'working', cancelRequested: true },
        { next: statusCall(taskId) },
      );
}

/** `task_cancel` of a task that had already ended. */
export function alreadyEnded(task: TaskRecord): ToolResult {
  const { taskId, status } = task;
  return reply(
    `Task ${taskId} had already ended (${status}); nothing to cancel. Call ${TASK_STATUS} for its outcome.`,
    { taskId, status },
    { next: { tool: TASK_STATUS, arguments: { taskId } } },
  );
}

/**
 * The server's `instructions` (initialize and `server/discover`): how long
 * tools answer, in a few sentences any model can act on.
 */
export const SERVER_INSTRUCTIONS =
  'Some tools of this server take minutes or longer, or wait for a person. A client that supports the MCP Tasks extension ' +
  `gets a task and follows it with tasks/get. Otherwise a long call answers within about 20 seconds, either with the tool's ` +
  `result or with a note naming a background task: then do not call the tool again (that starts the work a second time); ` +
  `follow the task with ${TASK_STATUS} (waitSeconds up to 20), answer its questions with ${TASK_ANSWER}, stop it with ` +
  `${TASK_CANCEL}. A question marked for the person is the user's to answer, not yours: tell them where.`;
