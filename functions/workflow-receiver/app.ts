import type { ActionStore } from '../../shared/actions/task-actions.ts';
import type { CallbackKeys } from '../../shared/callback-tokens.ts';
import { withLogContext } from '../../shared/log.ts';
import { deliverySpan } from '../../shared/tracing/actions.ts';
import { type ReceiverAnswer, workflowReceiver } from '../../shared/workflows/receiver.ts';
import type { FunctionDeps } from '../lib/deps.ts';

export type WorkflowReceiverHandler = (payload: unknown, context?: { awsRequestId?: string }) => Promise<ReceiverAnswer>;

/** What the receiver needs: the row, the resume, the bindings, and the keys (task tokens are sealed under one). */
export interface WorkflowReceiverDeps extends Pick<FunctionDeps<ActionStore>, 'config' | 'store' | 'queue' | 'log' | 'now'> {
  keys: CallbackKeys;
}

/**
 * The function a workflow's states invoke: questions from task-token states,
 * progress from fire-and-forget invokes (`shared/workflows/receiver.ts`). A
 * refusal throws a named error, which fails the state for the machine to
 * `Catch`. The payload, which holds a task token, is never logged (nor put
 * on the span).
 */
export function createWorkflowReceiverHandler(deps: WorkflowReceiverDeps): WorkflowReceiverHandler {
  const receive = workflowReceiver({ ...deps, bindings: deps.config.workflows });
  // Each invocation is a delivery's span (the installed tracing's): the resume a question queues links it.
  return (payload, context) =>
    withLogContext({ requestId: context?.awsRequestId }, () => deliverySpan({}, 'workflow state', 'consumer', () => receive(payload)));
}
