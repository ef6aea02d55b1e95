/**
 * The fallback for clients that do not declare the tasks extension on a
 * request (every 2025-era request, and 2026-07-28 requests without it):
 * editor and desktop clients, SDK-built agents, the SDK v1 client without
 * its experimental API. They cannot follow a `CreateTaskResult`, so:
 *
 * - a long call (an `optional` tool that does not finish within the
 *   synchronous budget, or a `task` tool) runs as a durable task on the same
 *   store, queue and workers. The endpoint creates the task first, enqueues
 *   it, then waits on the row (one strongly consistent read a second) until
 *   the budget. Work that ends within it answers its own result; otherwise
 *   the call answers an ordinary `CallToolResult` naming the task, written
 *   for a model: what runs, its id, not to call the tool again, and how to
 *   follow it. The request never runs the handler itself, so nothing runs
 *   twice across the budget and nothing is abandoned at it.
 * - three ordinary tools follow such a task: `task_status`, `task_answer`
 *   and `task_cancel`, bound to the caller like the task methods. An
 *   unknown, expired and another principal's id all read alike.
 *
 * A task started here may ask its questions whatever the call declared:
 * `task_answer` is their channel. A question marked for a person only
 * (`answeredBy: 'person'`, e.g. `approval_gate`'s) is refused there; the
 * person answers it in a task-capable client or with `mcp-tasks answer`.
 *
 * Cost: a call that ends within the budget costs one task's writes (create,
 * the worker's claim and finish) and at most one read a second while it
 * waits; `task_status` costs one read (plus one a second of `waitSeconds`),
 * `task_answer` a read and the answer's write, `task_cancel` the cancel's
 * write (and a read when the task had already ended).
 */
