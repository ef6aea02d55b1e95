import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { hasApprovers } from '../../shared/auth/approvers.ts';
import { DeploymentLinks } from '../../shared/links.ts';
import { errorName, withLogContext } from '../../shared/log.ts';
import { parseTaskMessage } from '../../shared/queue/queue.ts';
import { type Disposition, processTaskMessage } from '../../shared/runtime/worker.ts';
import type { WorkerStore } from '../../shared/tasks/store.ts';
import type { FunctionDeps } from '../lib/deps.ts';
import { lifecycleEvents } from '../lib/events.ts';

export type WorkerHandler = (
  event: SQSEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>,
) => Promise<SQSBatchResponse>;

/**
 * The worker: an SQS event source with partial batch responses. Records of a
 * batch run concurrently; a record whose task should run again is reported as
 * failed and redelivered after the visibility timeout, and after
 * `maxReceiveCount` it reaches the dead-letter queue.
 */
export function createWorkerHandler(deps: FunctionDeps<WorkerStore>): WorkerHandler {
  const { log } = deps;
  const events = lifecycleEvents(deps);
  const links = deps.links ?? new DeploymentLinks(deps.config.publicUrl);
  return async (event, context) => {
    const remainingMs = context ? () => context.getRemainingTimeInMillis() : undefined;
    const dispositions = await Promise.all(
      event.Records.map((record) =>
        withLogContext({ requestId: context?.awsRequestId, messageId: record.messageId }, async (): Promise<Disposition> => {
          const message = parseTaskMessage(record.body);
          if (!message) {
            log({ event: 'malformed-message' });
            return 'done';
          }
          return withLogContext({ taskId: message.taskId }, () =>
            processTaskMessage(message, {
              ...deps,
              config: deps.config,
              links,
              approvers: hasApprovers(deps.config.approvers),
              ...(remainingMs ? { remainingMs } : {}),
              ...(events ? { events } : {}),
            }).catch((error: unknown) => {
              log({ event: 'worker-error', error: errorName(error) });
              return 'retry' as const;
            }),
          );
        }),
      ),
    );
    return {
      batchItemFailures: event.Records.filter((_, i) => dispositions[i] === 'retry').map((record) => ({
        itemIdentifier: record.messageId,
      })),
    };
  };
}
