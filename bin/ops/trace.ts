/**
 * `mcp-tasks ops trace <taskId>`: a task's life as a waterfall in the
 * terminal, drawn from its row's timeline (`shared/tasks/timeline.ts`):
 * the phases in order, each with when it started, how long it took and its
 * share of the whole, a bar on one time axis; under a wait, who decided
 * which question and when, or what an outside system posted; the runs,
 * retries and recovered runs counted. `--json` prints the timeline itself.
 */
import { formatDuration } from '../../shared/durations.ts';
import { PHASE_WORDS, type Phase } from '../../shared/tasks/phases.ts';
import type { Timeline, TimelinePhase } from '../../shared/tasks/timeline.ts';

/** Columns of the bar. */
const BAR_WIDTH = 40;

/** `ms` as the waterfall writes it: `0ms`, `850ms`, `3s 200ms` is `3s`, `2m 5s`. */
function duration(ms: number): string {
  return formatDuration(ms, { approximate: true });
}

/** The waterfall of `timeline`, as text lines for a terminal (no colours: it is read in logs and pasted in tickets). */
export function waterfall(timeline: Timeline & { traceUrl?: string }): string {
  const lines = [heading(timeline)];
  if (timeline.traceId) lines.push(`trace ${timeline.traceId}${timeline.traceUrl ? ` (X-Ray: ${timeline.traceUrl})` : ''}`);
  if (!timeline.recorded) {
    lines.push('(written by a release that did not record moments: one phase from its creation to its last change)');
  }
  const labels = timeline.phases.map(label);
  const width = Math.max(12, ...labels.map((text) => text.length));
  lines.push(`${'phase'.padEnd(width)}  ${'start'.padStart(9)}  ${'took'.padStart(9)}  ${'share'.padStart(5)}  time →`);
  timeline.phases.forEach((phase, index) => {
    const start = `+${duration(phase.from - timeline.createdAt)}`;
    const took = `${duration(phase.ms)}${phase.open ? '…' : ''}`;
    const share = `${Math.round(phase.share * 100)}%`;
    lines.push(`${labels[index]!.padEnd(width)}  ${start.padStart(9)}  ${took.padStart(9)}  ${share.padStart(5)}  ${bar(phase, timeline)}`);
    for (const note of notes(phase, timeline)) lines.push(`${' '.repeat(2)}↳ ${note}`);
  });
  if (timeline.endedAt !== undefined) {
    lines.push(`${`end: ${timeline.status}`.padEnd(width)}  ${`+${duration(timeline.endedAt - timeline.createdAt)}`.padStart(9)}`);
  }
  return lines.join('\n');
}

function heading(timeline: Timeline): string {
  const state = timeline.endedAt === undefined ? `${timeline.status}, so far` : timeline.status;
  const counts = [
    `${timeline.runs} run${timeline.runs === 1 ? '' : 's'}`,
    `${timeline.retries} retr${timeline.retries === 1 ? 'y' : 'ies'}`,
    `${timeline.recoveries} recovered`,
  ];
  return [
    `task ${timeline.taskId} (${timeline.tool}): ${state}, ${duration(timeline.ms)} in all; ${counts.join(', ')}`,
    `created ${new Date(timeline.createdAt).toISOString()}`,
  ].join('\n');
}

/** A phase's name in the waterfall: the vocabulary's word, with the run's number. */
function label(phase: TimelinePhase): string {
  const words = PHASE_WORDS[phase.phase].toLowerCase();
  return phase.run === undefined ? words : `${words} (run ${phase.run})`;
}

/** The phase's bar on the whole's time axis: `░` before it, `█` while it lasts (at least one column). */
function bar(phase: TimelinePhase, timeline: Timeline): string {
  if (timeline.ms <= 0) return '█';
  const scale = BAR_WIDTH / timeline.ms;
  const start = Math.min(BAR_WIDTH - 1, Math.floor((phase.from - timeline.createdAt) * scale));
  const length = Math.max(1, Math.round(phase.ms * scale));
  return `${'·'.repeat(start)}${'█'.repeat(Math.min(length, BAR_WIDTH - start))}`;
}

/** What happened in a phase besides its time: who decided what and when, what was posted, what a summary holds. */
function notes(phase: TimelinePhase, timeline: Timeline): string[] {
  const at = (time: number) => `+${duration(time - timeline.createdAt)} (${new Date(time).toISOString()})`;
  const lines = (phase.answers ?? []).map(
    (answer) =>
      `"${answer.key}" decided by ${answer.name ? `${answer.name} <${answer.by}>` : answer.by} ` +
      `as ${answer.as === 'owner' ? 'the owner' : 'an approver'}, ${answer.via === 'page' ? "on the task's page" : 'in their MCP client'}, at ${at(answer.at)}`,
  );
  for (const arrival of phase.arrivals ?? []) lines.push(`${arrivalWords(arrival.id, arrival.outcome)} at ${at(arrival.at)}`);
  if (phase.phase === 'recovered') lines.push('the run was lost (its worker crashed or timed out) and the next run took the task over');
  if (phase.summary) {
    const totals = Object.entries(phase.summary.totals)
      .filter(([, ms]) => ms > 0)
      .map(([name, ms]) => `${PHASE_WORDS[name as Phase]?.toLowerCase() ?? name} ${duration(ms)}`);
    lines.push(`${phase.summary.moments} older moments summarised (${phase.summary.runs} runs): ${totals.join(', ') || 'no time'}`);
  }
  return lines;
}

function arrivalWords(id: string, outcome: string): string {
  if (id === 'workflow') return `the workflow's execution ended (${outcome})`;
  if (outcome === 'question') return 'the workflow asked a question';
  return `callback "${id}" posted ${outcome === 'error' ? 'an error' : 'its result'}`;
}