import * as z from 'zod';
import { humanMs, type TaskSettings } from '../config.ts';
import type { Log } from '../log.ts';
import { logTaskEnded } from '../metrics.ts';
import { sleep } from '../runtime/sleep.ts';
import { ANSWERED_BY_META, type ToolDefinition, type ToolResult } from '../runtime/tool.ts';
import { checkAnswers, LimitExceededError, MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';
import { type InputRequest, isTerminal, type TaskRecord } from '../tasks/model.ts';
import { TaskNotFoundError, type TaskStore } from '../tasks/store.ts';

export const TASK_STATUS = 'task_status';
export const TASK_ANSWER = 'task_answer';
export const TASK_CANCEL = 'task_cancel';

/** The fallback tools' names: reserved while the fallback is on. */
export const FALLBACK_TOOL_NAMES: readonly string[] = [TASK_STATUS, TASK_ANSWER, TASK_CANCEL];

/** How often a waiting call reads the task: at most one strongly consistent read a second. */
export const WAIT_READ_MS = 1_000;

/** What the fallback needs from the endpoint. */
export interface FallbackDeps {
  store: TaskStore;
  tools: ReadonlyMap<string, ToolDefinition>;
  settings: Pick<TaskSettings, 'syncBudgetMs' | 'retentionMs'>;
  now: () => number;
  log: Log;
  /** Queues a task whose last open question was answered (a refused send is left to the sweeper). */
  enqueue: (taskId: string, reason: 'resume') => Promise<void>;
}

const TaskId = z
  .string()
  .min(1)
  .max(MAX_TASK_ID_LENGTH)
  .describe('The task id, exactly as a tool result or task_status gave it (e.g. "3f0c…")');

const StatusArgs = z.object({
  taskId: TaskId,
  waitSeconds: z
    .number()
    .int()
    .min(0)
    .max(20)
    .optional()
    .describe('Wait up to this many seconds (at most 20) for the task to end or to ask something, instead of answering at once'),
});
const AnswerArgs = z.object({
  taskId: TaskId,
  answers: z
    .record(z.string(), z.unknown())
    .describe(
      'Answers keyed exactly as the questions are: for each key, an object matching that question\'s schema, e.g. {"name": {"name": "Ada"}}',
    ),
});
const CancelArgs = z.object({ taskId: TaskId });

/** The fallback tools as `tools/list` describes them, written for a model. */
export function fallbackToolList() {
  const entry = (name: string, title: string, description: string, schema: z.ZodType) => ({
    name,
    title,
    description,
    inputSchema: z.toJSONSchema(schema, { io: 'input' }) as { type: 'object'; [key: string]: unknown },
  });
  return [
    entry(
      TASK_STATUS,
      'Task status',
      'Checks a background task that an earlier tool call started (its result named the taskId). While the task runs it says so; ' +
        'when the task asks questions it lists them with the schema each answer must match; once the task has ended it returns ' +
        "the tool's own result. Use this instead of calling the original tool again: calling that tool again would start the work a second time. " +
        'Pass waitSeconds (up to 20) to wait for the task to end rather than checking again and again.',
      StatusArgs,
    ),
    answerEntry(
      entry(
        TASK_ANSWER,
        'Answer a task',
        "Answers the questions a background task is waiting on (task_status lists them with each answer's schema). " +
          'Give every answer under its question key, as an object matching that question\'s schema, e.g. {"taskId": "…", "answers": {"name": {"name": "Ada"}}}. ' +
          'Questions marked for the person only (approvals) cannot be answered here: ask the user to answer them.',
        AnswerArgs,
      ),
    ),
    entry(
      TASK_CANCEL,
      'Cancel a task',
      'Stops a background task that an earlier tool call started and that is no longer wanted. The tool does not finish; work it already did is not undone.',
      CancelArgs,
    ),
  ];
}

/** Each answer is an object (its own schema is the question's): said so, rather than a schema that accepts anything. */
function answerEntry<T extends { inputSchema: { type: 'object'; [key: string]: unknown } }>(tool: T): T {
  const properties = tool.inputSchema['properties'] as Record<string, Record<string, unknown>>;
  const { description } = properties['answers'] ?? {};
  properties['answers'] = { type: 'object', description, additionalProperties: { type: 'object', additionalProperties: true } };
  return tool;
}

/** A `CallToolResult` of plain text, with `structuredContent`. */
function reply(text: string, structuredContent: Record<string, unknown>, isError = false): ToolResult {
  return { content: [{ type: 'text', text }], structuredContent, ...(isError ? { isError: true } : {}) };
}

/** One answer for an id that is unknown, expired or another principal's: nothing tells them apart. */
function unknownTask(taskId: string, settings: FallbackDeps['settings']): ToolResult {
  const shown = taskId.slice(0, 128);
  return reply(
    `No task "${shown}" is known to you. Check the id: use exactly the taskId a tool result gave you. ` +
      `A finished task's result stays readable for ${humanMs(settings.retentionMs)} after it ends, then it is gone.`,
    { taskId: shown, status: 'unknown' },
    true,
  );
}

function invalidArguments(tool: string, error: z.ZodError): ToolResult {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
  return { content: [{ type: 'text', text: `Invalid arguments for ${tool}: ${issues}` }], isError: true };
}

/** Whether only a person may answer this question. */
export function forPersonOnly(request: InputRequest): boolean {
  const meta = request.params?.['_meta'] as Record<string, unknown> | undefined;
  return meta?.[ANSWERED_BY_META] === 'person';
}

/** `text` ending as a sentence does. */
function sentence(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

/** How to reach the task's result, for the texts. */
function followUp(taskId: string): string {
  return `call ${TASK_STATUS} with {"taskId": "${taskId}", "waitSeconds": 20}, and again while it says the task is working`;
}

/** A task waiting on answers. */
type OpenTask = TaskRecord & { status: 'input_required' };

/** The open questions, for the text and for `structuredContent`. */
function questions(task: OpenTask) {
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
    if (person) {
      lines.push(
        `- "${key}" (for the person only; you must not answer it): ${sentence(message)} Ask the user to answer it in a client that supports MCP tasks, ` +
          `or by running \`mcp-tasks answer ${task.taskId}\`.`,
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
export function describeTask(task: TaskRecord, settings: FallbackDeps['settings'], options: { firstAnswer?: boolean } = {}): ToolResult {
  const { taskId, tool } = task;
  const kept = `Its result stays readable for ${humanMs(settings.retentionMs)} after it ends.`;
  const again = `Do not call ${tool} again for this: that would start the work a second time.`;
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
        true,
      );
    case 'cancelled':
      return reply(
        `Task ${taskId} (${tool}) was cancelled${task.statusMessage ? ` (${task.statusMessage})` : ''}; the tool did not finish.`,
        { taskId, status: task.status },
      );
    case 'input_required': {
      const { lines, listed } = questions(task);
      const answerable = Object.values(listed).some((question) => question['answeredBy'] !== 'person');
      const how = answerable
        ? `Answer with ${TASK_ANSWER} {"taskId": "${taskId}", "answers": {"<key>": {…}}}, then ${followUp(taskId)}.`
        : `Once the person has answered, ${followUp(taskId)}.`;
      const opening = options.firstAnswer
        ? `${tool} is running as background task ${taskId} and is waiting for answers to these questions:`
        : `Task ${taskId} (${tool}) is waiting for answers to these questions:`;
      return reply([opening, ...lines, how, again, kept].join('\n'), { taskId, status: task.status, questions: listed });
    }
    case 'working': {
      const progress = task.statusMessage ? ` Latest progress: ${task.statusMessage}.` : '';
      const opening = options.firstAnswer
        ? `${tool} is taking longer than this reply may wait, so it goes on running as background task ${taskId}; nothing is lost.`
        : `Task ${taskId} (${tool}) is still working.`;
      return reply([`${opening}${progress}`, again, `To get its result, ${followUp(taskId)}.`, kept].join('\n'), {
        taskId,
        status: task.status,
        ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      });
    }
  }
}

/**
 * Reads the task once a second while it is `working`, until it ends, asks
 * something, or `until` (epoch ms) is less than a read interval away.
 * Returns the last state read, or `undefined` when the task is gone.
 */
export async function waitOnTask(
  deps: Pick<FallbackDeps, 'store' | 'now'>,
  task: TaskRecord,
  principal: string,
  until: number,
  signal: AbortSignal,
): Promise<TaskRecord | undefined> {
  let current: TaskRecord | undefined = task;
  while (current?.status === 'working' && !signal.aborted && until - deps.now() >= WAIT_READ_MS) {
    try {
      await sleep(WAIT_READ_MS, signal);
    } catch (error) {
      if (signal.aborted) break; // the client left: nothing more to read for it
      throw error;
    }
    current = await deps.store.get(task.taskId, principal, deps.now());
  }
  return current;
}

/** Serves `task_status`, `task_answer` or `task_cancel` for `principal`. */
export async function callFallbackTool(
  name: string,
  args: Record<string, unknown>,
  principal: string,
  deps: FallbackDeps,
  signal: AbortSignal,
): Promise<ToolResult> {
  switch (name) {
    case TASK_STATUS: {
      const parsed = StatusArgs.safeParse(args);
      if (!parsed.success) return invalidArguments(name, parsed.error);
      const { taskId, waitSeconds = 0 } = parsed.data;
      const task = await deps.store.get(taskId, principal, deps.now());
      if (!task) return unknownTask(taskId, deps.settings);
      const waitMs = Math.min(waitSeconds * 1000, deps.settings.syncBudgetMs);
      const latest = await waitOnTask(deps, task, principal, deps.now() + waitMs, signal);
      return latest ? describeTask(latest, deps.settings) : unknownTask(taskId, deps.settings);
    }
    case TASK_ANSWER: {
      const parsed = AnswerArgs.safeParse(args);
      if (!parsed.success) return invalidArguments(name, parsed.error);
      return answer(parsed.data.taskId, parsed.data.answers, principal, deps);
    }
    case TASK_CANCEL: {
      const parsed = CancelArgs.safeParse(args);
      if (!parsed.success) return invalidArguments(name, parsed.error);
      return cancel(parsed.data.taskId, principal, deps);
    }
    default:
      throw new Error(`Not a fallback tool: ${name}`);
  }
}

async function answer(taskId: string, given: Record<string, unknown>, principal: string, deps: FallbackDeps): Promise<ToolResult> {
  const task = await deps.store.get(taskId, principal, deps.now());
  if (!task) return unknownTask(taskId, deps.settings);
  if (task.status !== 'input_required') {
    return reply(
      `Task ${taskId} (${task.tool}) is ${task.status} and has no open questions: nothing was recorded. ${isTerminal(task.status) ? `Call ${TASK_STATUS} for its outcome.` : `${followUp(taskId)[0]?.toUpperCase()}${followUp(taskId).slice(1)}.`}`,
      { taskId, status: task.status },
      true,
    );
  }
  const checked = checkGiven(task, given);
  if (!checked.ok) return checked.refusal;
  return record(task, checked.responses, principal, deps);
}

/**
 * The responses to record for the answers given, or why nothing is: a
 * question for the person only, no open question named, an answer that does
 * not fit its question, or answers too large. Keys that are not open
 * questions are ignored.
 */
function checkGiven(
  task: OpenTask,
  given: Record<string, unknown>,
): { ok: true; responses: Record<string, unknown> } | { ok: false; refusal: ToolResult } {
  const { taskId, status, inputRequests: open } = task;
  const refuse = (text: string, detail: Record<string, unknown> = {}) =>
    ({ ok: false, refusal: reply(text, { taskId, status, ...detail }, true) }) as const;
  const keys = Object.keys(given).filter((key) => Object.hasOwn(open, key));
  const personOnly = keys.filter((key) => forPersonOnly(open[key]!));
  if (personOnly.length > 0) {
    return refuse(
      `Not recorded: ${personOnly.map((key) => `"${key}"`).join(', ')} ${personOnly.length === 1 ? 'is a question' : 'are questions'} for the person only, ` +
        `which you must not answer on their behalf. Ask the user to answer it themselves, in a client that supports MCP tasks or by running ` +
        `\`mcp-tasks answer ${taskId}\`; then ${followUp(taskId)}.`,
      { refused: personOnly },
    );
  }
  if (keys.length === 0) {
    return refuse(
      `None of the keys given is an open question of task ${taskId}; nothing was recorded. Open questions: ${Object.keys(open)
        .map((key) => `"${key}"`)
        .join(', ')}. Call ${TASK_STATUS} to see them with their schemas.`,
      { open: Object.keys(open) },
    );
  }
  const { responses, problems } = responsesTo(open, keys, given);
  if (problems.length > 0)
    return refuse(`Nothing was recorded: ${problems.join('; ')}. Call ${TASK_STATUS} to see each question's schema.`);
  try {
    checkAnswers(responses);
  } catch (error) {
    if (error instanceof LimitExceededError) return refuse(`Nothing was recorded: ${error.message}.`);
    throw error;
  }
  return { ok: true, responses };
}

/** Each answer as the task records it (a form's as accepted content), and what does not fit its question. */
function responsesTo(open: OpenTask['inputRequests'], keys: string[], given: Record<string, unknown>) {
  const responses: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of keys) {
    const request = open[key]!;
    const value = given[key];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`"${key}" must be an object`);
      continue;
    }
    if (request.method === 'elicitation/create') {
      const problem = schemaProblem(value as Record<string, unknown>, request.params?.['requestedSchema']);
      if (problem) problems.push(`"${key}": ${problem}`);
      else responses[key] = { action: 'accept', content: value };
    } else {
      responses[key] = value;
    }
  }
  return { responses, problems };
}

