/**
 * A task's named moments: the times a timeline is drawn from, recorded in
 * the writes the task already makes (no request of their own). Creation is
 * the row's `createdAt`; then each run's claim, each hand-over (a
 * continuation, a sleep, a retry), each suspension on callbacks or a
 * workflow, each question asked, each resume (an answer, a callback, the
 * workflow, a cancel), and the end. Who answered a question for a person is
 * on the row already (`decisions`), as are the callbacks' completions.
 *
 * The list is bounded (`MAX_MOMENTS`, `limits.ts`): past it, the oldest
 * moments are folded into one `earlier` moment holding the time each phase
 * took before the first moment kept, and how many runs there were.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { KEPT_MOMENTS, MAX_MOMENTS } from './limits.ts';
import { forPersonOnly, type TaskOutcome } from './model.ts';
import type { Moment, MomentKind, Phase } from './phases.ts';
import type { ReleaseOptions } from './store-types.ts';

/** A stretch of one phase, from one moment to the next (or to now). */
export interface Span {
  phase: Phase;
  from: number;
  to: number;
  /** The moment that started it (absent: the task's creation). */
  start?: Moment;
}

/** The phase that follows a moment (`undefined` after the end). */
function phaseAfter(moment: Moment): Phase | undefined {
  switch (moment.kind) {
    case 'claim':
      return 'run';
    case 'continue':
    case 'resume':
      return 'queued';
    case 'sleep':
      return 'wait:sleep';
    case 'retry':
    case 'redelivery':
      return 'retry';
    case 'suspend':
      return moment.note === 'workflow' ? 'wait:workflow' : 'wait:callback';
    case 'ask':
      return moment.note === 'person' ? 'wait:person' : 'wait:client';
    case 'earlier':
      return undefined;
    case 'end':
      return undefined;
  }
}

/**
 * The spans between the task's creation (or its `earlier` summary) and
 * `until`: each moment starts the phase that follows it. A claim followed by
 * another claim is a run that was lost (its worker crashed or timed out) and
 * recovered by the next one: `recovered`.
 */
export function spansOf(createdAt: number, moments: readonly Moment[], until: number): Span[] {
  const spans: Span[] = [];
  let phase: Phase | undefined = 'queued';
  let from = createdAt;
  let start: Moment | undefined;
  for (const moment of moments) {
    if (moment.kind === 'earlier') {
      spans.push({ phase: 'earlier', from: moment.at, to: moment.until ?? moment.at, start: moment });
      phase = undefined;
      continue;
    }
    const lost = phase === 'run' && moment.kind === 'claim';
    if (phase !== undefined)
      spans.push({ phase: lost ? 'recovered' : phase, from, to: Math.max(from, moment.at), ...(start ? { start } : {}) });
    phase = phaseAfter(moment);
    from = moment.at;
    start = moment;
  }
  if (phase !== undefined) spans.push({ phase, from, to: Math.max(from, until), ...(start ? { start } : {}) });
  return spans;
}

/**
 * `moments` with `moment` appended; past {@link MAX_MOMENTS}, all but the
 * newest {@link KEPT_MOMENTS} are folded into one `earlier` moment (added to
 * the one there may be already), which spans from the creation to the first
 * moment kept.
 */
export function withMoment(task: { createdAt: number; moments?: readonly Moment[] }, moment: Moment): Moment[] {
  const all = [...(task.moments ?? []), moment];
  if (all.length <= MAX_MOMENTS) return all;
  const cut = all.length - KEPT_MOMENTS;
  const kept = all.slice(cut);
  const boundary = kept[0]!;
  const folded = all.slice(0, cut + 1);
  const totals: Partial<Record<Phase, number>> = {};
  let runs = 0;
  let count = 0;
  for (const span of spansOf(task.createdAt, folded, boundary.at)) {
    if (span.start?.kind === 'earlier') {
      for (const [phase, ms] of Object.entries(span.start.totals ?? {})) totals[phase as Phase] = (totals[phase as Phase] ?? 0) + ms;
      runs += span.start.runs ?? 0;
      count += span.start.folded ?? 0;
      continue;
    }
    totals[span.phase] = (totals[span.phase] ?? 0) + (span.to - span.from);
  }
  for (const earlier of all.slice(0, cut)) {
    if (earlier.kind === 'claim') runs += 1;
    if (earlier.kind !== 'earlier') count += 1;
  }
  const summary: Moment = { kind: 'earlier', at: task.createdAt, until: boundary.at, totals, runs, folded: count };
  return [summary, ...kept];
}

