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
import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { TaskSettings } from '../config.ts';
import type { Log } from '../log.ts';
import { logTaskEnded } from '../metrics.ts';
import type { ToolDefinition } from '../runtime/tool.ts';
import { isTerminal, type TaskRecord } from '../tasks/model.ts';
import { TaskNotFoundError, type TaskStore } from '../tasks/store.ts';
import { INTERNAL_ERROR, INVALID_PARAMS, META_KEYS, PROTOCOL_VERSION } from '../wire.ts';
import { type RenderContext, taskFields } from './render.ts';

/** The server's `tasks` capability on a 2025-11-25 `initialize`. */
export const LEGACY_TASKS_CAPABILITY = { cancel: {}, requests: { tools: { call: {} } } } as const;

/** How often a waiting `tasks/result` reads the task (one strongly consistent read each). */
const RESULT_POLL_MS = 1_000;

export interface LegacyTaskDeps {
  store: TaskStore;
  settings: Pick<TaskSettings, 'syncBudgetMs'>;
  now: () => number;
  renderContext: () => RenderContext;
  log: Log;
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
export function legacyTask(task: TaskRecord, context: RenderContext) {
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
  const handle =
    <R>(fn: (taskId: string) => Promise<R>) =>
    ({ taskId }: { taskId: string }) =>
      fn(taskId);
  server.setRequestHandler(
    'tasks/get',
    { params: TaskIdParams },
    handle(async (taskId) => legacyTask(await readTask(taskId, principal, deps), deps.renderContext())),
  );
  server.setRequestHandler(
    'tasks/result',
    { params: TaskIdParams },
    handle(async (taskId) => endedResult(taskId, await awaitEnd(taskId, principal, deps)) as never),
  );
  server.setRequestHandler(
    'tasks/cancel',
    { params: TaskIdParams },
    handle((taskId) => cancelTask(taskId, principal, deps)),
  );
}

/** The caller's task; an unknown, expired or another principal's id is `TaskNotFoundError`. */
async function readTask(taskId: string, principal: string, deps: LegacyTaskDeps): Promise<TaskRecord> {
  const task = await deps.store.get(taskId, principal, deps.now());
  if (!task) throw new TaskNotFoundError(taskId);
  return task;
}

/**
 * `tasks/result` waits for the task to end, at most the synchronous budget
 * (below the function timeout and API Gateway's 30 s). If it has not ended by
 * then, the answer is a `-32603` error whose data says `{ taskId, status,
 * retry: true }`: the task goes on, and the client polls `tasks/get` and
 * calls `tasks/result` again.
 */
async function awaitEnd(taskId: string, principal: string, deps: LegacyTaskDeps): Promise<TaskRecord> {
  const deadline = deps.now() + deps.settings.syncBudgetMs;
  let task = await readTask(taskId, principal, deps);
  while (!isTerminal(task.status)) {
    if (task.status === 'input_required') {
      throw new ProtocolError(
        INTERNAL_ERROR,
        `Task ${taskId} waits for input, which this server takes only from ${PROTOCOL_VERSION} clients (tasks/update); cancel it or answer it with such a client`,
        { taskId, status: task.status },
      );
    }
    const left = deadline - deps.now();
    if (left <= 0) {
      throw new ProtocolError(
        INTERNAL_ERROR,
        `Task ${taskId} is still ${task.status}; poll tasks/get and call tasks/result again once it has ended`,
        { taskId, status: task.status, retry: true },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(RESULT_POLL_MS, left)));
    task = await readTask(taskId, principal, deps);
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
 * ends at once too (its worker's lease is voided; it stops at its next check).
 */
async function cancelTask(taskId: string, principal: string, deps: LegacyTaskDeps) {
  const at = deps.now();
  const outcome = await deps.store.cancel(taskId, principal, at, { atOnce: true });
  if (outcome === 'terminal') throw new ProtocolError(INVALID_PARAMS, `Task ${taskId} has already ended and cannot be cancelled`);
  if (outcome === 'cancelled') logTaskEnded(deps.log, { taskId }, 'cancelled', at);
  return legacyTask(await readTask(taskId, principal, deps), deps.renderContext());
}