/** Records the responses; the task is queued again once its last open question is answered. */
async function record(task: OpenTask, responses: Record<string, unknown>, principal: string, deps: FallbackDeps): Promise<ToolResult> {
  const { taskId } = task;
  let recorded: Awaited<ReturnType<TaskStore['answer']>>;
  try {
    recorded = await deps.store.answer(taskId, principal, responses, deps.now());
  } catch (error) {
    if (error instanceof TaskNotFoundError) return unknownTask(taskId, deps.settings);
    throw error;
  }
  const { accepted, resumed } = recorded;
  if (resumed) await deps.enqueue(taskId, 'resume');
  const left = Object.keys(task.inputRequests).filter((key) => !accepted.includes(key));
  const next = resumed
    ? `The task goes on; to get its result, ${followUp(taskId)}.`
    : `Still open: ${left.map((key) => `"${key}"`).join(', ')}.`;
  return reply(`Recorded ${accepted.map((key) => `"${key}"`).join(', ') || 'nothing'} for task ${taskId}. ${next}`, {
    taskId,
    status: resumed ? 'working' : task.status,
    accepted,
  });
}

async function cancel(taskId: string, principal: string, deps: FallbackDeps): Promise<ToolResult> {
  const at = deps.now();
  let outcome: Awaited<ReturnType<TaskStore['cancel']>>;
  try {
    outcome = await deps.store.cancel(taskId, principal, at);
  } catch (error) {
    if (error instanceof TaskNotFoundError) return unknownTask(taskId, deps.settings);
    throw error;
  }
  if (outcome === 'cancelled') {
    logTaskEnded(deps.log, { taskId }, 'cancelled', at);
    return reply(`Task ${taskId} is cancelled; its tool did not finish.`, { taskId, status: 'cancelled' });
  }
  if (outcome === 'requested') {
    return reply(
      `Cancellation of task ${taskId} is requested: it stops at its next check, within seconds. Call ${TASK_STATUS} to confirm it ended cancelled.`,
      { taskId, status: 'working', cancelRequested: true },
    );
  }
  const task = await deps.store.get(taskId, principal, deps.now());
  if (!task) return unknownTask(taskId, deps.settings);
  return reply(`Task ${taskId} had already ended (${task.status}); nothing to cancel. Call ${TASK_STATUS} for its outcome.`, {
    taskId,
    status: task.status,
  });
}

/**
 * The first way `value` does not fit a form's requested schema (required
 * keys, and the primitive type and enum of each property), or `undefined`.
 * Forms are flat objects of primitives (MCP elicitation).
 */
function schemaProblem(value: Record<string, unknown>, schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const { properties = {}, required = [] } = schema as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  for (const key of required) if (!Object.hasOwn(value, key)) return `missing "${key}"`;
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key];
    if (!property) continue;
    const type = property['type'];
    const actual = typeof item;
    const fits =
      type === undefined || (type === 'integer' ? Number.isInteger(item) : type === 'number' ? actual === 'number' : type === actual);
    if (!fits) return `"${key}" must be ${/^[aeiou]/.test(String(type)) ? 'an' : 'a'} ${String(type)}`;
    const choices = property['enum'];
    if (Array.isArray(choices) && !choices.includes(item)) return `"${key}" must be one of ${JSON.stringify(choices)}`;
  }
  return undefined;
}
