import type { Context } from 'aws-lambda';
import { errorName, withLogContext } from '../../shared/log.ts';
import { sweep } from '../../shared/runtime/sweeper.ts';
import type { FunctionDeps } from '../lib/deps.ts';

export type SweeperHandler = (event?: unknown, context?: Pick<Context, 'awsRequestId'>) => Promise<{ requeued: number; expired: number }>;

/**
 * Scheduled: re-enqueues tasks that no worker has touched past their grace
 * period, and ends tasks whose wait for input passed `maxInputWaitMs`.
 */
export function createSweeperHandler(deps: Pick<FunctionDeps, 'config' | 'store' | 'queue' | 'log' | 'now'>): SweeperHandler {
  return (_event, context) =>
    withLogContext({ requestId: context?.awsRequestId }, async () => {
      try {
        const { requeued, expired } = await sweep({ ...deps, settings: deps.config });
        return { requeued: requeued.length, expired: expired.length };
      } catch (error) {
        // Logged here, as a structured line; the invocation still fails (and alarms).
        deps.log({ event: 'sweep-error', error: errorName(error) });
        throw error;
      }
    });
}