/** The moments after a claim: its own appended as it is, never folded (the DynamoDB claim appends without a read; the run's next write folds). */
export function claimMoments(task: { moments?: readonly Moment[] }, now: number): Moment[] {
  return [...(task.moments ?? []), { kind: 'claim', at: now }];
}

/** The moments after a resume: a wait ended (`by` an answer, a callback, the workflow, a cancel) and the task is queued. */
export function resumeMoments(task: { createdAt: number; moments?: readonly Moment[] }, now: number, by: string): Moment[] {
  return withMoment(task, { kind: 'resume', at: now, note: by });
}

/** The moment an outcome marks: the questions asked (of a person, or the client), or the end. */
export function outcomeMoment(outcome: TaskOutcome, now: number): Moment {
  if (outcome.status !== 'input_required') return { kind: 'end', at: now, note: outcome.status };
  return { kind: 'ask', at: now, note: Object.values(outcome.inputRequests).some(forPersonOnly) ? 'person' : 'client' };
}

/** The moment a release marks: why the run handed over, when (`options.at`, else `resumeAt`). */
export function releaseMoment(options: Pick<ReleaseOptions, 'why' | 'at'>, resumeAt: number): Moment {
  return { kind: options.why ?? 'continue', at: options.at ?? resumeAt };
}

/** The one-letter code of each kind in the row's strings. */
const CODES: Readonly<Record<MomentKind, string>> = {
  claim: 'c',
  continue: 'n',
  sleep: 's',
  retry: 'r',
  redelivery: 'd',
  suspend: 'w',
  ask: 'a',
  resume: 'u',
  end: 'e',
  earlier: 'E',
};
const KINDS = new Map(Object.entries(CODES).map(([kind, code]) => [code, kind as MomentKind]));

/**
 * A moment as the DynamoDB row keeps it: one short string, its kind's
 * letter, its time in base 36, and its note after a space (`cmk2x9q1l`,
 * `emk2x9q4z completed`; `earlier` with its sums), about 10 to 20 bytes.
 */
export function encodeMoment(moment: Moment): string {
  const head = `${CODES[moment.kind]}${moment.at.toString(36)}`;
  if (moment.kind === 'earlier') {
    const totals = Object.entries(moment.totals ?? {})
      .map(([phase, ms]) => `${phase}=${ms}`)
      .join(',');
    return `${head} ${(moment.until ?? moment.at).toString(36)} ${moment.runs ?? 0} ${moment.folded ?? 0} ${totals}`.trimEnd();
  }
  return moment.note === undefined ? head : `${head} ${moment.note}`;
}

/** A moment read back from {@link encodeMoment}'s form; `undefined` for anything else (a later release's kind). */
export function decodeMoment(text: string): Moment | undefined {
  const [head = '', ...rest] = text.split(' ');
  const kind = KINDS.get(head.slice(0, 1));
  const at = Number.parseInt(head.slice(1), 36);
  if (kind === undefined || !Number.isFinite(at)) return undefined;
  if (kind === 'earlier') {
    const [until = '', runs, folded, totals = ''] = rest;
    const sums: Partial<Record<Phase, number>> = {};
    for (const pair of totals.split(',').filter(Boolean)) {
      const [phase = '', ms = ''] = pair.split('=');
      if (Number.isFinite(Number(ms))) sums[phase as Phase] = Number(ms);
    }
    return { kind, at, until: Number.parseInt(until, 36), runs: Number(runs), folded: Number(folded), totals: sums };
  }
  return rest.length === 0 ? { kind, at } : { kind, at, note: rest.join(' ') };
}
