/**
 * The phases of a task's life: the one vocabulary the timeline (`ops trace`,
 * the task page's picture) speaks, and that a trace's spans may share. A
 * phase is a stretch of time between two of the task's moments
 * (`moments.ts`): waiting for a worker, a run, a wait on someone or
 * something, a retry's back-off, a run lost and recovered.
 *
 * No AWS SDK and no Node here: the console's page script may import it.
 */

/** Every phase, in the order a legend lists them. */
export const PHASES = [
  'queued',
  'run',
  'wait:person',
  'wait:client',
  'wait:callback',
  'wait:workflow',
  'wait:sleep',
  'retry',
  'recovered',
  'earlier',
] as const;

export type Phase = (typeof PHASES)[number];

/** The zero-length mark of a task's end (not a phase: nothing happens after it). */
export const END = 'end';

/** What each phase is called where a person reads it. */
export const PHASE_WORDS: Readonly<Record<Phase, string>> = {
  queued: 'Queued',
  run: 'Running',
  'wait:person': 'Waiting for a person',
  'wait:client': 'Waiting for the client',
  'wait:callback': 'Waiting for a callback',
  'wait:workflow': 'Waiting for the workflow',
  'wait:sleep': 'Sleeping',
  retry: 'Backing off to retry',
  recovered: 'Run lost, then recovered',
  earlier: 'Earlier (summarised)',
};

/** Whether a phase is a wait on someone or something outside the task. */
export function isWait(phase: Phase): boolean {
  return phase.startsWith('wait:');
}
