import { sweep } from '../../shared/runtime/sweeper.ts';
import { config } from '../lib/config.ts';
import { log } from '../lib/log.ts';
import { queue } from '../lib/queue.ts';
import { store } from '../lib/store.ts';

/** Scheduled: re-enqueues tasks that no worker has touched past their grace period. */
export async function handler(): Promise<{ requeued: number }> {
  const { requeued } = await sweep({ store, queue, settings: config, log });
  return { requeued: requeued.length };
}
