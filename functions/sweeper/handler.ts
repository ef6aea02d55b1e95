import { sweep } from '../../shared/runtime/sweeper.ts';
import { config, log, queue, store } from '../lib/deps.ts';

/** Scheduled: re-enqueues tasks that no worker has touched past their grace period. */
export async function handler(): Promise<{ requeued: number }> {
  const { requeued } = await sweep({ store, queue, settings: config, log });
  return { requeued: requeued.length };
}
