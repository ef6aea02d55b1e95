/**
 * Tasks for 2025-11-25 clients: the experimental tasks of that revision
 * (SEP-1686 as shipped), served from the same store, queue and workers as the
 * extension and bound to the same principal, so a client such as the MCP SDK
 * v1's `experimental.tasks.callToolStream` runs a long tool to its result.
 *
 * What differs from the extension, following that revision:
 * - the server declares `tasks: { cancel, requests: { tools: { call } } }` on
 *   `initialize`, and each tool its `execution.taskSupport`;
 * - the client asks for a task with `params.task` on `tools/call`, and gets
 *   the nested `CreateTaskResult` `{ task }` (fields `ttl`, `pollInterval`);
 * - `tasks/get` answers the task's metadata only; `tasks/result` waits for the
 *   task to end and answers the tool's result (or its JSON-RPC error), tagged
 *   with `io.modelcontextprotocol/related-task`;
 * - a tool result with `isError: true` shows as `failed` (tasks/result still
 *   answers the result);
 * - `tasks/cancel` ends the task `cancelled` (a running one too) and answers
 *   it, and `-32602` for one already ended.
 *
 * Not offered, and why:
 * - input inside a task. That revision delivers `elicitation/create` and
 *   `sampling/createMessage` as server requests on the SSE stream of a held
 *   `tasks/result`; behind API Gateway nothing streams and no request is held
 *   past ~30 s, and no worker can reach a client's stream. A 2025 task is
 *   created without the client's elicitation and sampling capabilities, so a
 *   tool that asks (e.g. `approval_gate`) ends `failed` with `-32021`;
 *   such tools need a 2026-07-28 client with the extension, or a plain
 *   `tools/call` (no `params.task`), which the fallback serves and whose
 *   questions `task_answer` answers (see `fallback.ts`).
 * - `tasks/list` (it would need an index of tasks per principal: one more
 *   write per task), `notifications/tasks/status` (nothing streams), tasks
 *   the client hosts (for its own sampling and elicitation), and a
 *   client-chosen `ttl` (finished tasks are kept `TASKS_RETENTION_MS`; the
 *   `ttl` answered says so).
 */
import { ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { TaskActions } from '../actions/task-actions.ts';
import type { TaskSettings } from '../config.ts';
import type { ToolDefinition } from '../runtime/tool.ts';
import { isTerminal, type TaskRecord } from '../tasks/model.ts';
import { TaskNotFoundError } from '../tasks/store-errors.ts';
import { INTERNAL_ERROR, INVALID_PARAMS, META_KEYS, PROTOCOL_VERSION } from '../wire.ts';
import { type RenderContext, taskFields } from './render.ts';

/** The one revision whose `initialize` carries these tasks. */
export const LEGACY_TASKS_REVISION = '2025-11-25';

/** The server's `tasks` capability on a 2025-11-25 `initialize`. */
export const LEGACY_TASKS_CAPABILITY = { cancel: {}, requests: { tools: { call: {} } } } as const;

export interface LegacyTaskDeps {
  actions: TaskActions;
  config: Pick<TaskSettings, 'syncBudgetMs'>;
  now: () => number;
  renderContext: () => RenderContext;
}

/** A tool's 2025-11-25 `execution.taskSupport`, from how it may run. */
export function legacyExecution(tool: ToolDefinition): { taskSupport: 'forbidden' | 'optional' | 'required' } {
  return { taskSupport: tool.execution === 'task' ? 'required' : tool.execution === 'optional' ? 'optional' : 'forbidden' };
}

/** Whether a 2025-11-25 `tools/call` asked to run as a task (`params.task`). */
export function wantsLegacyTask(params: Record<string, unknown>): boolean {
  const task = params['task'];
  return typeof task === 'object' && task !== null && !Array.isArray(task);
}

/** The 2025-11-25 `Task`: `ttl` and `pollInterval`, and a tool error shows as `failed`. */
function legacyTask(task: TaskRecord, context: RenderContext) {
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = taskFields(task, context);
  const toolError = task.status === 'completed' && task.result['isError'] === true;
  return {
    taskId,
    status: toolError ? ('failed' as const) : status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    createdAt,
    lastUpdatedAt,
    ttl: ttlMs,
    pollInterval: pollIntervalMs,
  };
}

/** The nested 2025-11-25 `CreateTaskResult`. */
export function legacyCreateTaskResult(task: TaskRecord, context: RenderContext) {
  return { task: legacyTask(task, context) };
}

/** Whether a `tools/call` result is a 2025-11-25 `CreateTaskResult` (kept as is, not normalised as a CallToolResult). */
export function isLegacyCreateTaskResult(result: Record<string, unknown>): boolean {
  return typeof result['task'] === 'object' && result['task'] !== null && !('content' in result);
}

const TaskIdParams = z.object({ taskId: z.string().min(1) }).passthrough();

/** Registers `tasks/get`, `tasks/result` and `tasks/cancel` for a 2025-11-25 client acting as `principal`. */
export function registerLegacyTaskMethods(server: Server, principal: string, deps: LegacyTaskDeps): void {
  // Errors are mapped (and unexpected ones logged) by TaskAwareServer, like every method's.
  const { actions } = deps;
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }) =>
    legacyTask(await actions.readOwn(taskId, principal), deps.renderContext()),
  );
  server.setRequestHandler(
    'tasks/result',
    { params: TaskIdParams },
    async ({ taskId }, ctx) => endedResult(taskId, await awaitEnd(taskId, principal, deps, ctx)) as never,
  );
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, ({ taskId }) => cancelTask(taskId, principal, deps));
}

