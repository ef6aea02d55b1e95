import { errorName, type Log } from '../../shared/log.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';

/** A store that remembers the leases taken through it, and the hand-back of those still held. */
export interface TrackedLeases {
  /** The store, recording leases as they are taken and given up. */
  store: TaskStore;
  /** Releases every lease still held, as a clean hand-over, due at `now`; logs each. */
  handBack(now: number, log: Log): Promise<void>;
}

/**
 * The store, with a record of the leases taken through it and not yet given
 * up (by `finish` or `release`), so that a graceful stop can release them.
 * A proxy: every other method is the store's own.
 */
export function trackLeases(store: TaskStore): TrackedLeases {
  const held = new Map<string, string>();
  const tracked: Partial<TaskStore> = {
    claim: async (taskId, leaseOwner, now) => {
      const task = await store.claim(taskId, leaseOwner, now);
      if (task) held.set(taskId, leaseOwner);
      return task;
    },
    finish: (task, leaseOwner, outcome, now) => store.finish(task, leaseOwner, outcome, now).finally(() => held.delete(task.taskId)),
    release: (taskId, leaseOwner, resumeAt, options) =>
      store.release(taskId, leaseOwner, resumeAt, options).finally(() => held.delete(taskId)),
  };
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === 'string' && Object.hasOwn(tracked, property)) return tracked[property as keyof TaskStore];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    store: proxy,
    async handBack(now, log) {
      for (const [taskId, leaseOwner] of [...held]) {
        held.delete(taskId);
        // Stopping is a clean hand-over: it does not count as a failed attempt.
        await store.release(taskId, leaseOwner, now, { handedOver: true }).then(
          () => log({ event: 'handed-back', taskId }),
          (error: unknown) => log({ event: 'hand-back-failed', taskId, error: errorName(error) }),
        );
      }
    },
  };
}
