import type { Server, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Log } from '../log.ts';
import { logTaskEnded } from '../metrics.ts';
import { checkAnswers } from '../tasks/limits.ts';
import { TaskNotFoundError, type TaskStore } from '../tasks/store.ts';
import { invalidParams, missingTasksCapability } from './errors.ts';
import { detailedTask, type RenderContext } from './render.ts';
import { clientCapabilities, declaresTasks } from './server.ts';

/** What the task methods need from the endpoint. */
export interface TaskMethodDeps {
  store: TaskStore;
  log: Log;
  now: () => number;
  renderContext: () => RenderContext;
  /** Queues a task that became due to run again (a refused send is left to the sweeper). */
  enqueue: (taskId: string, reason: 'resume') => Promise<void>;
}

const TaskIdParams = z.object({ taskId: z.string() }).passthrough();

/** `tasks/get`, `tasks/update` and `tasks/cancel` of the extension (spec §1.5–1.7), bound to the caller. */
export function registerTaskMethods(server: Server, principal: string, deps: TaskMethodDeps): void {
  const { now } = deps;
  // Errors are mapped by TaskAwareServer, like every method's.
  const guard =
    <R>(fn: (params: { taskId: string }, ctx: ServerContext) => Promise<R>) =>
    async (params: { taskId: string }, ctx: ServerContext) => {
      if (!declaresTasks(clientCapabilities(ctx))) throw missingTasksCapability();
      return fn(params, ctx);
    };

  server.setRequestHandler(
    'tasks/get',
    { params: TaskIdParams },
    guard(async ({ taskId }) => {
      const task = await deps.store.get(taskId, principal, now());
      if (!task) throw new TaskNotFoundError(taskId);
      return detailedTask(task, deps.renderContext());
    }),
  );

  // The SDK lifts `inputResponses` out of the params (as for any multi-round-trip retry).
  server.setRequestHandler(
    'tasks/update',
    { params: TaskIdParams },
    guard(async ({ taskId }, ctx) => {
      const inputResponses = ctx.mcpReq.inputResponses;
      if (!inputResponses) throw invalidParams('tasks/update requires inputResponses');
      checkAnswers(inputResponses);
      const { resumed } = await deps.store.answer(taskId, principal, inputResponses, now());
      if (resumed) await deps.enqueue(taskId, 'resume');
      return {};
    }),
  );

  server.setRequestHandler(
    'tasks/cancel',
    { params: TaskIdParams },
    guard(async ({ taskId }) => {
      const at = now();
      if ((await deps.store.cancel(taskId, principal, at)) === 'cancelled') logTaskEnded(deps.log, { taskId }, 'cancelled', at);
      return {};
    }),
  );
}
