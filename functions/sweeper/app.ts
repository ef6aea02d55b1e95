import type { Context } from 'aws-lambda';
import { errorName, withLogContext } from '../../shared/log.ts';
import { SWEEP_DEADLINE_MARGIN_MS, type SweeperStore, sweep } from '../../shared/runtime/sweeper.ts';
import type { FunctionDeps } from '../lib/deps.ts';
import { lifecycleEvents } from '../lib/events.ts';

export type SweeperHandler = (
  event?: unknown,
  context?: Pick<Context, 'awsRequestId'> & Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
) => Promise<{ requeued: number; expired: number }>;

/**
 * Scheduled: re-enqueues tasks that no worker has touched past their grace
 * period, and ends tasks whose wait for input passed `maxInputWaitMs`.
 */
export function createSweeperHandler(
  deps: Pick<FunctionDeps<SweeperStore>, 'config' | 'store' | 'queue' | 'log' | 'now' | 'eventPublisher'>,
): SweeperHandler {
  const events = lifecycleEvents(deps);
  return (_event, context) =>
    withLogContext({ requestId: context?.awsRequestId }, async () => {
      try {
        // Deployed, the run reads pages of due tasks while the invocation has time for them.
        const remaining = context?.getRemainingTimeInMillis?.();
        const now = (deps.now ?? Date.now)();
        const options = remaining === undefined ? {} : { deadline: now + remaining - SWEEP_DEADLINE_MARGIN_MS };
        const { requeued, expired } = await sweep({ ...deps, config: deps.config, ...(events ? { events } : {}) }, options);
        return { requeued: requeued.length, expired: expired.length };
      } catch (error) {
        // Logged here, as a structured line; the invocation still fails (and alarms).
        deps.log({ event: 'sweep-error', error: errorName(error) });
        throw error;
      }
    });
}
