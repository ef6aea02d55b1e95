import type { Server, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { TaskActions } from '../actions/task-actions.ts';
import { invalidParams, missingTasksCapability } from './errors.ts';
import { inBandAnswers, inputRequestsFor, type PersonPage } from './person-questions.ts';
import { detailedTask, type RenderContext } from './render.ts';
import { clientCapabilities, declaresTasks } from './server.ts';

/** What the task methods need from the endpoint. */
export interface TaskMethodDeps {
  actions: TaskActions;
  renderContext: () => RenderContext;
  /** Where questions for a person are decided, when URL-mode elicitation may send people there. */
  personPage?: PersonPage;
}

const TaskIdParams = z.object({ taskId: z.string() }).passthrough();

/**
 * `tasks/get`, `tasks/update` and `tasks/cancel` of the extension (spec
 * §1.5–1.7), bound to the caller, each one task action in its wire form.
 * Errors (not found, over a budget) are mapped by TaskAwareServer, like
 * every method's.
 */
export function registerTaskMethods(server: Server, principal: string, deps: TaskMethodDeps): void {
  const { actions } = deps;
  const guard =
    <R>(fn: (params: { taskId: string }, ctx: ServerContext) => Promise<R>) =>
    async (params: { taskId: string }, ctx: ServerContext) => {
      if (!declaresTasks(clientCapabilities(ctx))) throw missingTasksCapability();
      return fn(params, ctx);
    };

  server.setRequestHandler(
    'tasks/get',
    { params: TaskIdParams },
    guard(async ({ taskId }, ctx) => {
      const task = await actions.readOwn(taskId, principal);
      const shown = detailedTask(task, deps.renderContext());
      if (task.status !== 'input_required') return shown;
      return { ...shown, inputRequests: inputRequestsFor(task, clientCapabilities(ctx), deps.personPage) };
    }),
  );

  // The SDK lifts `inputResponses` out of the params (as for any multi-round-trip retry).
  server.setRequestHandler(
    'tasks/update',
    { params: TaskIdParams },
    guard(async ({ taskId }, ctx) => {
      const inputResponses = ctx.mcpReq.inputResponses;
      if (!inputResponses) throw invalidParams('tasks/update requires inputResponses');
      await actions.answer(taskId, principal, inputResponses, inBandAnswers({ taskId }, clientCapabilities(ctx), deps.personPage));
      return {};
    }),
  );

  // Acked whatever the task's state (a terminal task too); an unknown id is not found.
  server.setRequestHandler(
    'tasks/cancel',
    { params: TaskIdParams },
    guard(async ({ taskId }) => {
      await actions.cancel(taskId, principal);
      return {};
    }),
  );
}
