/**
 * The fallback for clients that do not declare the tasks extension on a
 * request (every 2025-era request, and 2026-07-28 requests without it):
 * editor and desktop clients, SDK-built agents, the SDK v1 client without
 * its experimental API. They cannot follow a `CreateTaskResult`, so:
 *
 * - a long call (an `optional` tool that does not finish within the
 *   synchronous budget, or a `task` tool; the router decides) runs as a
 *   durable task on the same store, queue and workers. The endpoint creates
 *   the task first and queues it, then waits on the row (the task actions'
 *   one wait, a read a second) until the budget. Work that ends within it
 *   answers its own result; otherwise the call answers an ordinary
 *   `CallToolResult` naming the task, written for a model. The request never
 *   runs the handler itself, so nothing runs twice across the budget and
 *   nothing is abandoned at it.
 * - three ordinary tools follow such a task: `task_status`, `task_answer`
 *   and `task_cancel`, bound to the caller like the task methods and acting
 *   through the same task actions. An unknown, expired and another
 *   principal's id all read alike.
 *
 * A task started here may ask its questions whatever the call declared:
 * `task_answer` is their channel. A question marked for a person only
 * (`answeredBy: 'person'`, e.g. `approval_gate`'s) is refused there; the
 * person answers it in a task-capable client or with `mcp-tasks answer`.
 * What the model reads (listing, texts) is in `fallback-texts.ts`.
 *
 * Cost: a call that ends within the budget costs one task's writes (create,
 * the worker's claim and finish) and at most one read a second while it
 * waits; `task_status` costs one read (plus one a second of `waitSeconds`),
 * `task_answer` a read and the answer's write, `task_cancel` the cancel's
 * write (and a read when the task had already ended).
 */
import { checkGivenAnswers } from '../actions/answers.ts';
import type { TaskActions } from '../actions/task-actions.ts';
import type { TaskSettings } from '../config.ts';
import type { ToolResult } from '../runtime/tool.ts';
import { jsonBytes, LimitExceededError, MAX_ARGUMENTS_BYTES } from '../tasks/limits.ts';
import { TaskNotFoundError } from '../tasks/store-errors.ts';
import {
  alreadyEnded,
  answersRecorded,
  answersRefused,
  cancelOutcome,
  describeTask,
  invalidArguments,
  notWaiting,
  type TextContext,
  unknownTask,
} from './fallback-texts.ts';
import { AnswerArgs, CancelArgs, StatusArgs, TASK_ANSWER, TASK_CANCEL, TASK_STATUS } from './fallback-tools.ts';

/** What the fallback tools need from the endpoint. */
export interface FallbackDeps {
  actions: TaskActions;
  config: Pick<TaskSettings, 'syncBudgetMs'>;
  now: () => number;
  /** What the texts quote and link to. */
  text: TextContext;
}

/** Serves `task_status`, `task_answer` or `task_cancel` for `principal`. */
export async function callFallbackTool(
  name: string,
  args: Record<string, unknown>,
  principal: string,
  deps: FallbackDeps,
  signal: AbortSignal,
): Promise<ToolResult> {
  // Over the size budget is a mistake the model can correct, not a protocol error.
  const bytes = jsonBytes(args);
  if (bytes > MAX_ARGUMENTS_BYTES) {
    return invalidArguments(name, `the arguments are ${bytes} bytes, more than the ${MAX_ARGUMENTS_BYTES} bytes a call may carry`);
  }
  switch (name) {
    case TASK_STATUS: {
      const parsed = StatusArgs.safeParse(args);
      if (!parsed.success) return invalidArguments(name, parsed.error);
      return status(parsed.data.taskId, parsed.data.waitSeconds ?? 0, principal, deps, signal);
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

/** `task_status`: the task as it is, or once it ends or asks, within `waitSeconds` (at most the budget). */
async function status(taskId: string, waitSeconds: number, principal: string, deps: FallbackDeps, signal: AbortSignal) {
  const task = await deps.actions.read(taskId, principal);
  if (!task) return unknownTask(taskId, deps.text);
  const waitMs = Math.min(waitSeconds * 1000, deps.config.syncBudgetMs);
  const latest = await deps.actions.wait(task, principal, deps.now() + waitMs, signal);
  return latest ? describeTask(latest, deps.text) : unknownTask(taskId, deps.text);
}

/**
 * `task_answer`: nothing is recorded unless every answer given to an open
 * question fits it and none is for a person only; keys that are not open
 * questions are ignored. The task is queued again once its last question is answered.
 */
async function answer(taskId: string, given: Record<string, unknown>, principal: string, deps: FallbackDeps): Promise<ToolResult> {
  const task = await deps.actions.read(taskId, principal);
  if (!task) return unknownTask(taskId, deps.text);
  if (task.status !== 'input_required') return notWaiting(task);
  const check = checkGivenAnswers(task.inputRequests, given, { personAllowed: false });
  if (!check.ok) return answersRefused(task, check, deps.text);
  try {
    const { accepted, resumed } = await deps.actions.answer(taskId, principal, check.responses);
    return answersRecorded(task, accepted, resumed);
  } catch (error) {
    if (error instanceof TaskNotFoundError) return unknownTask(taskId, deps.text);
    // All of the task's answers together would pass the per-task budget.
    if (error instanceof LimitExceededError)
      return answersRefused(task, { ok: false, reason: 'too-large', message: error.message }, deps.text);
    throw error;
  }
}

/** `task_cancel`: as `tasks/cancel` of 2026-07-28 does, worded for the model. */
async function cancel(taskId: string, principal: string, deps: FallbackDeps): Promise<ToolResult> {
  let outcome: Awaited<ReturnType<TaskActions['cancel']>>;
  try {
    outcome = await deps.actions.cancel(taskId, principal);
  } catch (error) {
    if (error instanceof TaskNotFoundError) return unknownTask(taskId, deps.text);
    throw error;
  }
  if (outcome !== 'terminal') return cancelOutcome(taskId, outcome);
  const task = await deps.actions.read(taskId, principal);
  return task ? alreadyEnded(task) : unknownTask(taskId, deps.text);
}
