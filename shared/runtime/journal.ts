import type { TaskStore } from '../tasks/store.ts';
import type { StepRecord } from '../tasks/store-types.ts';
import type { Journal } from './run-types.ts';

/** The store's journal of one task, as a run and the worker's progress checks read it. */
export interface TaskJournal extends Journal {
  /** How many steps are recorded (loads the journal if no step has yet). */
  count(): Promise<number>;
  /** How many steps are recorded, if the journal was loaded: undefined costs no query. */
  loadedCount(): number | undefined;
}

/**
 * Step checkpoints, loaded with one query the first time a step or sleep
 * needs them (or the attempt cap counts them), then kept up to date: a run
 * that records steps queries the journal once, however many it replays.
 */
export function taskJournal(store: Pick<TaskStore, 'loadJournal' | 'saveStep'>, taskId: string, now: () => number): TaskJournal {
  let steps: Promise<Map<string, StepRecord>> | undefined;
  let loaded: Map<string, StepRecord> | undefined;
  const load = () => (steps ??= store.loadJournal(taskId).then((map) => (loaded = map)));
  return {
    async lookup(name) {
      return (await load()).get(name);
    },
    async record(name, value, position) {
      const stored = await store.saveStep(taskId, { name, value, now: now(), ...(position === undefined ? {} : { position }) });
      const map = await load();
      if (!map.has(name)) map.set(name, position === undefined ? { value: stored } : { value: stored, position });
      return stored;
    },
    entries: () => load(),
    count: async () => (await load()).size,
    loadedCount: () => loaded?.size,
  };
}
