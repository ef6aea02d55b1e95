import type { ActionStore } from '../../shared/actions/task-actions.ts';
import { withLogContext } from '../../shared/log.ts';
import { type Consumed, workflowEventConsumer } from '../../shared/workflows/consumer.ts';
import type { FunctionDeps } from '../lib/deps.ts';

export type WorkflowEventsHandler = (event: unknown, context?: { awsRequestId?: string }) => Promise<Consumed>;

/**
 * The target of the rule on the account's default bus that matches the bound
 * machines' "Step Functions Execution Status Change" events (ended statuses):
 * records an execution's end on its task and enqueues it
 * (`shared/workflows/consumer.ts`). A failure throws, for EventBridge's
 * retries and the target's dead-letter queue.
 */
export function createWorkflowEventsHandler(
  deps: Pick<FunctionDeps<ActionStore>, 'config' | 'store' | 'queue' | 'log' | 'now' | 'tracing'>,
): WorkflowEventsHandler {
  const consume = workflowEventConsumer({ ...deps, bindings: deps.config.workflows });
  return (event, context) => withLogContext({ requestId: context?.awsRequestId }, () => consume(event));
}