/**
 * `tasks/result` waits for the task to end (the task actions' one wait), at
 * most the synchronous budget (below the function timeout and API Gateway's
 * 30 s), and no longer than the client stays. A task waiting for input is an
 * error at once. If it has not ended by the budget, the answer is a `-32603`
 * error whose data says `{ taskId, status, retry: true }`: the task goes on,
 * and the client polls `tasks/get` and calls `tasks/result` again.
 */
async function awaitEnd(taskId: string, principal: string, deps: LegacyTaskDeps, ctx: ServerContext): Promise<TaskRecord> {
  const deadline = deps.now() + deps.config.syncBudgetMs;
  const first = await deps.actions.readOwn(taskId, principal);
  const task = isTerminal(first.status) ? first : await deps.actions.wait(first, principal, deadline, ctx.mcpReq.signal);
  if (!task) throw new TaskNotFoundError(taskId);
  if (task.status === 'input_required') {
    throw new ProtocolError(
      INTERNAL_ERROR,
      `Task ${taskId} waits for input, which this server takes only from ${PROTOCOL_VERSION} clients (tasks/update); cancel it or answer it with such a client`,
      { taskId, status: task.status },
    );
  }
  if (task.status === 'working') {
    throw new ProtocolError(
      INTERNAL_ERROR,
      `Task ${taskId} is still ${task.status}; poll tasks/get and call tasks/result again once it has ended`,
      { taskId, status: task.status, retry: true },
    );
  }
  return task;
}

/** What `tasks/result` answers for an ended task: the tool's result, or its error, tagged with the task. */
function endedResult(taskId: string, task: TaskRecord): Record<string, unknown> {
  const related = { [META_KEYS.relatedTask]: { taskId } };
  if (task.status === 'completed') {
    // `resultType` is 2026-07-28 vocabulary: not on a 2025-11-25 wire.
    const { resultType: _resultType, ...result } = task.result;
    return { ...result, _meta: { ...(result['_meta'] as Record<string, unknown> | undefined), ...related } };
  }
  if (task.status === 'failed')
    throw ProtocolError.fromError(task.error?.code ?? INTERNAL_ERROR, task.error?.message ?? 'Task failed', {
      ...(task.error?.data as object | undefined),
      ...related,
    });
  throw new ProtocolError(INTERNAL_ERROR, `Task ${taskId} was cancelled`, related);
}

/**
 * That revision wants the task `cancelled` before the answer: a running one
 * ends at once too (its worker's lease is voided; it stops at its next
 * check), and one already ended is `-32602`.
 */
async function cancelTask(taskId: string, principal: string, deps: LegacyTaskDeps) {
  const outcome = await deps.actions.cancel(taskId, principal, { atOnce: true });
  if (outcome === 'terminal') throw new ProtocolError(INVALID_PARAMS, `Task ${taskId} has already ended and cannot be cancelled`);
  return legacyTask(await deps.actions.readOwn(taskId, principal), deps.renderContext());
}
