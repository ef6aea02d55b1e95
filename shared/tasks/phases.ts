/**
 * The phases of a task's life: the one vocabulary the timeline (`ops trace`,
 * the task page's picture) speaks, and that a trace's spans may share. A
 * phase is a stretch of time between two of the task's moments
 * (`moments.ts`): waiting for a worker, a run, a wait on someone or
 * something, a retry's back-off, a run lost and recovered.
 *
 * The moments a phase starts at are named here too (`Moment`): `moments.ts`
 * records and reads them.
 *
 * No AWS SDK and no Node here: the console's page script may import it.
 */

/** Every phase, in the order a legend lists them. */
const PHASES = [
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

/** What a moment marks. */
export type MomentKind =
  /** A run started (a worker took the lease). */
  | 'claim'
  /** The run handed over to a continuation. */
  | 'continue'
  /** The run handed over to a durable sleep's wake-up. */
  | 'sleep'
  /** The run asked to be retried, after a back-off. */
  | 'retry'
  /** The run failed unexpectedly and gave its message back for redelivery. */
  | 'redelivery'
  /** The run suspended on callbacks (`note`: `callback` or `workflow`). */
  | 'suspend'
  /** The run asked questions and the task waits for answers (`note`: `person` or `client`). */
  | 'ask'
  /** A wait ended and the task was queued again (`note`: `answer`, `callback`, `workflow` or `cancel`). */
  | 'resume'
  /** The task ended (`note`: its status). */
  | 'end'
  /** The oldest moments, summarised (`until`, `totals`, `runs`, `folded`). */
  | 'earlier';

/** One moment: what, when (epoch ms), and a word more for some kinds. */
export interface Moment {
  kind: MomentKind;
  at: number;
  note?: string;
  /** `earlier`: the end of what it summarises (the first moment kept). */
  until?: number;
  /** `earlier`: the time each phase took, in ms. */
  totals?: Partial<Record<Phase, number>>;
  /** `earlier`: how many runs started in it. */
  runs?: number;
  /** `earlier`: how many moments it stands for. */
  folded?: number;
}

/** Why a run handed over, as `release` records it. */
export type ReleaseReason = 'continue' | 'sleep' | 'retry' | 'redelivery';
